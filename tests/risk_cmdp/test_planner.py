"""The risk-neutral planner against brute force over Markov policies, and random tie-breaking."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from icml25.risk_cmdp import TabularCMDP, plan_markov
from icml25.risk_cmdp.planner import random_argmax


def _markov_values(env: TabularCMDP, pol: np.ndarray) -> tuple[float, float]:
    """Exact E[Σ r] and E[Σ g] of a Markov policy by a forward pass over the state distribution."""
    d = np.eye(env.S)[env.s1]
    vr = vg = 0.0
    for h in range(env.H):
        a = pol[h]
        vr += float(d @ env.r[h][np.arange(env.S), a])
        vg += float(d @ env.g[h][np.arange(env.S), a])
        d = d @ env.P[h][np.arange(env.S), a]
    return vr, vg


def test_plan_markov_is_the_best_lagrangian_markov_policy() -> None:
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(2), size=(2, 2))
    env = TabularCMDP(P, rng.random((2, 2)), rng.integers(0, 11, (2, 2)) / 10, H=3)
    for y in (0.0, 0.8, 5.0):
        pol, V_r, V_g = plan_markov(env.P, env.r, env.g, np.zeros((3, 2, 2)), y, rng)
        best = max(sum(np.array(_markov_values(env, np.array(p).reshape(3, 2))) * (1.0, y))
                   for p in itertools.product(range(2), repeat=6))
        vr, vg = _markov_values(env, pol)
        assert vr + y * vg == pytest.approx(best, abs=1e-9)
        assert (V_r[env.s1], V_g[env.s1]) == pytest.approx((vr, vg), abs=1e-9)  # zero bonus: values are exact


def test_bonus_is_optimistic_and_capped() -> None:
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=(3, 2))
    env = TabularCMDP(P, rng.random((3, 2)), np.zeros((3, 2)), H=4)
    _, v0, _ = plan_markov(env.P, env.r, env.g, np.zeros((4, 3, 2)), 0.0, rng)
    _, v1, _ = plan_markov(env.P, env.r, env.g, np.full((4, 3, 2), 0.1), 0.0, rng)
    _, vmax, _ = plan_markov(env.P, env.r, env.g, np.full((4, 3, 2), 10.0), 0.0, rng)
    assert np.all(v1 >= v0) and np.allclose(vmax, env.H)  # optimism, and Q_r ≤ H − h + 1


def test_random_argmax_breaks_ties_uniformly() -> None:
    rng = np.random.default_rng(0)
    Q = np.array([1.0, 3.0, 3.0, 0.0, 3.0])
    picks = np.array([random_argmax(Q, rng) for _ in range(3000)])
    assert set(picks) == {1, 2, 4}
    assert np.allclose(np.bincount(picks, minlength=5)[[1, 2, 4]] / 3000, 1 / 3, atol=0.04)
    assert np.array_equal(random_argmax(np.array([[0.0, 1.0], [2.0, 1.0]]), rng, axis=1), [1, 0])
