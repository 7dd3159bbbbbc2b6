"""The exact evaluator and the LP oracle against brute force: trajectory enumeration, and the best feasible
deterministic budget-dependent policy on a tiny instance (the LP optimum over randomised policies is at least it)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from icml25.risk_cmdp import (
    BudgetGrid,
    TabularCMDP,
    env_risky_safe,
    evaluate,
    solve_lp,
    terminal_budget_distribution,
)
from icml25.risk_cmdp.risk import erm

ALPHA = -1.0


def _enumerate(env: TabularCMDP, pol: np.ndarray, lam: float, grid: BudgetGrid) -> tuple[dict[float, float], float]:
    """Distribution of the total utility G and the expected reward, by enumerating every state sequence."""
    dist: dict[float, float] = {}
    reward = 0.0
    steps = grid.utility_steps(env.g)
    for seq in itertools.product(range(env.S), repeat=env.H):
        s, i, prob, G, R = env.s1, grid.offset + int(round(lam / grid.eps)), 1.0, 0.0, 0.0
        for h in range(env.H):
            a = pol[h, s, i]
            G, R = G + env.g[h, s, a], R + env.r[h, s, a]
            i -= steps[h, s, a]
            prob *= env.P[h, s, a, seq[h]]
            s = seq[h]
        if prob > 0:
            dist[round(G, 9)] = dist.get(round(G, 9), 0.0) + prob
            reward += prob * R
    return dist, reward


def test_forward_pass_equals_trajectory_enumeration() -> None:
    env, grid = env_risky_safe(), BudgetGrid(5, 0.1)
    rng = np.random.default_rng(0)
    pol = rng.integers(0, 2, size=(env.H, env.S, grid.n))
    lam = 1.7
    d, vr = terminal_budget_distribution(env, pol, lam, grid)
    ref, ref_r = _enumerate(env, pol, lam, grid)
    assert d.sum() == pytest.approx(1.0) and vr == pytest.approx(ref_r)
    G = np.round(lam - grid.budgets, 9)
    for g, p in ref.items():
        assert d[np.isclose(G, g)].sum() == pytest.approx(p)
    _, risk, _ = evaluate(env, pol, lam, ALPHA, grid)
    assert risk == pytest.approx(erm(np.array(list(ref)), np.array(list(ref.values())), ALPHA))


def test_lp_value_is_at_least_the_best_feasible_deterministic_policy() -> None:
    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.ones(2), size=(2, 2))
    g = np.array([[0.2, 0.6], [0.9, 0.1]])
    env = TabularCMDP(P, rng.random((2, 2)), g, H=2)
    grid, c = BudgetGrid(2, 0.1), 0.5
    sol = solve_lp(env, c, ALPHA)
    best = -np.inf
    for lam_i in grid.lambda_indices:  # deterministic policies on the reachable budgets, every initial budget
        lam = float(grid.budgets[lam_i])
        for acts in itertools.product(range(2), repeat=1 + 2 * 2):
            pol = np.zeros((2, 2, grid.n), dtype=int)
            pol[0, 0, lam_i] = acts[0]
            for s in range(2):
                for a0 in range(2):
                    pol[1, s, lam_i - grid.utility_steps(env.g)[0, 0, a0]] = acts[1 + 2 * s + a0]
            vr, risk, _ = evaluate(env, pol, lam, ALPHA, grid)
            if risk >= c - 1e-9:
                best = max(best, vr)
    assert np.isfinite(best)
    assert sol.value >= best - 1e-7
    assert sol.value <= 2.0 + 1e-9  # at most H × max reward
    assert max(sol.per_lambda.values()) == pytest.approx(sol.value)
