"""Studies of the reproduction (spec §6), computation only: split-CP validity, CP-OPT on real LLaMA-13B scores,
CROQ mechanics checked against an independent re-implementation. Kept apart from the algorithm modules; ``stages.py``
turns the numbers into claims (the real-model sweeps are in ``real_models.py``). Imports torch (CP-OPT)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.data import resolve_data

from ..answerers import AnswerOutput
from ..conformal import SplitConformal
from ..cp_opt import CPOptScorer
from ..croq import revise_and_answer
from ..data import SHIPPED_MMLU_SUBJECTS
from ..mcq import LETTERS, MCQ

_PROBS_URL = "https://github.com/bhaweshiitk/ConformalLLM"


# ---------------------------------------------------------------- Q1: split-CP validity on synthetic scores
def split_cp_coverage(alpha: float, n_cal: int, n_test: int, n_splits: int, n_options: int,
                      rng: np.random.Generator) -> dict[str, float]:
    """Mean test coverage and set size of split CP over random splits of Dirichlet scores (labels drawn from them)."""
    cov, size = [], []
    for _ in range(n_splits):
        p = rng.dirichlet(np.full(n_options, 0.5), size=n_cal + n_test)
        y = (p.cumsum(axis=1) > rng.random((n_cal + n_test, 1))).argmax(axis=1)
        cp = SplitConformal(alpha)
        cp.calibrate(p[np.arange(n_cal), y[:n_cal]])
        sets = cp.predict_sets(p[n_cal:])
        cov.append(sets[np.arange(n_test), y[n_cal:]].mean())
        size.append(sets.sum(axis=1).mean())
    return {"alpha": alpha, "coverage": float(np.mean(cov)), "coverage_sd": float(np.std(cov)),
            "mean_set_size": float(np.mean(size))}


# ---------------------------------------------------------------- Q2/F6: CP-OPT on real LLaMA-13B MMLU scores
def load_llama_probs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LLaMA-13B option probabilities: ``probs (n, 10 prompts, 4)``, ``targets (n,)``, ``subject (n,)`` ids."""
    ps, ts, ss = [], [], []
    for i, s in enumerate(SHIPPED_MMLU_SUBJECTS):
        p = np.load(resolve_data("croq", f"llama13b_mmlu_probs/{s}_scores.npy", url=_PROBS_URL))
        t = np.load(resolve_data("croq", f"llama13b_mmlu_probs/{s}_targets.npy", url=_PROBS_URL))
        ps.append(np.transpose(p, (1, 0, 2)))
        ts.append(t.astype(int))
        ss.append(np.full(len(t), i))
    return np.concatenate(ps), np.concatenate(ts), np.concatenate(ss)


def _stratified_split(subject: np.ndarray, fracs: tuple[float, ...], rng: np.random.Generator) -> list[np.ndarray]:
    parts: list[list[int]] = [[] for _ in fracs]
    for s in np.unique(subject):
        idx = rng.permutation(np.flatnonzero(subject == s))
        cuts = np.round(np.cumsum(fracs)[:-1] * len(idx)).astype(int)
        for j, chunk in enumerate(np.split(idx, cuts)):
            parts[j].extend(chunk.tolist())
    return [np.sort(np.asarray(p)) for p in parts]


def _set_stats(scores: np.ndarray, y: np.ndarray, cal: np.ndarray, test: np.ndarray, alpha: float) -> tuple:
    cp = SplitConformal(alpha)
    cp.calibrate_from_scores(scores[cal], y[cal])
    sets = cp.predict_sets(scores[test])
    return float(sets[np.arange(len(test)), y[test]].mean()), float(sets.sum(axis=1).mean())


def real_score_h1(alphas: tuple[float, ...], n_splits: int, epochs: int, hidden: tuple[int, ...],
                  seed: int, stub: bool = False) -> list[dict[str, Any]]:
    """H1 on real scores: per split and alpha, coverage / mean set size of prompt-0, mean-prob and CP-OPT scores.

    ``stub=True`` (the reproduction's stub) puts the mean-probability baseline score in CP-OPT's place.
    """
    probs, y, subj = load_llama_probs()
    n = len(y)
    feats = np.concatenate([np.log(np.clip(probs, 1e-12, None)).reshape(n, -1),
                            np.eye(len(SHIPPED_MMLU_SUBJECTS))[subj]], axis=1)
    scores = {"prompt0": probs[:, 0, :], "mean_prob": probs.mean(axis=1)}
    rows = []
    for split in range(n_splits):
        rng = np.random.default_rng([seed, split])
        tr, cal, te = _stratified_split(subj, (0.5, 0.25, 0.25), rng)
        for a in alphas:
            row: dict[str, Any] = {"split": split, "alpha": a}
            for name, s in scores.items():
                row[f"{name}_coverage"], row[f"{name}_size"] = _set_stats(s, y, cal, te, a)
            if stub:
                s_opt = scores["mean_prob"]
            else:
                scorer = CPOptScorer(hidden_dims=hidden, activation="tanh", beta=10.0, lam=10.0, lam_ce=1.0,
                                     lam_l2=1e-4, alpha=a, epochs=epochs, lr=1e-3, random_state=seed * 1000 + split,
                                     standardize=False)
                scorer.fit(feats[tr], y[tr], n_options=np.full(len(tr), 4))
                s_opt = scorer.option_scores(feats, np.full(n, 4))
            row["cpopt_coverage"], row["cpopt_size"] = _set_stats(s_opt, y, cal, te, a)
            rows.append(row)
    return rows


# ---------------------------------------------------------------- Q3: CROQ mechanics
class RecordingAnswerer:
    """Wraps an answerer and records every batch it is asked (to inspect CROQ's second pass)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[list[MCQ]] = []

    def answer(self, mcqs: list[MCQ]) -> AnswerOutput:
        self.calls.append(list(mcqs))
        return self.inner.answer(mcqs)


def croq_mechanics(reader: Any, test: list[MCQ], first: AnswerOutput, scores: np.ndarray,
                   sets: np.ndarray, n_single: int = 8, single_reader: Any = None) -> dict[str, Any]:
    """Check CROQ's second pass against an independent re-implementation on the given sets (spec §6 Q3).

    ``reader`` needs ``answer`` and ``prompt`` (an :class:`~icml25.croq.LLMAnswerer`, default option format
    ``"{letter}. {text}"``); batched vs one-by-one answers are compared on the first ``n_single`` revised questions
    (one-by-one with ``single_reader`` when given, e.g. the uncached answerer behind a cache).
    """
    rec = RecordingAnswerer(reader)
    final, revised = revise_and_answer(rec, test, sets, first.answers, scores, "set")
    sizes = sets.sum(axis=1)
    k = np.array([q.n_options for q in test])
    expect_revised = (sizes >= 2) & (sizes < k)
    asked = rec.calls[0] if rec.calls else []
    rows = np.flatnonzero(expect_revised)
    prompts_ok = len(asked) == len(rows)
    for q_rev, i in zip(asked, rows):
        kept = [test[i].options[j] for j in range(k[i]) if sets[i, j]]
        expected = "\n".join(f"{LETTERS[j]}. {t}" for j, t in enumerate(kept))  # original order, letters A, B, ...
        got = reader.prompt(q_rev)
        prompts_ok &= list(q_rev.options) == kept and expected in got
    mapping_ok, batch_ok = True, True
    if len(asked):
        batched = reader.answer(asked)
        for r, (q_rev, i) in enumerate(zip(asked, rows)):
            mapping_ok &= test[i].options[final[i]] == q_rev.options[int(batched.answers[r])]
        for r, q_rev in enumerate(asked[:n_single]):
            single = (single_reader or reader).answer([q_rev])
            batch_ok &= int(np.argmax(single.letter_logits[0])) == int(batched.answers[r])
            batch_ok &= bool(np.allclose(single.letter_logits[0, :q_rev.n_options],
                                         batched.letter_logits[r, :q_rev.n_options], atol=1e-4))
    rules_ok = bool(np.array_equal(revised, expect_revised))
    full, single_, empty = sizes == k, sizes == 1, sizes == 0
    rules_ok &= bool(np.all(final[full] == first.answers[full]))
    rules_ok &= bool(np.all(final[single_] == sets[single_].argmax(axis=1)))
    rules_ok &= bool(np.all(final[empty] == scores[empty].argmax(axis=1)))
    return {"prompts_ok": bool(prompts_ok), "mapping_ok": bool(mapping_ok), "rules_ok": rules_ok,
            "batch_ok": bool(batch_ok), "n_revised": int(expect_revised.sum()), "n_full": int(full.sum()),
            "n_single": int(single_.sum()), "n_empty": int(empty.sum()), "n": len(test)}
