"""The abstract's 7.8x as the paper measures it (issue 50): WireMask-EA with the official loop masks, its run time
estimated from a sample of the genotypes it evaluated, and the ratio to EGPlace's run time at the same budget."""

from __future__ import annotations

import math

import numpy as np
import pytest

from icml25.core import Report, Scale
from icml25.egplace import Canvas, EGPlace, GreedyDecoder, WireMaskEA, synthetic_netlist
from icml25.egplace import experiment as ex
from icml25.egplace.reproduce import Config


@pytest.fixture(scope="module")
def dec():
    nl = synthetic_netlist(20, 0.35, seed=3)
    return GreedyDecoder(nl, Canvas(16, nl.size))


def test_decode_loop_equals_decode(dec) -> None:
    """The official loop masks give the same layout (cells, HPWL, feasibility) as the fast ones, with no cache."""
    tight = synthetic_netlist(12, 0.6, seed=1)
    small = GreedyDecoder(tight, Canvas(6, tight.size))  # coarse grid: some genotypes are infeasible
    feasible = set()
    for d in (dec, small):
        for k in range(6):
            g = d.random_guides(k)
            a, b = d.decode_loop(g), d.decode(g)
            assert np.array_equal(a.cells, b.cells) and a.feasible == b.feasible and a.hpwl == b.hpwl
            assert a.states is None and np.array_equal(a.guides, g)
            feasible.add(a.feasible)
    assert feasible == {True, False}


def test_loop_wiremask_ea_has_the_same_trajectory(dec, monkeypatch) -> None:
    """Same seed: the loop-mask WireMask-EA evaluates the same genotypes and reaches the same HPWLs, one after the
    other, as the vectorised one; and it does decode with the loop masks (every evaluation)."""
    calls = {"loop": 0}
    loop = dec.decode_loop

    def counting(guides):  # type: ignore[no-untyped-def]
        calls["loop"] += 1
        return loop(guides)

    vec = WireMaskEA(dec, init_round=3, random_state=5).run(budget_evals=40, record_guides=True)
    monkeypatch.setattr(dec, "decode_loop", counting)
    lp = WireMaskEA(dec, init_round=3, random_state=5, masks="loop").run(budget_evals=40, record_guides=True)
    assert calls["loop"] == 40
    assert vec.guides.shape == lp.guides.shape == (40, dec.netlist.n_macros, 2)
    assert np.array_equal(vec.guides, lp.guides)
    assert [h[1:] for h in vec.history] == [h[1:] for h in lp.history]
    assert len({h[2] for h in vec.history}) > 2, "the search improved several times (the check is not vacuous)"
    assert np.array_equal(vec.layout.cells, lp.layout.cells) and vec.hpwl == lp.hpwl
    assert lp.cpu_seconds > 0 and vec.cpu_seconds > 0


def test_masks_option_is_validated(dec) -> None:
    with pytest.raises(ValueError, match="masks"):
        WireMaskEA(dec, masks="fast")
    with pytest.raises(TypeError, match="masks"):
        WireMaskEA(dec, masks=1)
    assert WireMaskEA(dec).masks == "vectorised"


def test_record_guides_is_what_was_evaluated(dec) -> None:
    """Row t of ``guides`` is the genotype of evaluation t: re-decoding the rows replays the best-HPWL history."""
    res = EGPlace(dec, init_round=3, random_state=1).run(budget_evals=15, record_guides=True)
    assert res.guides.dtype == np.int32 and len(res.guides) == res.n_evals == 15
    best = np.minimum.accumulate([dec.decode(g, cache=False).hpwl for g in res.guides])
    assert np.allclose(best, [h[2] for h in res.history], rtol=1e-12)
    assert EGPlace(dec, init_round=3, random_state=1).run(budget_evals=4).guides is None


def test_sample_indices() -> None:
    idx = ex.sample_indices(50, 10, 7)
    assert len(idx) == 10 == len(set(idx.tolist())) and list(idx) == sorted(idx) and 0 <= idx.min() <= idx.max() < 50
    assert np.array_equal(idx, ex.sample_indices(50, 10, 7)) and not np.array_equal(idx, ex.sample_indices(50, 10, 8))
    assert np.array_equal(ex.sample_indices(4, 10, 0), np.arange(4))  # more asked than there are: all of them
    freq = np.zeros(10)
    for s in range(3000):
        freq[ex.sample_indices(10, 3, s)] += 1
    assert np.allclose(freq / 3000, 0.3, atol=0.04), "every evaluation is equally likely to be sampled"
    with pytest.raises(ValueError, match="k"):
        ex.sample_indices(5, 0, 0)


def test_estimate_total_from_hand_made_timings() -> None:
    """[1, 2, 3] s sampled out of 10 evaluations: total 10 x 2 = 20 s, se 10 x 1/√3 x √(1 − 3/10)."""
    total, se = ex.estimate_total([1.0, 2.0, 3.0], 10)
    assert total == pytest.approx(20.0) and se == pytest.approx(10 / math.sqrt(3) * math.sqrt(0.7))
    assert ex.estimate_total([1.0, 2.0, 3.0], 3) == (pytest.approx(6.0), 0.0)  # the whole run: exact
    total, se = ex.estimate_total([0.5], 8)
    assert total == pytest.approx(4.0) and math.isnan(se)
    with pytest.raises(ValueError, match="n_total"):
        ex.estimate_total([1.0, 2.0, 3.0], 2)
    with pytest.raises(ValueError, match="sample_seconds"):
        ex.estimate_total([1.0, -2.0], 5)


def test_estimate_is_unbiased_and_its_se_is_right() -> None:
    """Over many samples of a skewed population the estimate averages to the true total and scatters by its se."""
    pop = np.random.default_rng(0).gamma(2.0, 0.1, size=200)
    est, ses = [], []
    for s in range(2000):
        total, se = ex.estimate_total(pop[ex.sample_indices(200, 10, s)], 200)
        est.append(total)
        ses.append(se)
    assert np.mean(est) == pytest.approx(pop.sum(), rel=0.01)
    assert np.std(est) == pytest.approx(np.sqrt(np.mean(np.square(ses))), rel=0.1)


def test_ratio_estimate_from_hand_made_timings() -> None:
    """Loop [2, 4, 9] s vs vectorised [1, 1, 3] s, 3 of 10 evaluations: ratio 15/5 = 3; d = [-1, 1, 0], s_d = 1,
    se = √(0.7/3) x 1 / (5/3)."""
    r, se = ex.ratio_estimate([2.0, 4.0, 9.0], [1.0, 1.0, 3.0], 10)
    assert r == pytest.approx(3.0) and se == pytest.approx(math.sqrt(0.7 / 3) / (5 / 3))
    assert ex.ratio_estimate([2.0, 4.0], [1.0, 1.0], 2) == (pytest.approx(3.0), 0.0)
    assert math.isnan(ex.ratio_estimate([2.0], [1.0], 5)[1])
    with pytest.raises(ValueError, match="paired"):
        ex.ratio_estimate([1.0, 2.0], [1.0], 5)
    with pytest.raises(ValueError, match="den_seconds"):
        ex.ratio_estimate([1.0], [0.0], 5)


def test_ratio_estimate_recovers_the_population_ratio() -> None:
    """Loop time ≈ 5 x vectorised time + noise: over many samples of 10 the estimate averages to the population's
    Σ loop / Σ vec and scatters by its se."""
    rng = np.random.default_rng(1)
    vec = rng.gamma(4.0, 0.02, size=300)
    loop = 5 * vec + rng.normal(0, 0.02, size=300).clip(-0.05, None)
    est, ses = [], []
    for s in range(2000):
        idx = ex.sample_indices(300, 10, s)
        r, se = ex.ratio_estimate(loop[idx], vec[idx], 300)
        est.append(r)
        ses.append(se)
    assert np.mean(est) == pytest.approx(loop.sum() / vec.sum(), rel=0.01)
    assert np.std(est) == pytest.approx(np.sqrt(np.mean(np.square(ses))), rel=0.15)


def test_speedup_ratio_from_hand_made_timings() -> None:
    """Two seeds: loop 10 and 30 s (se 1 and 2), EGPlace 2 and 3 s -> 40/5 = 8x, se √5/5, per seed 5x and 10x."""
    sp = ex.speedup_ratio([10.0, 30.0], [1.0, 2.0], [2.0, 3.0])
    assert sp["ratio"] == pytest.approx(8.0) and sp["se"] == pytest.approx(math.sqrt(5) / 5)
    assert sp["low"] == pytest.approx(8 - 2 * math.sqrt(5) / 5) and sp["high"] == pytest.approx(8 + 2 * math.sqrt(5) / 5)
    assert sp["per_seed"] == [pytest.approx(5.0), pytest.approx(10.0)]
    with pytest.raises(ValueError, match="one value per seed"):
        ex.speedup_ratio([1.0], [0.1, 0.1], [1.0])
    with pytest.raises(ValueError, match="egplace_seconds"):
        ex.speedup_ratio([1.0], [0.1], [0.0])


def test_loop_ea_seconds_times_a_sample_of_the_run(dec, monkeypatch) -> None:
    """The loop decodes are of the run's own genotypes, those of ``sample_indices``; estimate = n_evals x mean."""
    ea = WireMaskEA(dec, init_round=3, random_state=2).run(budget_evals=20, record_guides=True)
    seen: list[np.ndarray] = []
    loop = dec.decode_loop

    def spy(guides):  # type: ignore[no-untyped-def]
        seen.append(np.asarray(guides).copy())
        return loop(guides)

    monkeypatch.setattr(dec, "decode_loop", spy)
    e = ex.loop_ea_seconds(dec, ea, 4, [9, 50])
    idx = ex.sample_indices(20, 4, [9, 50])
    assert len(seen) == 4 * ex.SPEEDUP_REPEATS
    assert all(np.array_equal(seen[k * ex.SPEEDUP_REPEATS], ea.guides[i]) for k, i in enumerate(idx))
    assert e["samples"] == 4 and e["identical"] == 1.0
    assert e["loop_over_vec"] == pytest.approx(e["loop_decode_s"] / e["vec_decode_s"])
    assert e["seconds"] == pytest.approx(ea.cpu_seconds * e["loop_over_vec"]) and e["se"] >= 0
    assert e["direct_seconds"] == pytest.approx(20 * e["loop_decode_s"])
    with pytest.raises(ValueError, match="record_guides"):
        ex.loop_ea_seconds(dec, WireMaskEA(dec, init_round=2, random_state=0).run(budget_evals=3), 2, 0)


def _runs(dec) -> tuple[dict, list[int]]:
    seeds = [0, 1]
    runs = {"WireMask-EA": [WireMaskEA(dec, init_round=3, random_state=s).run(budget_evals=12, record_guides=True)
                            for s in seeds],
            "EGPlace": [EGPlace(dec, init_round=3, random_state=s).run(budget_evals=12) for s in seeds]}
    return runs, seeds


def test_full_speedup_claim(dec) -> None:
    """F_speedup_ea = Σ estimated loop seconds / Σ EGPlace CPU seconds from the table; threshold 7.8 x 0.75."""
    runs, seeds = _runs(dec)
    cfg = Config(search_evals=12, init_round=3, n_seeds=2, speedup_samples=3)
    rep = Report(slug="egplace", title="t", scale=Scale.FULL)
    ex.add_paper_speedup(rep, Scale.FULL, cfg, dec, runs, seeds)
    (claim,) = rep.claims
    (table,) = rep.tables.values()
    assert claim.id == "F_speedup_ea" and claim.kind == "paper" and claim.paper_value == 7.8
    assert claim.threshold == pytest.approx(7.8 * 0.75) and claim.comparison == ">=" and claim.timing
    assert "abstract" in claim.source and not claim.headline
    loop = sum(r["WireMask-EA loop s (estimate)"] for r in table)
    eg = sum(r["EGPlace s (measured)"] for r in table)
    assert claim.measured == pytest.approx(loop / eg)
    assert [r["EGPlace s (measured)"] for r in table] == [r.cpu_seconds for r in runs["EGPlace"]]
    assert all(r["sampled"] == 3 and r["loop = vectorised cells"] == 1.0 for r in table)
    assert all(r.guides is None for r in runs["WireMask-EA"]), "the recorded genotypes are dropped after use"


def test_full_speedup_claim_not_measured_without_samples(dec) -> None:
    """Quick (speedup_samples = 0): registered, not measured here; a full run with 0 samples: NaN with the reason."""
    runs, seeds = _runs(dec)
    rep = Report(slug="egplace", title="t")
    ex.add_paper_speedup(rep, Scale.QUICK, Config.quick(), dec, runs, seeds)
    assert [c.id for c in rep.not_measured_here()] == ["F_speedup_ea"]
    rep = Report(slug="egplace", title="t", scale=Scale.FULL)
    ex.add_paper_speedup(rep, Scale.FULL, Config(), dec, runs, seeds)
    assert math.isnan(rep.claims[0].measured) and "speedup_samples = 0" in rep.claims[0].note
    assert Config.full().speedup_samples > 0 and Config.paper().speedup_samples > 0
    with pytest.raises(ValueError, match="speedup_samples"):
        Config(speedup_samples=-1)
