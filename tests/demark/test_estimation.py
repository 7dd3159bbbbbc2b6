"""Estimation of h, delta and the green lists on the simulated probe oracle (spec §6 Q1 at test size), and the
dependence on chooser bias the paper's analysis predicts."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.demark import (
    SimulatedProbeOracle,
    estimate_delta,
    estimate_prefix_length,
    identify_green_list,
    pair_scores,
)

WORDS = np.arange(50, 1500)


@pytest.mark.parametrize("h", [1, 2, 3, 4])
def test_prefix_length_recovered(h: int) -> None:
    o = SimulatedProbeOracle(1500, delta=2.0, h=h, key=100 + h, seed=h)
    h_hat, a = estimate_prefix_length(o, WORDS, h_max=6, m=30, random_state=h)
    assert h_hat == h
    assert a.shape == (5,) and (a[h - 1:] > 0.75).all()  # widths >= h agree with the next


@pytest.mark.parametrize("delta", [1.0, 2.0, 3.0])
def test_delta_recovered(delta: float) -> None:
    o = SimulatedProbeOracle(1500, delta=delta, h=2, key=7, seed=int(delta))
    d, samples = estimate_delta(o, WORDS, h_hat=2, n_contexts=30, random_state=1)
    assert abs(d - delta) <= 0.15 and samples.size > 30


def test_green_list_precision_and_recall(rng: np.random.Generator) -> None:
    o = SimulatedProbeOracle(1500, delta=2.0, h=1, seed=3)
    g_all, e_all = [], []
    for _ in range(30):
        c, cand = rng.choice(WORDS, 1).tolist(), rng.choice(WORDS, 20, replace=False)
        g_all.append(o.true_green(c, cand))
        e_all.append(identify_green_list(o, c, cand, 2.0))
    g, e = np.concatenate(g_all), np.concatenate(e_all)
    assert (g & e).sum() / e.sum() >= 0.95 and (g & e).sum() / g.sum() >= 0.9


def test_chooser_bias_hurts(rng: np.random.Generator) -> None:
    acc = {}
    for sb in (0.1, 1.5):
        o = SimulatedProbeOracle(1500, delta=2.0, h=1, sigma_b=sb, seed=5)
        hits = [(identify_green_list(o, [int(w)], cand, 2.0) == o.true_green([int(w)], cand)).mean()
                for w, cand in ((rng.choice(WORDS), rng.choice(WORDS, 20, replace=False)) for _ in range(20))]
        acc[sb] = float(np.mean(hits))
    assert acc[1.5] < acc[0.1] and acc[0.1] > 0.95


def test_pair_scores_properties() -> None:
    R = np.array([[0.0, 2.0, -1.0, np.nan], [-2.0, 0.0, 4.0, 0.0], [1.0, -4.0, 0.0, 0.0], [np.nan, 0.0, 0.0, 0.0]])
    P = pair_scores(R, 2.0)
    np.testing.assert_allclose(P, -P.T)
    assert P[0, 1] == 1.0 and P[0, 2] == -0.5 and P[1, 2] == 0.5 and P[0, 3] == 0.0
    assert np.abs(P).max() <= 1.0


def test_identify_uses_confidence_weighting() -> None:
    # token 0 beats the confident red tokens 2, 3 by delta; token 1 only beats token 0 weakly: sigma sorts them
    R = np.zeros((4, 4))
    for i, j, v in ((0, 2, 2.0), (0, 3, 2.0), (1, 2, 2.0), (1, 3, 2.0), (0, 1, 0.1)):
        R[i, j], R[j, i] = v, -v
    est = identify_green_list(SimulatedProbeOracle(10), [1], [4, 5, 6, 7], 2.0, R=R)
    assert est.tolist() == [True, True, False, False]
