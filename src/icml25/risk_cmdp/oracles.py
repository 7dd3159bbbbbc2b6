"""Exact oracles: policy evaluation on the augmented state, the LP optimum V*, the max-ERM policy (spec §2.7)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from icml25.core.validation import check_array, check_int, check_positive, check_real

from .env import TabularCMDP
from .risk import BudgetGrid, _utility, check_alpha, erm

__all__ = ["evaluate", "terminal_budget_distribution", "solve_lp", "LPSolution", "max_erm_policy",
           "monte_carlo", "as_augmented_policy"]


def as_augmented_policy(policy: Any, n_budget: int) -> np.ndarray:
    """A Markov policy ``(H, S)`` copied across budgets as ``(H, S, n_budget)``; augmented policies pass through."""
    policy = check_array(policy, "policy", ndim=(2, 3), dtype=int)
    if policy.ndim == 2:
        return np.repeat(policy[:, :, None], n_budget, axis=2)
    return policy


def _check_inputs(env: Any, policy: Any, lam: Any, grid: Any) -> tuple[np.ndarray, float]:
    """Validate an (env, policy, lam, grid) evaluation request; returns the augmented policy and lam."""
    if not isinstance(env, TabularCMDP):
        raise TypeError(f"env must be a TabularCMDP, got {type(env).__name__}")
    if not isinstance(grid, BudgetGrid):
        raise TypeError(f"grid must be a BudgetGrid, got {type(grid).__name__}")
    if grid.H != env.H:
        raise ValueError(f"grid must be built for the env's horizon H = {env.H}, got grid.H = {grid.H}")
    lam = check_real(lam, "lam", low=0.0, high=float(env.H))
    pol = as_augmented_policy(policy, grid.n)
    if pol.shape != (env.H, env.S, grid.n):
        raise ValueError(f"policy must have shape ({env.H}, {env.S}) or ({env.H}, {env.S}, {grid.n}), "
                         f"got {pol.shape}")
    if pol.min() < 0 or pol.max() >= env.A:
        raise ValueError(f"policy must hold actions in [0, {env.A}), got values in [{pol.min()}, {pol.max()}]")
    return pol, lam


def terminal_budget_distribution(env: TabularCMDP, policy: Any, lam: float, grid: BudgetGrid) -> tuple[np.ndarray, float]:
    """Forward pass over (s, budget index) from ``(s1, lam)``: distribution of ``b_{H+1}`` and expected reward."""
    pol, lam = _check_inputs(env, policy, lam, grid)
    steps = grid.utility_steps(env.g)
    i0 = grid.offset + int(round(lam / grid.eps))
    d = np.zeros((env.S, grid.n))
    d[env.s1, i0] = 1.0
    ar_s = np.arange(env.S)[:, None]
    ar_i = np.arange(grid.n)[None, :]
    V_r = 0.0
    for h in range(env.H):
        a = pol[h]  # (S, n)
        V_r += float(np.sum(d * env.r[h][ar_s, a]))
        nxt = np.clip(ar_i - steps[h][ar_s, a], 0, grid.n - 1)  # (S, n)
        trans = env.P[h][ar_s, a]  # (S, n, S')
        new = np.zeros_like(d)
        for sp in range(env.S):
            np.add.at(new[sp], nxt.ravel(), (d * trans[:, :, sp]).ravel())
        d = new
    return d.sum(0), V_r


def evaluate(env: TabularCMDP, policy: Any, lam: float, alpha: float, grid: BudgetGrid) -> tuple[float, float, float]:
    """Exact ``(V_r, ERM_alpha(G), OCE(lam))`` of a policy started with budget ``lam`` (spec §2.7).

    ``policy`` is ``(H, S, n_budget)`` (augmented) or ``(H, S)`` (Markov, copied across budgets).

    Examples
    --------
    >>> from icml25.risk_cmdp import env_risky_safe
    >>> env = env_risky_safe()
    >>> V_r, risk, _ = evaluate(env, np.zeros((env.H, env.S), int), 0.0, -1.0, BudgetGrid(env.H, 0.1))
    >>> round(V_r, 3), round(risk, 3)  # all-safe: reward 5 x 0.3, G = 2.5 surely
    (1.5, 2.5)
    """
    alpha = check_alpha(alpha)
    dist, V_r = terminal_budget_distribution(env, policy, lam, grid)
    G = lam - grid.budgets
    keep = dist > 1e-15
    risk = erm(G[keep], dist[keep] / dist[keep].sum(), alpha)
    oce_val = float(lam + np.sum(dist * _utility(G - lam, alpha)))
    return V_r, risk, oce_val


def monte_carlo(env: TabularCMDP, policy: Any, lam: float, alpha: float, grid: BudgetGrid, n: int,
                rng: np.random.Generator) -> tuple[float, float]:
    """Monte-Carlo ``(V_r, ERM)`` from ``n`` vectorised rollouts (for testing :func:`evaluate`)."""
    alpha = check_alpha(alpha)
    pol, lam = _check_inputs(env, policy, lam, grid)
    n = check_int(n, "n", low=1)
    from icml25.core.seeding import check_random_state

    rng = check_random_state(rng)
    steps = grid.utility_steps(env.g)
    s = np.full(n, env.s1)
    i = np.full(n, grid.offset + int(round(lam / grid.eps)))
    R = np.zeros(n)
    for h in range(env.H):
        a = pol[h, s, i]
        R += env.r[h, s, a]
        i = np.clip(i - steps[h, s, a], 0, grid.n - 1)
        cum = env.P[h, s, a].cumsum(1)
        s = (rng.random(n)[:, None] > cum).sum(1)
    G = lam - grid.budgets[i]
    vals, counts = np.unique(G, return_counts=True)
    return float(R.mean()), erm(vals, counts / n, alpha)


@dataclass
class LPSolution:
    """Optimum of the constrained augmented problem: value, initial budget, a (greedy-rounded) policy."""

    value: float
    lam: float
    policy: np.ndarray | None
    per_lambda: dict[float, float]


def _reachable(env: TabularCMDP, steps: np.ndarray, i0: int, n: int) -> list[set[tuple[int, int]]]:
    layers = [{(env.s1, i0)}]
    for h in range(env.H - 1):
        nxt = set()
        for s, i in layers[-1]:
            for a in range(env.A):
                j = min(max(i - steps[h, s, a], 0), n - 1)
                for sp in np.nonzero(env.P[h, s, a])[0]:
                    nxt.add((int(sp), j))
        layers.append(nxt)
    return layers


def _lp_for_lambda(env: TabularCMDP, threshold: float, alpha: float, grid: BudgetGrid, i0: int):  # type: ignore[no-untyped-def]
    steps = grid.utility_steps(env.g)
    n = grid.n
    layers = _reachable(env, steps, i0, n)
    var = {}
    for h, layer in enumerate(layers):
        for s, i in sorted(layer):
            for a in range(env.A):
                var[(h, s, i, a)] = len(var)
    nv = len(var)
    c = np.zeros(nv)
    rows, cols, vals, rhs = [], [], [], []
    state_row = {}
    for h, layer in enumerate(layers):
        for s, i in sorted(layer):
            state_row[(h, s, i)] = len(state_row)
            rhs.append(1.0 if h == 0 else 0.0)
    lam = (i0 - grid.offset) * grid.eps
    util_row = np.zeros(nv)
    for (h, s, i, a), k in var.items():
        c[k] = -env.r[h, s, a]
        rows.append(state_row[(h, s, i)])
        cols.append(k)
        vals.append(1.0)
        j = min(max(i - steps[h, s, a], 0), n - 1)
        if h + 1 < env.H:
            for sp in np.nonzero(env.P[h, s, a])[0]:
                rows.append(state_row[(h + 1, int(sp), j)])
                cols.append(k)
                vals.append(-env.P[h, s, a, sp])
        else:
            util_row[k] = float(_utility(-grid.budgets[j], alpha))
    A_eq = coo_matrix((vals, (rows, cols)), shape=(len(state_row), nv)).tocsr()
    res = linprog(c, A_ub=-util_row[None, :], b_ub=[lam - threshold], A_eq=A_eq, b_eq=rhs, bounds=(0, None),
                  method="highs")
    return res, var


def solve_lp(env: TabularCMDP, threshold: float, alpha: float, eps: float = 0.1) -> LPSolution:
    """``V* = max_{pi, lam} V_r`` s.t. ``lam + E[u(G - lam)] >= threshold`` over augmented occupancy measures,
    for every ``lam`` on the grid (scipy HiGHS), restricted to reachable (h, s, b) (spec §2.7).

    Raises
    ------
    ValueError
        If no policy meets the threshold (the message gives the largest achievable ERM).
    """
    alpha = check_alpha(alpha)
    if not isinstance(env, TabularCMDP):
        raise TypeError(f"env must be a TabularCMDP, got {type(env).__name__}")
    threshold = check_real(threshold, "threshold")
    grid = BudgetGrid(env.H, check_positive(eps, "eps"))
    grid.utility_steps(env.g)  # utilities must lie on the grid
    best, per = None, {}
    for i0 in grid.lambda_indices:
        res, var = _lp_for_lambda(env, threshold, alpha, grid, int(i0))
        lam = round((i0 - grid.offset) * eps, 10)
        if res.status == 0:
            per[lam] = -res.fun
            if best is None or -res.fun > best[0] + 1e-9:
                best = (-res.fun, lam, res.x, var)
    if best is None:
        top = max_erm_policy(env, alpha)[1]
        raise ValueError(f"no policy satisfies ERM >= {threshold}: the largest achievable entropic risk is "
                         f"{top:.4f}; lower the threshold")
    value, lam, x, var = best
    policy = np.zeros((env.H, env.S, grid.n), dtype=np.int64)
    score = np.full((env.H, env.S, grid.n, env.A), -1.0)
    for (h, s, i, a), k in var.items():
        score[h, s, i, a] = x[k]
    policy[:] = score.argmax(-1)
    return LPSolution(value, lam, policy, per)


def max_erm_policy(env: TabularCMDP, alpha: float) -> tuple[np.ndarray, float]:
    """Markov policy maximising ERM by the multiplicative DP ``W_h(s) = min_a e^{alpha g} sum P W_{h+1}``;
    returns ``(policy (H, S), ERM)``.

    Examples
    --------
    >>> from icml25.risk_cmdp import env_risky_safe
    >>> pol, risk = max_erm_policy(env_risky_safe(), -1.0)
    >>> round(risk, 4)  # all-safe: G = 2.5 surely
    2.5
    """
    alpha = check_alpha(alpha)
    if not isinstance(env, TabularCMDP):
        raise TypeError(f"env must be a TabularCMDP, got {type(env).__name__}")
    W = np.ones(env.S)
    pol = np.zeros((env.H, env.S), dtype=np.int64)
    for h in range(env.H - 1, -1, -1):
        Q = np.exp(alpha * env.g[h]) * (env.P[h] @ W)
        pol[h] = Q.argmin(1)
        W = Q.min(1)
    return pol, float(np.log(W[env.s1]) / alpha)
