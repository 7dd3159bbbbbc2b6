"""CROQ: conformal revision of questions (spec §2.3).

First pass: the answerer scores the original question; a conformal set keeps the plausible options. Second pass:
the question is rewritten with only the set's options (original relative order, consecutive letters) and the
answerer is asked again; its answer, mapped back to the original option, is CROQ's answer.
Rules: ``|C| = m`` -> first answer (no revision); ``|C| = 0`` -> argmax of the score; ``|C| = 1`` -> the single
option (``singleton_rule="set"``) or the first answer (``"first"``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_fitted, check_int, check_option

from .answerers import Answerer, AnswerOutput
from .conformal import SplitConformal
from .mcq import MCQ, answer_indices, revise
from .stats import paired_bootstrap_ci, paired_t_test

__all__ = ["CROQ", "CROQResult", "revise_and_answer", "answer_features"]


@dataclass
class CROQResult:
    """Per-question outcome of CROQ.

    Attributes
    ----------
    first_answer : ndarray of int, shape (n,)
        Standard inference (argmax of the first-pass letter logits).
    sets : ndarray of bool, shape (n, m)
        Conformal prediction sets.
    set_size : ndarray of int, shape (n,)
    final_answer : ndarray of int, shape (n,)
        CROQ's answer (original option index).
    revised : ndarray of bool, shape (n,)
        Whether the second LLM pass ran (``2 <= |C| < m``).
    """

    first_answer: np.ndarray
    sets: np.ndarray
    set_size: np.ndarray
    final_answer: np.ndarray
    revised: np.ndarray


def answer_features(out: AnswerOutput) -> np.ndarray:
    """CP-OPT input features: hidden state (when present) concatenated with the letter logits.

    Padded (``-inf``) letter slots become 0; a row's logits are shifted so that their maximum is 0.

    Returns
    -------
    ndarray, shape (n, d + m)
    """
    z = out.letter_logits.copy()
    finite = np.isfinite(z)
    z = z - np.where(finite, z, -np.inf).max(axis=1, keepdims=True)
    z[~finite] = 0.0
    return z if out.hidden is None else np.concatenate([out.hidden, z], axis=1)


def revise_and_answer(answerer: Answerer, mcqs: Sequence[MCQ], sets: np.ndarray, first_answer: np.ndarray,
                      scores: np.ndarray, singleton_rule: str = "set") -> tuple[np.ndarray, np.ndarray]:
    """CROQ's second pass (§2.3 steps 3-4), batched over every question that needs a revision.

    Parameters
    ----------
    answerer : Answerer
    mcqs : list of MCQ, length n
    sets : ndarray of bool, shape (n, m)
    first_answer : ndarray of int, shape (n,)
    scores : ndarray, shape (n, m)
        Conformity scores (used for empty sets).
    singleton_rule : {"set", "first"}

    Returns
    -------
    final_answer : ndarray of int, shape (n,)
    revised : ndarray of bool, shape (n,)
    """
    check_option(singleton_rule, "singleton_rule", ("set", "first"))
    if not hasattr(answerer, "answer"):
        raise TypeError(f"answerer must have an answer(mcqs) method, got {type(answerer).__name__}")
    mcqs = _check_mcqs(mcqs, "mcqs")
    n = len(mcqs)
    m = max(q.n_options for q in mcqs)
    if isinstance(sets, (str, bytes)) or np.asarray(sets).dtype != bool:
        raise TypeError(f"sets must be a boolean array (n, m), got {sets!r:.60}")
    sets = np.asarray(sets)
    if sets.ndim != 2 or sets.shape[0] != n or sets.shape[1] < m:
        raise ValueError(f"sets must have shape ({n}, >= {m}), got {sets.shape}")
    first_answer = check_array(first_answer, "first_answer", shape=(n,), dtype=int)
    scores = check_array(scores, "scores", ndim=2, finite=False)
    if scores.shape[0] != n or scores.shape[1] < m:
        raise ValueError(f"scores must have shape ({n}, >= {m}), got {scores.shape}")
    valid = np.arange(scores.shape[1])[None, :] < np.array([q.n_options for q in mcqs])[:, None]
    if not np.isfinite(scores[valid]).all():
        raise ValueError("scores must be finite in valid option slots, found NaN or inf")
    final = np.asarray(first_answer, dtype=int).copy()
    revised = np.zeros(n, dtype=bool)
    todo: list[MCQ] = []
    maps: list[np.ndarray] = []
    rows: list[int] = []
    for i, q in enumerate(mcqs):
        keep = sets[i, :q.n_options]
        size = int(keep.sum())
        if size == q.n_options:
            continue  # full set: no revision
        if size == 0:
            final[i] = int(np.argmax(scores[i, :q.n_options]))
        elif size == 1:
            if singleton_rule == "set":
                final[i] = int(np.flatnonzero(keep)[0])
        else:
            rq, idx = revise(q, keep)
            todo.append(rq)
            maps.append(idx)
            rows.append(i)
    if todo:
        second = answerer.answer(todo).answers
        for r, idx, a in zip(rows, maps, second):
            final[r] = int(idx[int(a)])
            revised[r] = True
    return final, revised


class CROQ:
    """Conformal revision of questions from the 'Prune 'n Predict' (CROQ, ICML 2025) paper, §2.3-2.4.

    Parameters
    ----------
    answerer : Answerer
        The LLM (first and second pass).
    scorer : "logits" or CPOptScorer
        ``"logits"``: the softmax of the letter logits; otherwise a CP-OPT scorer trained in :meth:`fit` on
        :func:`answer_features` of the first pass (any object with ``fit(X, y, n_options=...)`` and
        ``option_scores(X, n_options)``, as :class:`CPOptScorer`).
    alpha : float
        Target miscoverage of the conformal sets.
    singleton_rule : {"set", "first"}
        Answer for ``|C| = 1``.

    Attributes
    ----------
    conformal_ : SplitConformal
        Calibrated on the calibration split (never on CP-OPT's training split).

    Examples
    --------
    >>> import numpy as np
    >>> from icml25.croq import MCQ, AnswerOutput
    >>> class Toy:  # prefers the last option, perfectly calibrated on nothing in particular
    ...     def answer(self, qs):
    ...         z = np.full((len(qs), max(q.n_options for q in qs)), -np.inf)
    ...         for i, q in enumerate(qs):
    ...             z[i, :q.n_options] = np.arange(q.n_options, dtype=float)
    ...         return AnswerOutput(z)
    >>> qs = [MCQ("q", ("a", "b", "c", "d"), 3) for _ in range(20)]
    >>> croq = CROQ(Toy(), alpha=0.2).fit(None, qs)
    >>> float(croq.evaluate(qs)["acc_croq"])
    1.0
    """

    def __init__(self, answerer: Answerer, scorer: Any = "logits", alpha: float = 0.1,
                 singleton_rule: str = "set") -> None:
        if not hasattr(answerer, "answer"):
            raise TypeError(f"answerer must have an answer(mcqs) method, got {type(answerer).__name__}")
        if not ((isinstance(scorer, str) and scorer == "logits") or (hasattr(scorer, "fit")
                                                                    and hasattr(scorer, "option_scores"))):
            raise TypeError(f"scorer must be 'logits' or an estimator with fit/option_scores, got {scorer!r}")
        check_option(singleton_rule, "singleton_rule", ("set", "first"))
        self.answerer = answerer
        self.scorer = scorer
        self.alpha = SplitConformal(alpha).alpha
        self.singleton_rule = singleton_rule

    def scores(self, mcqs: Sequence[MCQ], first_pass: AnswerOutput | None = None) -> tuple[np.ndarray, AnswerOutput]:
        """Conformity scores ``(n, m)`` of every option of the original questions, and the first pass."""
        mcqs = _check_mcqs(mcqs, "mcqs")
        out = first_pass if first_pass is not None else self.answerer.answer(list(mcqs))
        if not isinstance(out, AnswerOutput) or out.letter_logits.shape[0] != len(mcqs):
            raise ValueError(f"first_pass must be the AnswerOutput of these {len(mcqs)} questions")
        if self._logits:
            return out.probabilities(), out
        k = np.array([q.n_options for q in mcqs])
        return self.scorer.option_scores(answer_features(out), k), out

    def fit(self, train: Sequence[MCQ] | None, cal: Sequence[MCQ], train_pass: AnswerOutput | None = None,
            cal_pass: AnswerOutput | None = None) -> CROQ:
        """Train the learned score on ``train`` (skipped for ``"logits"``) and calibrate on ``cal``.

        ``train`` and ``cal`` must be disjoint (no question in both): calibrating on questions the score was trained
        on breaks the coverage guarantee (spec §2.4).
        """
        cal = _check_mcqs(cal, "cal")
        if train is not None and len(train):
            train = _check_mcqs(train, "train")
            shared = set(train) & set(cal)
            if shared:
                raise ValueError(f"train and cal must be disjoint, but {len(shared)} question(s) are in both (e.g. "
                                 f"{next(iter(shared)).question!r:.60}); calibrating on training questions breaks "
                                 "the coverage guarantee")
        if not self._logits:
            if not train:
                raise ValueError("a learned scorer needs a non-empty train split (disjoint from cal)")
            out = train_pass if train_pass is not None else self.answerer.answer(list(train))
            self.scorer.fit(answer_features(out), answer_indices(train),
                            n_options=np.array([q.n_options for q in train]))
        return self.calibrate(cal, cal_pass)

    def calibrate(self, cal: Sequence[MCQ], cal_pass: AnswerOutput | None = None,
                  alpha: float | None = None) -> CROQ:
        """(Re)compute the conformal threshold on ``cal``, at ``alpha`` when given (else ``self.alpha``).

        ``self.alpha`` is never changed: the fitted ``conformal_`` carries the level actually used
        (``conformal_.alpha``, reported by :meth:`evaluate`).
        """
        level = self.alpha if alpha is None else SplitConformal(alpha).alpha
        cal = _check_mcqs(cal, "cal")
        s, _ = self.scores(cal, cal_pass)
        self.conformal_ = SplitConformal(level)
        self.conformal_.calibrate_from_scores(s, answer_indices(cal), np.array([q.n_options for q in cal]))
        return self

    def predict(self, test: Sequence[MCQ], test_pass: AnswerOutput | None = None) -> CROQResult:
        """Run CROQ on ``test``: first pass, conformal sets, batched second pass on revised questions."""
        check_fitted(self, "conformal_")
        test = _check_mcqs(test, "test")
        s, out = self.scores(test, test_pass)
        k = np.array([q.n_options for q in test])
        sets = self.conformal_.predict_sets(s, k)
        first = out.answers
        final, revised = revise_and_answer(self.answerer, test, sets, first, s, self.singleton_rule)
        return CROQResult(first, sets, sets.sum(axis=1), final, revised)

    def evaluate(self, test: Sequence[MCQ], test_pass: AnswerOutput | None = None, n_boot: int = 2000,
                 seed: int = 0) -> dict[str, Any]:
        """Standard vs CROQ accuracy on the same questions, coverage, set sizes and paired tests.

        Returns
        -------
        dict
            ``acc_standard, acc_croq, gain, ci_low, ci_high`` (paired bootstrap 95 %), ``p_value`` (paired t-test),
            ``coverage, mean_set_size, frac_empty, frac_full, frac_revised, alpha``.
        """
        n_boot = check_int(n_boot, "n_boot", low=1)
        seed = check_int(seed, "seed", low=0)
        test = _check_mcqs(test, "test")
        y = answer_indices(test)
        res = self.predict(test, test_pass)
        a = (res.first_answer == y).astype(float)
        b = (res.final_answer == y).astype(float)
        gain, lo, hi = paired_bootstrap_ci(a, b, n_boot=n_boot, seed=seed)
        k = np.array([q.n_options for q in test])
        return {"alpha": self.conformal_.alpha, "acc_standard": float(a.mean()), "acc_croq": float(b.mean()), "gain": gain,
                "ci_low": lo, "ci_high": hi, "p_value": paired_t_test(a, b),
                "coverage": float(res.sets[np.arange(len(y)), y].mean()),
                "mean_set_size": float(res.set_size.mean()), "frac_empty": float((res.set_size == 0).mean()),
                "frac_full": float((res.set_size == k).mean()), "frac_revised": float(res.revised.mean())}

    def alpha_sweep(self, alphas: Sequence[float], cal: Sequence[MCQ], test: Sequence[MCQ],
                    cal_pass: AnswerOutput | None = None, test_pass: AnswerOutput | None = None,
                    **kwargs: Any) -> list[dict[str, Any]]:
        """:meth:`evaluate` at each ``alpha`` (recalibrating on ``cal`` each time); one dict per alpha.

        Works on a copy: ``self`` (its ``alpha`` and fitted ``conformal_``) is left unchanged.
        """
        if isinstance(alphas, (str, bytes)):
            raise TypeError(f"alphas must be a sequence of levels in (0, 1), got {alphas!r}")
        levels = [SplitConformal(a).alpha for a in check_array(alphas, "alphas", ndim=1)]
        cal, test = _check_mcqs(cal, "cal"), _check_mcqs(test, "test")
        cal_pass = cal_pass if cal_pass is not None else self.answerer.answer(list(cal))
        test_pass = test_pass if test_pass is not None else self.answerer.answer(list(test))
        work = copy.copy(self)
        rows = []
        for a in levels:
            work.calibrate(cal, cal_pass, alpha=a)
            rows.append(work.evaluate(test, test_pass, **kwargs))
        return rows

    @property
    def _logits(self) -> bool:
        return isinstance(self.scorer, str) and self.scorer == "logits"


def _check_mcqs(mcqs: Any, name: str) -> list[MCQ]:
    """A non-empty sequence of :class:`MCQ` (as a list), raising errors that name ``name``."""
    if isinstance(mcqs, (str, bytes, MCQ)) or not hasattr(mcqs, "__iter__"):
        raise TypeError(f"{name} must be a sequence of MCQ, got {type(mcqs).__name__}")
    out = list(mcqs)
    if not out:
        raise ValueError(f"{name} must contain at least one question")
    bad = next((i for i, q in enumerate(out) if not isinstance(q, MCQ)), None)
    if bad is not None:
        raise TypeError(f"{name}[{bad}] must be an MCQ, got {type(out[bad]).__name__}")
    return out
