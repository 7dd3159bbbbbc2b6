"""Online learners: the optimistic primal-dual learner on the budget-augmented MDP with a truncated dual
(spec §2.3-2.6) and the risk-neutral primal-dual CMDP baseline (spec §2.7)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from icml25.core.progress import progress
from icml25.core.seeding import check_random_state
from icml25.core.validation import check_int, check_positive, check_probability, check_real

from .env import TabularCMDP
from .planner import _plan_augmented, _plan_markov, random_argmax
from .risk import BudgetGrid, check_alpha


def _check_common(learner: Any, threshold: Any, delta: Any, c_bonus: Any, eta: Any, rho: Any) -> None:
    learner.threshold = check_real(threshold, "threshold")
    learner.delta = check_probability(delta, "delta", open_low=True, open_high=True)
    learner.c_bonus = check_positive(c_bonus, "c_bonus", allow_zero=True)
    learner.eta = None if eta is None else check_positive(eta, "eta")
    if rho is not None:
        rho = check_real(rho, "rho", low=0.0, low_open=True, allow_inf=True)
    learner.rho = rho


def _check_run(env: Any, K: Any) -> int:
    if not isinstance(env, TabularCMDP):
        raise TypeError(f"env must be a TabularCMDP, got {type(env).__name__}")
    return check_int(K, "K", low=1)

__all__ = ["EntropicRiskCMDPLearner", "RiskNeutralPrimalDualLearner"]


class _CountingLearner:
    """Shared transition counts and bonuses (pooled over h for time-homogeneous models)."""

    def _init_counts(self, env: TabularCMDP, K: int) -> None:
        self.env_ = env
        shape = (1 if env.homogeneous else env.H, env.S, env.A)
        self.n_sa_ = np.zeros(shape)
        self.n_sas_ = np.zeros(shape + (env.S,))
        self.L_ = math.log(2 * env.S * env.A * env.H * K / self.delta)

    def _estimates(self) -> tuple[np.ndarray, np.ndarray]:
        env = self.env_
        n = np.maximum(self.n_sa_, 1.0)
        P = np.where(self.n_sa_[..., None] > 0, self.n_sas_ / n[..., None], 1.0 / env.S)
        beta = np.minimum(1.0, self.c_bonus * np.sqrt(self.L_ / n))  # spec §2.3
        if env.homogeneous:
            P = np.broadcast_to(P, (env.H,) + P.shape[1:])
            beta = np.broadcast_to(beta, (env.H,) + beta.shape[1:])
        return P, beta

    def _record(self, h: int, s: int, a: int, s2: int) -> None:
        k = 0 if self.env_.homogeneous else h
        self.n_sa_[k, s, a] += 1
        self.n_sas_[k, s, a, s2] += 1

    def _start(self, env: TabularCMDP, K: int) -> tuple[np.random.Generator, float, float]:
        """Reset counts and logs for a run of ``K`` episodes; returns ``(rng, rho, eta)``."""
        self._init_counts(env, K)
        rng = check_random_state(self.seed)
        env.reset(seed=int(rng.integers(2**31)))
        self.lambdas_, self.duals_, self.policies_ = [], [], []
        self.history_: dict[str, list[float]] = {"lambda": [], "dual": [], "C_hat": [], "G": [], "reward": []}
        rho = self.rho if self.rho is not None else 2.0 * K**0.25
        eta = self.eta if self.eta is not None else 10.0 / math.sqrt(K)
        return rng, rho, eta

    def _log(self, policy: np.ndarray, lam: float, y: float, C_hat: float, G: float, R: float) -> None:
        self.lambdas_.append(lam)
        self.duals_.append(y)
        self.policies_.append(policy)
        for key, v in (("lambda", lam), ("dual", y), ("C_hat", C_hat), ("G", G), ("reward", R)):
            self.history_[key].append(v)


class EntropicRiskCMDPLearner(_CountingLearner):
    """Optimistic primal-dual learner for an entropic-risk constraint, from the 'Online Learning in Risk
    Sensitive constrained MDP' (ICML 2025) paper (algorithm reconstructed; see README).

    Maximises expected reward subject to ``ERM_alpha(G) = (1/alpha) log E[e^{alpha G}] >= threshold`` for the total
    utility ``G``, via the OCE form ``max_lambda {lambda + E[u(G - lambda)]}``: each episode picks an initial budget
    ``lambda_k`` and a greedy policy on the (state, remaining budget) MDP from optimistic estimates, then updates
    the dual ``y_{k+1} = min(rho, max(0, y_k + eta (c - C_hat_k)))`` (truncated dual, spec §2.5).

    Parameters
    ----------
    alpha : float < 0
    threshold : float
        ``c`` of the constraint.
    eps : float
        Budget grid step; utilities must be multiples of it.
    delta : float
        Confidence level in the bonus' log term.
    c_bonus : float
        Bonus scale: ``beta = min(1, c_bonus sqrt(L / max(1, n)))``.
    eta, rho : float or None
        Dual step and cap (None: ``10/sqrt(K)`` and ``2 K^{1/4}``; ``rho=np.inf`` disables truncation).
    budget_aware : bool
        False gives the ablation that ignores the realised budget (acts as if it were ``lambda_k`` all episode).
    seed : int or Generator
        Tie-breaking randomness.

    Attributes
    ----------
    lambdas_, duals_ : list of float
    policies_ : list of ndarray (H, S, n_budget)
    history_ : dict of lists
        Per-episode ``lambda``, ``dual``, ``C_hat``, realised ``G`` and ``reward``.
    """

    def __init__(self, alpha: float, threshold: float, eps: float = 0.1, delta: float = 0.05,
                 c_bonus: float = 0.005, eta: float | None = None, rho: float | None = None,
                 budget_aware: bool = True, seed: Any = None) -> None:
        self.alpha = check_alpha(alpha)
        self.eps = check_positive(eps, "eps")
        _check_common(self, threshold, delta, c_bonus, eta, rho)
        self.budget_aware = bool(budget_aware)
        self.seed = seed

    def run(self, env: TabularCMDP, K: int, callback: Any = None) -> EntropicRiskCMDPLearner:
        """Play ``K`` episodes on ``env``; ``callback(k, policy, lam)`` is called after each episode's plan."""
        K = _check_run(env, K)
        if self.eps > env.H:
            raise ValueError(f"eps must be <= H = {env.H}, got {self.eps}")
        if abs(self.alpha) * env.H > 20:
            raise ValueError(f"|alpha| * H = {abs(self.alpha) * env.H:.1f} > 20 overflows exp; reduce |alpha|")
        grid = BudgetGrid(env.H, self.eps)
        steps = grid.utility_steps(env.g)
        self.grid_ = grid
        rng, rho, eta = self._start(env, K)
        y = 0.0
        lam_idx = grid.lambda_indices
        for k in progress(range(K), "risk-sensitive episodes"):
            P, beta = self._estimates()
            plan = _plan_augmented(P, env.r, steps, beta, y, self.alpha, grid, rng)
            s1 = env.s1
            obj = plan.V_r[s1, lam_idx] + y * (grid.budgets[lam_idx] + plan.V_u[s1, lam_idx])
            i0 = int(lam_idx[random_argmax(obj, rng)])
            lam = float(grid.budgets[i0])
            policy = plan.policy if self.budget_aware else np.repeat(plan.policy[:, :, i0:i0 + 1], grid.n, axis=2)
            if callback is not None:
                callback(k, policy, lam)
            C_hat = lam + float(plan.V_u[s1, i0])
            s, _ = env.reset()
            i, G, R = i0, 0.0, 0.0
            for h in range(env.H):
                a = int(policy[h, s, i])
                s2, rew, _, _, info = env.step(a)
                self._record(h, s, a, s2)
                i = min(max(i - int(steps[h, s, a]), 0), grid.n - 1)
                G += info["utility"]
                R += rew
                s = s2
            self._log(policy, lam, y, C_hat, G, R)
            y = min(rho, max(0.0, y + eta * (self.threshold - C_hat)))  # truncated dual update
        return self

    def last_policy(self) -> tuple[np.ndarray, float]:
        """The last iterate ``(pi_K, lambda_K)``."""
        if not getattr(self, "policies_", None):
            raise ValueError("last_policy needs a learner that has run; call run(env, K) first")
        return self.policies_[-1], self.lambdas_[-1]

    def mixture_policy(self, rng: Any = None) -> tuple[np.ndarray, float]:
        """Draw one episode's ``(pi_k, lambda_k)`` uniformly (the mixture output of spec §2.6)."""
        if not getattr(self, "policies_", None):
            raise ValueError("mixture_policy needs a learner that has run; call run(env, K) first")
        k = int(check_random_state(rng).integers(len(self.policies_)))
        return self.policies_[k], self.lambdas_[k]


class RiskNeutralPrimalDualLearner(_CountingLearner):
    """Risk-neutral optimistic primal-dual CMDP baseline (Efroni et al. 2020 style, spec §2.7): enforces
    ``E[G] >= threshold`` instead of the entropic-risk constraint. Same interface as
    :class:`EntropicRiskCMDPLearner`; its policies are Markov ``(H, S)``."""

    def __init__(self, threshold: float, delta: float = 0.05, c_bonus: float = 0.005, eta: float | None = None,
                 rho: float | None = None, seed: Any = None) -> None:
        _check_common(self, threshold, delta, c_bonus, eta, rho)
        self.seed = seed

    def run(self, env: TabularCMDP, K: int, callback: Any = None) -> RiskNeutralPrimalDualLearner:
        """Play ``K`` episodes on ``env``."""
        K = _check_run(env, K)
        rng, rho, eta = self._start(env, K)
        y = 0.0
        for k in progress(range(K), "risk-neutral episodes"):
            P, beta = self._estimates()
            policy, V_r, V_g = _plan_markov(P, env.r, env.g, beta, y, rng)
            if callback is not None:
                callback(k, policy, 0.0)
            C_hat = float(V_g[env.s1])
            s, _ = env.reset()
            G = R = 0.0
            for h in range(env.H):
                a = int(policy[h, s])
                s2, rew, _, _, info = env.step(a)
                self._record(h, s, a, s2)
                G += info["utility"]
                R += rew
                s = s2
            self._log(policy, 0.0, y, C_hat, G, R)
            y = min(rho, max(0.0, y + eta * (self.threshold - C_hat)))
        return self

    def last_policy(self) -> tuple[np.ndarray, float]:
        """The last iterate (Markov policy, lambda = 0)."""
        if not getattr(self, "policies_", None):
            raise ValueError("last_policy needs a learner that has run; call run(env, K) first")
        return self.policies_[-1], 0.0
