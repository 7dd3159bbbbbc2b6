"""Diagnostics against scipy/sklearn and closed forms; the exact distance scores perfectly."""

import numpy as np
import pytest

from icml25.cgcivl import (
    MazeLayout,
    binned_auc,
    discounted_distance_bound,
    overestimation_rate,
    rank_correlation,
    value_diagnostics,
    wall_auc,
)


def test_bound_and_overestimation_closed_form():
    b = discounted_distance_bound(np.array([0, 1, 3]), 0.5, cell_size=2.0, max_step=1.0)
    assert np.allclose(b, [0.0, 0.0, (1 - 0.5 ** 4) / 0.5])
    assert overestimation_rate([0.9, 1.0, 0.0], [3, 3, 1], 0.5, cell_size=2.0, max_step=1.0) == pytest.approx(1 / 3)


def test_rank_and_auc_against_peers():
    from scipy.stats import spearmanr
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=300), rng.integers(0, 9, size=300)
    assert rank_correlation(a, b) == pytest.approx(spearmanr(a, b).statistic)
    s, y, bins = rng.normal(size=400), rng.random(400) < 0.4, rng.integers(0, 3, size=400)
    s = s + y
    want = np.mean([roc_auc_score(y[bins == k], s[bins == k]) for k in range(3)])
    assert binned_auc(s, y, bins) == pytest.approx(want)


def test_wall_auc_binning_neutralises_euclid():
    rng = np.random.default_rng(1)
    e = rng.uniform(3, 6, size=4000)
    # walls more likely at larger distance, constant within a bin of width 0.5
    walled = rng.random(4000) < 0.15 + 0.14 * np.floor((e - 3) / 0.5)
    bfs = np.where(walled, 5, 1)
    assert wall_auc(e, e, bfs) == pytest.approx(0.5, abs=0.05)
    assert binned_auc(e, walled, np.zeros(4000, int)) > 0.65  # unbinned, Euclid alone looks like a wall detector
    assert wall_auc(e + 10 * walled, e, bfs) == 1.0


def test_true_distance_scores_perfectly():
    lay = MazeLayout(np.array([[1, 1, 1, 1, 1], [1, 0, 0, 0, 1], [1, 1, 1, 0, 1], [1, 0, 0, 0, 1],
                               [1, 1, 1, 1, 1]]))
    obs = lay.ij_to_xy(lay.free_cells[np.random.default_rng(0).integers(len(lay.free_cells), size=200)])
    d = value_diagnostics(lambda s, g: 1000.0 * lay.cell_distance(s, g).astype(float), obs, lay, n_pairs=500,
                          n_wall=50)
    assert d["spearman"] == pytest.approx(1.0) and d["overestimation"] == 0.0
    assert d["wall_auc"] == 1.0 or np.isnan(d["wall_auc"])
    d0 = value_diagnostics(lambda s, g: np.zeros(len(s)), obs, lay, n_pairs=500, wall=False)
    assert d0["overestimation"] > 0.5  # predicting 0 everywhere over-estimates every far pair


def test_wall_auc_gain_interval():
    from icml25.cgcivl import wall_auc_gain_ci

    rng = np.random.default_rng(0)
    eu = rng.uniform(3, 6, 600)
    bfs = np.where(rng.random(600) < 0.5, 5, 1)
    good = {"neg_v": eu + 3.0 * (bfs >= 4) + rng.normal(0, 1, 600), "euclid": eu, "bfs": bfs}
    blind = {"neg_v": eu + rng.normal(0, 1, 600), "euclid": eu, "bfs": bfs}
    est, lo, hi = wall_auc_gain_ci([(good, blind)], n_boot=200)
    assert est == pytest.approx(wall_auc(good["neg_v"], eu, bfs) - wall_auc(blind["neg_v"], eu, bfs))
    assert 0.3 < lo <= est <= hi
    assert wall_auc_gain_ci([(good, good)], n_boot=50) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="same pairs"):
        wall_auc_gain_ci([(good, {**blind, "bfs": bfs[::-1].copy()})])
    with pytest.raises(TypeError, match="runs"):
        wall_auc_gain_ci([])


def test_wall_auc_gain_interval_over_runs_covers_seed_spread():
    from icml25.cgcivl import wall_auc_gain_ci

    rng = np.random.default_rng(1)
    runs = []
    for shift in (0.0, 2.0, 4.0):  # three "seeds": the better value sees the walls by different amounts
        eu = rng.uniform(3, 6, 400)
        bfs = np.where(rng.random(400) < 0.5, 5, 1)
        a = {"neg_v": eu + shift * (bfs >= 4) + rng.normal(0, 1, 400), "euclid": eu, "bfs": bfs}
        b = {"neg_v": eu + rng.normal(0, 1, 400), "euclid": eu, "bfs": bfs}
        runs.append((a, b))
    est, lo, hi = wall_auc_gain_ci(runs, n_boot=200)
    _, plo, phi = wall_auc_gain_ci(runs, n_boot=200, resample_runs=False)
    assert lo <= plo <= est <= phi <= hi and (hi - lo) > 2 * (phi - plo)
