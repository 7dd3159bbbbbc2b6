"""CROQ: the two-pass rule on toy answerers with known behaviour; evaluation and paired statistics."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from icml25.croq import (
    CROQ,
    MCQ,
    AnswerOutput,
    CPOptScorer,
    paired_bootstrap_ci,
    paired_t_test,
    revise_and_answer,
)


class Independent:
    """Scores each option on its own (value in the option text): context-independent, like the stubs of §6."""

    def answer(self, qs):
        z = np.full((len(qs), max(q.n_options for q in qs)), -np.inf)
        for i, q in enumerate(qs):
            z[i, :q.n_options] = [float(o.split(":")[1]) for o in q.options]
        return AnswerOutput(z, np.zeros((len(qs), 2)))


class Distracted(Independent):
    """Like Independent, but shown 5+ options it ranks option 'trap' first (context dependence)."""

    def answer(self, qs):
        out = super().answer(qs)
        for i, q in enumerate(qs):
            names = [o.split(":")[0] for o in q.options]
            if "trap" in names and q.n_options >= 5:
                out.letter_logits[i, names.index("trap")] = out.letter_logits[i, :q.n_options].max() + 0.3
        return out


def _questions(rng, n, with_trap):
    qs = []
    for _ in range(n):
        vals = 2.0 * rng.normal(size=6)
        ans = int(rng.integers(6))
        vals[ans] += 6.0
        names = [f"o{j}" for j in range(6)]
        trap = int(rng.integers(6))
        if with_trap and trap != ans:
            names[trap] = "trap"
            vals[trap] = vals.min() - 1.0  # on its own merits the trap is the worst option
        qs.append(MCQ("q", tuple(f"{a}:{v}" for a, v in zip(names, vals)), ans))
    return qs


def test_context_independent_answerer_gives_no_gain(global_seed: int) -> None:
    """With logit scores and an answerer that scores options independently, CROQ = standard (spec §6 stub)."""
    rng = np.random.default_rng(global_seed)
    cal, test = _questions(rng, 300, False), _questions(rng, 300, False)
    res = CROQ(Independent(), alpha=0.02).fit(None, cal).predict(test)
    assert np.array_equal(res.final_answer, res.first_answer)
    assert res.revised.any()


def test_pruning_distractors_helps_a_distractible_answerer(global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    cal, test = _questions(rng, 400, True), _questions(rng, 400, True)
    croq = CROQ(Distracted(), alpha=0.1).fit(None, cal)
    ev = croq.evaluate(test)
    assert ev["acc_croq"] > ev["acc_standard"] + 0.1
    assert ev["ci_low"] > 0 and ev["p_value"] < 0.01
    assert 0.8 < ev["coverage"] <= 1.0


def test_revise_and_answer_rules() -> None:
    qs = [MCQ("q", tuple(f"o{j}:{v}" for j, v in enumerate([0.1, 0.5, 0.2, 0.9])), 3) for _ in range(4)]
    sets = np.array([[1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 1, 0], [1, 0, 1, 0]], dtype=bool)
    first = np.array([3, 3, 3, 3])
    scores = np.array([[0.1, 0.5, 0.2, 0.9]] * 4)
    final, revised = revise_and_answer(Independent(), qs, sets, first, scores)
    assert final.tolist() == [3, 3, 2, 2]  # full: first; empty: argmax score; single: the set; {0, 2}: second pass
    assert revised.tolist() == [False, False, False, True]
    final, _ = revise_and_answer(Independent(), qs, sets, first, scores, singleton_rule="first")
    assert final[2] == 3
    with pytest.raises(ValueError, match="singleton_rule"):
        revise_and_answer(Independent(), qs, sets, first, scores, singleton_rule="x")


def test_croq_with_cpopt_and_alpha_sweep() -> None:
    rng = np.random.default_rng(0)
    train, cal, test = (_questions(rng, n, True) for n in (300, 200, 200))
    croq = CROQ(Distracted(), CPOptScorer(hidden_dims=(16,), epochs=30, alpha=0.1), alpha=0.1).fit(train, cal)
    rows = croq.alpha_sweep([0.05, 0.2], cal, test)
    assert [r["alpha"] for r in rows] == [0.05, 0.2]
    assert rows[0]["mean_set_size"] >= rows[1]["mean_set_size"]
    with pytest.raises(ValueError, match="train split"):
        CROQ(Distracted(), CPOptScorer()).fit([], cal)
    with pytest.raises(TypeError, match="scorer"):
        CROQ(Distracted(), scorer="softmax")


def test_paired_statistics_against_scipy() -> None:
    rng = np.random.default_rng(0)
    a = (rng.random(500) < 0.6).astype(float)
    b = np.where(rng.random(500) < 0.2, 1.0, a)
    assert paired_t_test(a, b) == pytest.approx(stats.ttest_rel(b, a).pvalue)
    mean, lo, hi = paired_bootstrap_ci(a, b, n_boot=3000, seed=1)
    assert mean == pytest.approx((b - a).mean())
    se = (b - a).std(ddof=1) / np.sqrt(500)
    assert lo == pytest.approx(mean - 1.96 * se, abs=0.01) and hi == pytest.approx(mean + 1.96 * se, abs=0.01)
    assert paired_t_test(a, a) == 1.0
    with pytest.raises(ValueError, match="same length"):
        paired_bootstrap_ci(a, b[:10])
