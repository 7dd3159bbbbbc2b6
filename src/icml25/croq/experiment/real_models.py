"""Experiments of the reproduction on real pretrained LLMs (SmolLM2-135M-Instruct, Gemma-3-270M): first pass,
conformal sets with the logit score or CP-OPT, revised questions, second pass, paired statistics. Kept apart from
the algorithm modules; ``real_claims.py`` turns the numbers into claims."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..answerers import AnswerOutput
from ..conformal import SplitConformal
from ..croq import CROQ, CROQResult
from ..mcq import MCQ, answer_indices, revise
from ..stats import paired_bootstrap_ci


class CachingAnswerer:
    """Wraps an answerer and remembers each question's output (key: question text and options), so that the
    revised questions shared by several alphas and scores are asked once."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.cache: dict[tuple, tuple[np.ndarray, np.ndarray | None]] = {}
        self.asked = 0

    def prompt(self, mcq: MCQ) -> str:
        """The wrapped answerer's prompt of ``mcq``."""
        return self.inner.prompt(mcq)

    def answer(self, mcqs: list[MCQ]) -> AnswerOutput:
        todo = list({(q.question, q.options): q for q in mcqs if (q.question, q.options) not in self.cache}.values())
        if todo:
            out = self.inner.answer(todo)
            self.asked += len(todo)
            for i, q in enumerate(todo):
                h = None if out.hidden is None else out.hidden[i]
                self.cache[(q.question, q.options)] = (out.letter_logits[i, :q.n_options], h)
        m = max(q.n_options for q in mcqs)
        z = np.full((len(mcqs), m), -np.inf)
        hs = []
        for i, q in enumerate(mcqs):
            zi, h = self.cache[(q.question, q.options)]
            z[i, :q.n_options] = zi
            hs.append(h)
        hidden = None if any(h is None for h in hs) else np.stack(hs)
        return AnswerOutput(z, hidden)


class StandardInference(CROQ):
    """The reproduction's stub of CROQ: the same sets, but the final answer is the first-pass answer (no revision)."""

    def predict(self, test: Any, test_pass: AnswerOutput | None = None) -> CROQResult:
        s, out = self.scores(list(test), test_pass)
        k = np.array([q.n_options for q in test])
        sets = self.conformal_.predict_sets(s, k)
        first = out.answers
        return CROQResult(first, sets, sets.sum(axis=1), first.copy(), np.zeros(len(first), dtype=bool))


def resplit_coverage(scores: np.ndarray, y: np.ndarray, n_options: np.ndarray, n_cal: int, alpha: float,
                     n_splits: int, rng: np.random.Generator) -> tuple[float, float]:
    """Mean test coverage and set size of split CP over ``n_splits`` random cal/test splits of the same questions.

    For a fixed pool of exchangeable questions the expected coverage of a random split is exactly
    ``1 - floor(alpha (n_cal + 1)) / (n_cal + 1)`` (no ties), so this checks CP on real LLM scores without more
    LLM calls.
    """
    n = len(y)
    cov, size = [], []
    for _ in range(n_splits):
        perm = rng.permutation(n)
        cal, test = perm[:n_cal], perm[n_cal:]
        cp = SplitConformal(alpha)
        cp.calibrate_from_scores(scores[cal], y[cal], n_options[cal])
        sets = cp.predict_sets(scores[test], n_options[test])
        cov.append(sets[np.arange(len(test)), y[test]].mean())
        size.append(sets.sum(axis=1).mean())
    return float(np.mean(cov)), float(np.mean(size))


def premise_accuracy(answerer: Any, test: list[MCQ], keep: int, seed: int) -> tuple[float, float]:
    """Accuracy on the original questions and on versions with ``keep`` options (truth kept, distractors dropped
    at random, original order): the paper's premise (Fig. 1) on these questions."""
    rng = np.random.default_rng([seed, 11])
    small = []
    for q in test:
        others = [j for j in range(q.n_options) if j != q.answer]
        idx = np.sort(np.concatenate([[q.answer], rng.choice(others, keep - 1, replace=False)]))
        small.append(revise(q, idx)[0])
    y_small = answer_indices(small)
    acc_small = float((answerer.answer(small).answers == y_small).mean())
    acc_full = float((answerer.answer(test).answers == answer_indices(test)).mean())
    return acc_full, acc_small


def setting_sweep(answerer: Any, train: list[MCQ], cal: list[MCQ], test: list[MCQ], alphas: tuple[float, ...],
                  cpopt_kwargs: dict[str, Any], seed: int, resplits: int, stub: bool = False) -> dict[str, Any]:
    """CROQ with the logit score and, when ``train`` is non-empty, CP-OPT at each alpha on one (model, dataset)
    setting.

    Returns per (score, alpha) the :meth:`CROQ.evaluate` dict on ``test`` plus the mean coverage / size over
    ``resplits`` random re-splits of cal + test, the paired bootstrap CI of the set-size difference, and the
    first-pass accuracy. ``stub=True``: standard inference in CROQ's place and the logit score in CP-OPT's place.
    """
    from ..cp_opt import CPOptScorer

    passes = {name: answerer.answer(qs) for name, qs in (("train", train), ("cal", cal), ("test", test)) if qs}
    pool = cal + test
    pool_pass = answerer.answer(pool)
    y_pool = answer_indices(pool)
    k_pool = np.array([q.n_options for q in pool])
    rows: list[dict[str, Any]] = []
    sizes: dict[tuple[str, float], np.ndarray] = {}
    correct: dict[tuple[str, float], np.ndarray] = {}
    y_test = answer_indices(test)
    scores = ("logits", "cpopt") if train else ("logits",)
    for name in scores:
        for a in alphas:
            scorer: Any = ("logits" if name == "logits" or stub
                           else CPOptScorer(alpha=a, random_state=seed, **cpopt_kwargs))
            croq = (StandardInference if stub else CROQ)(answerer, scorer, alpha=a).fit(
                train or None, cal, passes.get("train"), passes["cal"])
            ev = croq.evaluate(test, passes["test"], seed=seed)
            res = croq.predict(test, passes["test"])
            sizes[(name, a)] = res.set_size.astype(float)
            correct[(name, a)] = (res.final_answer == y_test).astype(float)
            s_pool, _ = croq.scores(pool, pool_pass)
            rc, rs = resplit_coverage(s_pool, y_pool, k_pool, len(cal), a, resplits,
                                      np.random.default_rng([seed, 5, int(a * 1000)]))
            rows.append({"score": name, **ev, "resplit_coverage": rc, "resplit_size": rs})
    for a in alphas if train else ():  # paired CI of the set-size difference CP-OPT - logits
        r = next(r for r in rows if r["score"] == "cpopt" and r["alpha"] == a)
        d, lo, hi = paired_bootstrap_ci(sizes[("logits", a)], sizes[("cpopt", a)], n_boot=2000, seed=seed)
        r.update({"size_diff": d, "size_diff_lo": lo, "size_diff_hi": hi})
        d3, lo3, hi3 = paired_bootstrap_ci(correct[("logits", a)], correct[("cpopt", a)], n_boot=2000, seed=seed)
        r.update({"h3_diff": d3, "h3_lo": lo3, "h3_hi": hi3})  # CROQ accuracy CP-OPT - logits, paired
    acc = float((passes["test"].answers == answer_indices(test)).mean())
    return {"rows": rows, "acc_standard": acc, "passes": passes, "pool_pass": pool_pass,
            "letter_mass": float(np.exp(np.logaddexp.reduce(passes["test"].letter_logits, axis=1)).mean())}

