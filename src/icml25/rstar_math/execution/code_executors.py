"""Code executors (spec §2.2, §5): the executor protocol and the AST-whitelisted arithmetic executor.

Every executor maps a code string to an :class:`ExecResult` (captured stdout, an error string
``"{ExceptionType}: {message}"`` or None, and a timed-out flag). The observation shown to the search is the
stdout or the error string; a step whose observation contains "error" counts as a code error.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["ExecResult", "CodeExecutor", "SafeArithExecutor", "accumulated_code"]


@dataclass(frozen=True)
class ExecResult:
    """Result of running one piece of code.

    Attributes
    ----------
    stdout : str
        Captured standard output (stripped of trailing whitespace).
    error : str or None
        ``"{ExceptionType}: {message}"`` if the code raised, else None.
    timed_out : bool
        True when the code was killed by the wall-clock limit.
    """

    stdout: str = ""
    error: str | None = None
    timed_out: bool = False

    @property
    def observation(self) -> str:
        """What the search sees: the error string if any, else stdout."""
        if self.timed_out:
            return self.error or "TimeoutError: execution timed out"
        return self.error if self.error is not None else self.stdout

    @property
    def is_error(self) -> bool:
        """Official rule: the observation contains "error" (case-insensitive)."""
        return "error" in self.observation.lower()


@runtime_checkable
class CodeExecutor(Protocol):
    """Protocol of a code executor: ``run(code) -> ExecResult``."""

    def run(self, code: str) -> ExecResult:
        """Execute ``code`` in a fresh namespace and report stdout / error / timeout."""
        ...


_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Div, ast.Mod, ast.Pow)
#: nodes allowed as they are (an Assign's targets are checked separately)
_PLAIN = (ast.Module, ast.Load, ast.Store, ast.Expr, ast.Assign, ast.Name, ast.UAdd, ast.USub, ast.UnaryOp, *_BINOPS)


class SafeArithExecutor:
    """AST-whitelisted arithmetic executor for the synthetic StepArith domain (spec §5).

    Allowed: assignments to names, ``+ - * // / % **`` (``**`` with exponent <= ``max_exponent``), unary ``-``,
    names, int/float constants and ``print(...)`` calls. Everything else (imports, attributes, loops, calls other
    than print) is a ``DisallowedError``. Runs in-process with empty builtins; deterministic and fast. Values are
    capped at ``max_abs`` (``OverflowError``) so no program can allocate huge integers.

    Parameters
    ----------
    allow_float : bool
        Allow ``/`` and float constants (GSM8K-style code); the synthetic domain uses integers only.
    max_abs : float
        Largest absolute value any intermediate result may take.
    max_exponent : int
        Largest exponent of ``**``.
    """

    def __init__(self, allow_float: bool = True, max_abs: float = 1e15, max_exponent: int = 12) -> None:
        from icml25.core.validation import check_int, check_positive

        self.allow_float = bool(allow_float)
        self.max_abs = check_positive(max_abs, "max_abs")
        self.max_exponent = check_int(max_exponent, "max_exponent", low=1)

    def _check(self, tree: ast.Module) -> str | None:
        """The first disallowed node in ``ast.walk`` order, else the first assignment to a non-name, else None
        (one walk: the assignment rule is only reported when no node is disallowed)."""
        target = None
        for node in ast.walk(tree):
            if isinstance(node, _PLAIN):
                if target is None and isinstance(node, ast.Assign) and not all(isinstance(t, ast.Name)
                                                                               for t in node.targets):
                    target = "assignment target"
                continue
            if isinstance(node, ast.BinOp):
                if not isinstance(node.op, _BINOPS):
                    return f"operator {type(node.op).__name__}"
                if isinstance(node.op, ast.Div) and not self.allow_float:
                    return "operator Div"
                continue
            if isinstance(node, ast.Constant):
                if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                    return f"constant {node.value!r}"
                if isinstance(node.value, float) and not self.allow_float:
                    return "float constant"
                continue
            if isinstance(node, ast.Call):
                if not (isinstance(node.func, ast.Name) and node.func.id == "print") or node.keywords:
                    return "call other than print"
                continue
            return f"node {type(node).__name__}"
        return target

    def _eval(self, node: ast.AST, env: dict[str, float]) -> float:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise NameError(f"name '{node.id}' is not defined")
            return env[node.id]
        if isinstance(node, ast.UnaryOp):
            v = self._eval(node.operand, env)
            return -v if isinstance(node.op, ast.USub) else +v
        if isinstance(node, ast.BinOp):
            a, b = self._eval(node.left, env), self._eval(node.right, env)
            op = node.op
            if isinstance(op, ast.Add):
                r = a + b
            elif isinstance(op, ast.Sub):
                r = a - b
            elif isinstance(op, ast.Mult):
                r = a * b
            elif isinstance(op, ast.FloorDiv):
                r = a // b
            elif isinstance(op, ast.Div):
                r = a / b
            elif isinstance(op, ast.Mod):
                r = a % b
            else:
                if abs(b) > self.max_exponent:
                    raise OverflowError(f"exponent {b} exceeds {self.max_exponent}")
                r = a ** b
            if isinstance(r, complex) or abs(r) > self.max_abs:
                raise OverflowError("result out of range")
            return r
        raise TypeError(f"cannot evaluate {type(node).__name__}")

    def run(self, code: str) -> ExecResult:
        """Execute ``code``; see the class docstring for what is allowed."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        try:
            tree = ast.parse(code)
        except SyntaxError as e:
            return ExecResult(error=f"SyntaxError: {e.msg}")
        bad = self._check(tree)
        if bad is not None:
            return ExecResult(error=f"DisallowedError: {bad} is not allowed")
        env: dict[str, float] = {}
        out: list[str] = []
        try:
            for stmt in tree.body:
                if isinstance(stmt, ast.Assign):
                    v = self._eval(stmt.value, env)
                    for t in stmt.targets:
                        env[t.id] = v  # type: ignore[attr-defined]
                elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                    out.append(" ".join(_fmt(self._eval(a, env)) for a in stmt.value.args))
                else:
                    self._eval(stmt.value, env)  # type: ignore[attr-defined]
        except Exception as e:  # noqa: BLE001 - every exception of user code is an observation
            return ExecResult(stdout="\n".join(out), error=f"{type(e).__name__}: {e}")
        return ExecResult(stdout="\n".join(out).rstrip())


def _fmt(v: float) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v)) if abs(v) >= 1 or v == 0 else repr(v)
    return str(v)


def accumulated_code(path_codes: Sequence[tuple[str, bool, bool]]) -> str:
    """Official accumulated-code rule (spec §2.2) for the last step of a root-to-node path.

    Parameters
    ----------
    path_codes : sequence of (code, closes_block, timed_out)
        One entry per step from the first step to the current one (the current one last): its code, whether
        its text closes a code block (contains ``<end_of_code>``/``<end_of_output>``) and whether its own
        execution timed out.

    Returns
    -------
    str
        The code of all ancestors inside the current ``<code>`` block (walking up until a block-closing
        ancestor, skipping timed-out ancestors) followed by the current step's code.
    """
    if not path_codes:
        raise ValueError("path_codes must hold at least the current step")
    parts = [path_codes[-1][0]]
    for code, closes, timed_out in reversed(path_codes[:-1]):
        if closes:
            break
        if timed_out:
            continue
        parts.append(code)
    return "\n".join(p for p in reversed(parts) if p)
