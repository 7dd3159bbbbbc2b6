"""Optimistic Lagrangian value iteration on the budget-augmented state (spec §2.4), vectorised over (s, b)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_array, check_positive, check_stochastic_matrix

from .risk import BudgetGrid, _utility, check_alpha

__all__ = ["AugmentedPlan", "plan_augmented", "plan_markov", "random_argmax", "plan_augmented_loop"]


def random_argmax(Q: np.ndarray, rng: np.random.Generator, axis: int = -1, tol: float = 1e-12) -> np.ndarray:
    """Argmax along ``axis`` with uniformly random tie-breaking (spec §8: deterministic ties bias λ and actions)."""
    Q = np.asarray(Q)
    best = Q.max(axis=axis, keepdims=True)
    keys = rng.random(Q.shape) * (Q >= best - tol)
    return keys.argmax(axis=axis)


@dataclass
class AugmentedPlan:
    """Result of the backward pass: greedy policy ``policy[h, s, i]`` and first-step values over (s, i)."""

    policy: np.ndarray  # (H, S, n_B) actions
    V_r: np.ndarray  # (S, n_B) optimistic reward value at h = 1
    V_u: np.ndarray  # (S, n_B) optimistic terminal-utility value at h = 1


def _check_model(P: Any, r: Any, bonus: Any, y: Any, g: Any = None, g_name: str = "g_steps",
                 integer_g: bool = True) -> tuple[np.ndarray, ...]:
    """Validate a planning model: P (H, S, A, S) row-stochastic, r and bonus (H, S, A) finite, y >= 0."""
    P = check_stochastic_matrix(P, "P")
    if P.ndim != 4 or P.shape[1] != P.shape[3]:
        raise ValueError(f"P must have shape (H, S, A, S), got {P.shape}")
    shape = P.shape[:3]
    r = check_array(r, "r", shape=shape)
    bonus = check_array(bonus, "bonus", shape=shape, low=0.0)
    y = check_positive(y, "y", allow_zero=True)
    out = [P, r, bonus, y]
    if g is not None:
        g = check_array(g, g_name, shape=shape, dtype=int if integer_g else float)
        out.append(g)
    return tuple(out)


def _check_grid(grid: Any, H: int) -> BudgetGrid:
    if not isinstance(grid, BudgetGrid):
        raise TypeError(f"grid must be a BudgetGrid, got {type(grid).__name__}")
    if grid.H != H:
        raise ValueError(f"grid must be built for the model's horizon H = {H}, got grid.H = {grid.H}")
    return grid


def plan_augmented(P: np.ndarray, r: np.ndarray, g_steps: np.ndarray, bonus: np.ndarray, y: float, alpha: float,
                   grid: BudgetGrid, rng: np.random.Generator) -> AugmentedPlan:
    """Backward pass of spec §2.4 for all (s, b) at once.

    Parameters
    ----------
    P : (H, S, A, S) estimated transitions; r : (H, S, A) rewards; g_steps : (H, S, A) utilities in grid steps;
    bonus : (H, S, A) confidence terms beta in [0, 1]; y : dual variable; alpha < 0; grid : BudgetGrid.

    Returns
    -------
    AugmentedPlan
        ``Q_r = min(H-h+1, r + P V_r' + (H-h+1) beta)``, ``Q_u = min(u(-b + H-h+1), P V_u' + range_u beta)`` with
        ``range_u = u(-b + H-h+1) - u(-b)``; greedy in ``Q_r + y Q_u``; both components propagated.

    Examples
    --------
    >>> from icml25.risk_cmdp import env_risky_safe
    >>> env = env_risky_safe(); grid = BudgetGrid(env.H, 0.1)
    >>> plan = plan_augmented(env.P, env.r, grid.utility_steps(env.g), np.zeros(env.r.shape), 0.0, -1.0, grid, 0)
    >>> plan.policy.shape, int(plan.policy[0, 0, grid.offset])  # y = 0: reward-greedy, the risky action
    ((5, 4, 101), 1)
    """
    P, r, bonus, y, g_steps = _check_model(P, r, bonus, y, g_steps)
    alpha = check_alpha(alpha)
    grid = _check_grid(grid, P.shape[0])
    return _plan_augmented(P, r, g_steps, bonus, y, alpha, grid, check_random_state(rng))


def _plan_augmented(P: np.ndarray, r: np.ndarray, g_steps: np.ndarray, bonus: np.ndarray, y: float, alpha: float,
                    grid: BudgetGrid, rng: np.random.Generator) -> AugmentedPlan:
    """:func:`plan_augmented` without input checks (the learners call it once per episode)."""
    H, S, A, _ = P.shape
    n = grid.n
    b = grid.budgets
    idx_all = np.arange(n)
    V_r = np.zeros((S, n))
    V_u = np.broadcast_to(_utility(-b, alpha), (S, n)).copy()
    policy = np.zeros((H, S, n), dtype=np.int64)
    for h in range(H - 1, -1, -1):
        left = H - h
        nxt = np.clip(idx_all[None, None, :] - g_steps[h][:, :, None], 0, n - 1)  # (S, A, n)
        EV_r = np.einsum("sak,ksai->sai", P[h], V_r[:, nxt])
        EV_u = np.einsum("sak,ksai->sai", P[h], V_u[:, nxt])
        cap_u = _utility(-b + left, alpha)  # reachable maximum of the terminal utility
        range_u = cap_u - _utility(-b, alpha)
        beta = bonus[h][:, :, None]
        Q_r = np.minimum(left, r[h][:, :, None] + EV_r + left * beta)
        Q_u = np.minimum(cap_u[None, None, :], EV_u + range_u[None, None, :] * beta)
        act = random_argmax(Q_r + y * Q_u, rng, axis=1)  # (S, n)
        policy[h] = act
        V_r = np.take_along_axis(Q_r, act[:, None, :], axis=1)[:, 0, :]
        V_u = np.take_along_axis(Q_u, act[:, None, :], axis=1)[:, 0, :]
    return AugmentedPlan(policy, V_r, V_u)


def plan_augmented_loop(P: np.ndarray, r: np.ndarray, g_steps: np.ndarray, bonus: np.ndarray, y: float,
                        alpha: float, grid: BudgetGrid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reference per-state Python loop of the same recursion (first-index tie-break); for tests and benchmarks."""
    P, r, bonus, y, g_steps = _check_model(P, r, bonus, y, g_steps)
    alpha = check_alpha(alpha)
    grid = _check_grid(grid, P.shape[0])
    H, S, A, _ = P.shape
    n = grid.n
    b = grid.budgets
    V_r = np.zeros((S, n))
    V_u = np.array([[float(_utility(-b[i], alpha)) for i in range(n)] for _ in range(S)])
    policy = np.zeros((H, S, n), dtype=np.int64)
    for h in range(H - 1, -1, -1):
        left = H - h
        new_r, new_u = np.zeros((S, n)), np.zeros((S, n))
        for s in range(S):
            for i in range(n):
                cap = float(_utility(-b[i] + left, alpha))
                rng_u = cap - float(_utility(-b[i], alpha))
                best, best_a, best_qr, best_qu = -np.inf, 0, 0.0, 0.0
                for a in range(A):
                    j = min(max(i - g_steps[h, s, a], 0), n - 1)
                    er = sum(P[h, s, a, k] * V_r[k, j] for k in range(S))
                    eu = sum(P[h, s, a, k] * V_u[k, j] for k in range(S))
                    qr = min(left, r[h, s, a] + er + left * bonus[h, s, a])
                    qu = min(cap, eu + rng_u * bonus[h, s, a])
                    if qr + y * qu > best + 1e-12:
                        best, best_a, best_qr, best_qu = qr + y * qu, a, qr, qu
                policy[h, s, i], new_r[s, i], new_u[s, i] = best_a, best_qr, best_qu
        V_r, V_u = new_r, new_u
    return policy, V_r, V_u


def plan_markov(P: np.ndarray, r: np.ndarray, g: np.ndarray, bonus: np.ndarray, y: float,
                rng: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Risk-neutral optimistic primal step (spec §2.7): greedy in ``Q_r + y Q_g`` on the original state.

    Returns ``(policy (H, S), V_r (S,), V_g (S,))``: the greedy Markov policy and its optimistic values at h = 1.
    """
    P, r, bonus, y, g = _check_model(P, r, bonus, y, g, "g", integer_g=False)
    return _plan_markov(P, r, g, bonus, y, check_random_state(rng))


def _plan_markov(P: np.ndarray, r: np.ndarray, g: np.ndarray, bonus: np.ndarray, y: float,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`plan_markov` without input checks."""
    H, S, A, _ = P.shape
    V_r, V_g = np.zeros(S), np.zeros(S)
    policy = np.zeros((H, S), dtype=np.int64)
    for h in range(H - 1, -1, -1):
        left = H - h
        Q_r = np.minimum(left, r[h] + P[h] @ V_r + left * bonus[h])
        Q_g = np.minimum(left, g[h] + P[h] @ V_g + left * bonus[h])
        act = random_argmax(Q_r + y * Q_g, rng, axis=1)
        policy[h] = act
        V_r = Q_r[np.arange(S), act]
        V_g = Q_g[np.arange(S), act]
    return policy, V_r, V_g
