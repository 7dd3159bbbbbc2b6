"""The learners' invariants (truncated dual, budgets on the grid, logs, seeding) and their limits: with the
constraint slack the risk-sensitive learner becomes reward-greedy, the risk-neutral one enforces E[G] only."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.risk_cmdp import (
    BudgetGrid,
    EntropicRiskCMDPLearner,
    RiskNeutralPrimalDualLearner,
    env_garnet,
    env_risky_safe,
    evaluate,
)

ALPHA = -1.0


def test_dual_is_truncated_and_logs_are_complete() -> None:
    env, K = env_risky_safe(), 150
    learner = EntropicRiskCMDPLearner(ALPHA, 2.4, eta=0.5, rho=1.25, seed=0).run(env, K)
    duals = np.array(learner.duals_)
    assert duals[0] == 0.0 and duals.min() >= 0.0 and duals.max() <= 1.25
    assert duals.max() == pytest.approx(1.25)  # c = 2.4 is hard to meet: the cap binds
    grid = BudgetGrid(env.H, 0.1)
    lam = np.array(learner.lambdas_)
    assert np.all((lam >= 0) & (lam <= env.H)) and np.allclose(np.round(lam / 0.1), lam / 0.1)
    assert all(len(v) == K for v in learner.history_.values()) and len(learner.policies_) == K
    assert learner.policies_[0].shape == (env.H, env.S, grid.n)
    assert np.all(np.isin(learner.history_["G"], np.round(np.arange(0, 5.01, 0.5), 1)))  # Env R totals


def test_same_seed_same_run() -> None:
    a = EntropicRiskCMDPLearner(ALPHA, 2.2, seed=3).run(env_garnet(1), 60)
    b = EntropicRiskCMDPLearner(ALPHA, 2.2, seed=3).run(env_garnet(1), 60)
    assert a.lambdas_ == b.lambdas_ and a.history_["reward"] == b.history_["reward"]


def test_zero_dual_gives_the_reward_greedy_policy() -> None:
    """With threshold 0 the risk-neutral dual never moves and its last policy is all-risky (reward 5); the
    risk-sensitive learner's dual can move (the OCE at a random λ is only a lower bound of the ERM), but every
    episode it plays with dual 0 once the model is learned is reward-greedy too."""
    env, grid = env_risky_safe(), BudgetGrid(5, 0.1)
    rn = RiskNeutralPrimalDualLearner(0.0, seed=1).run(env, 80)
    assert max(rn.duals_) == 0.0
    assert evaluate(env, *rn.last_policy(), ALPHA, grid)[0] == pytest.approx(5.0)
    rewards: list[float] = []
    rs = EntropicRiskCMDPLearner(ALPHA, 0.0, seed=1)
    rs.run(env_risky_safe(), 120, callback=lambda k, pol, lam: rewards.append(evaluate(env, pol, lam, ALPHA, grid)[0]))
    at_zero = [r for r, y in zip(rewards[60:], rs.duals_[60:]) if y == 0.0]
    assert at_zero and np.allclose(at_zero, 5.0)


def test_risk_neutral_learner_sees_only_the_mean() -> None:
    """On Env R every policy has E[G] = 2.5, so a threshold of 2.2 never moves the risk-neutral dual."""
    learner = RiskNeutralPrimalDualLearner(2.2, seed=0).run(env_risky_safe(), 100)
    assert np.mean(learner.duals_[50:]) < 0.05
    pol, lam = learner.last_policy()
    assert pol.shape == (5, 4) and lam == 0.0


def test_mixture_policy_draws_an_episode() -> None:
    learner = EntropicRiskCMDPLearner(ALPHA, 2.2, seed=0).run(env_risky_safe(), 20)
    pol, lam = learner.mixture_policy(np.random.default_rng(0))
    assert any(np.array_equal(pol, p) and lam == q for p, q in zip(learner.policies_, learner.lambdas_))
    with pytest.raises(ValueError, match="run"):
        EntropicRiskCMDPLearner(ALPHA, 2.2).last_policy()
