from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from icml25.risk_cmdp import (
    BudgetGrid,
    EntropicRiskCMDPLearner,
    RiskNeutralPrimalDualLearner,
    TabularCMDP,
    env_garnet,
    env_risky_safe,
    erm,
    evaluate,
    max_erm_policy,
    monte_carlo,
    oce,
    plan_augmented,
    plan_augmented_loop,
    solve_lp,
)

ALPHA = -1.0


def test_erm_of_env_r_policies() -> None:
    env, grid = env_risky_safe(), BudgetGrid(5, 0.1)
    safe = evaluate(env, np.zeros((5, 4), int), 0.0, ALPHA, grid)
    risky = evaluate(env, np.ones((5, 4), int), 0.0, ALPHA, grid)
    assert safe[:2] == pytest.approx((1.5, 2.5))
    assert risky[:2] == pytest.approx((5.0, 2.0195419), abs=1e-6)
    assert risky[1] < safe[1]  # sign convention: risk aversion penalises spread


def test_evaluator_matches_monte_carlo(global_seed) -> None:
    env, grid = env_garnet(3), BudgetGrid(5, 0.1)
    rng = np.random.default_rng(global_seed)
    pol = rng.integers(0, env.A, size=(env.H, env.S, grid.n))
    vr, e, _ = evaluate(env, pol, 1.3, ALPHA, grid)
    mvr, me = monte_carlo(env, pol, 1.3, ALPHA, grid, 40000, rng)
    assert abs(vr - mvr) < 0.02 and abs(e - me) < 0.02


def test_oce_identity(global_seed) -> None:
    rng = np.random.default_rng(global_seed)
    for _ in range(10):
        v, p = rng.normal(2, 1.5, 6), rng.dirichlet(np.ones(6))
        best = minimize_scalar(lambda lam, v=v, p=p: -oce(v, p, lam, ALPHA), bounds=(v.min() - 1, v.max() + 1),
                               method="bounded", options={"xatol": 1e-10})
        assert -best.fun == pytest.approx(erm(v, p, ALPHA), abs=1e-6)
        assert oce(v, p, v.mean(), ALPHA) <= erm(v, p, ALPHA) + 1e-12


def test_lp_value_env_r() -> None:
    sol = solve_lp(env_risky_safe(), 2.2, ALPHA)
    assert sol.value == pytest.approx(4.351, abs=0.01) and sol.lam == pytest.approx(2.2)
    with pytest.raises(ValueError, match="largest achievable entropic risk is 2.5"):
        solve_lp(env_risky_safe(), 2.6, ALPHA)


def _tiny_env() -> TabularCMDP:
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(2), size=(2, 2))
    r = rng.random((2, 2))
    g = np.repeat(np.array([[0.3], [0.8]]), 2, axis=1)  # state-dependent utility keeps the enumeration small
    return TabularCMDP(P, r, g, H=3, s1=0)


def test_planner_equals_brute_force_on_tiny_mdp() -> None:
    """Zero bonus, true model: the greedy augmented plan maximises V_r + y (lam + E u(G - lam)) over all
    deterministic budget-dependent policies (brute force over the reachable (h, s, b) decisions)."""
    env, grid = _tiny_env(), BudgetGrid(3, 0.1)
    steps = grid.utility_steps(env.g)
    rng = np.random.default_rng(0)
    y, lam = 1.5, 1.2
    i0 = grid.offset + 12
    plan = plan_augmented(env.P, env.r, steps, np.zeros((3, 2, 2)), y, ALPHA, grid, rng)
    vr, e, o = evaluate(env, plan.policy, lam, ALPHA, grid)
    # enumerate decisions at reachable (h, s, i)
    reach = [{(0, i0)}]
    for h in range(2):
        reach.append({(sp, i - steps[h, s, a]) for s, i in reach[-1] for a in range(2) for sp in range(2)})
    keys = [(h, s, i) for h in range(3) for s, i in sorted(reach[h])]
    best = -np.inf
    for acts in itertools.product(range(2), repeat=len(keys)):
        pol = np.zeros((3, 2, grid.n), dtype=int)
        for (h, s, i), a in zip(keys, acts):
            pol[h, s, i] = a
        v = evaluate(env, pol, lam, ALPHA, grid)
        best = max(best, v[0] + y * v[2])
    assert vr + y * o == pytest.approx(best, abs=1e-9)


def test_vectorised_planner_equals_loop() -> None:
    env, grid = env_garnet(1), BudgetGrid(5, 0.1)
    steps = grid.utility_steps(env.g)
    bonus = np.random.default_rng(0).random((5, env.S, env.A)) * 0.1
    plan = plan_augmented(env.P, env.r, steps, bonus, 0.7, ALPHA, grid, np.random.default_rng(0))
    _, V_r, V_u = plan_augmented_loop(env.P, env.r, steps, bonus, 0.7, ALPHA, grid)
    np.testing.assert_allclose(plan.V_r, V_r, atol=1e-12)
    np.testing.assert_allclose(plan.V_u, V_u, atol=1e-12)


def test_max_erm_policy_is_optimal_among_markov() -> None:
    env, grid = _tiny_env(), BudgetGrid(3, 0.1)
    _, top = max_erm_policy(env, ALPHA)
    best = max(evaluate(env, np.array(p).reshape(3, 2), 0.0, ALPHA, grid)[1]
               for p in itertools.product(range(2), repeat=6))
    assert top == pytest.approx(best, abs=1e-9)


def test_learners_separate_on_env_r() -> None:
    env, grid = env_risky_safe(), BudgetGrid(5, 0.1)
    K = 600
    ev = []
    EntropicRiskCMDPLearner(ALPHA, 2.2, eta=10 / np.sqrt(K), rho=2 * K**0.25, seed=1).run(
        env, K, callback=lambda k, p, lam: ev.append(evaluate(env, p, lam, ALPHA, grid)))
    evn = []
    RiskNeutralPrimalDualLearner(2.2, eta=10 / np.sqrt(K), rho=2 * K**0.25, seed=1).run(
        env_risky_safe(), K, callback=lambda k, p, lam: evn.append(evaluate(env_risky_safe(), p, lam, ALPHA, grid)))
    erm_rs, erm_rn = np.array(ev)[-100:, 1].mean(), np.array(evn)[-100:, 1].mean()
    assert erm_rs > erm_rn + 0.1
    assert erm_rn == pytest.approx(2.0195, abs=0.01)


@pytest.mark.parametrize("call,msg", [
    (lambda: TabularCMDP(np.full((2, 2, 2), 0.6), np.zeros((2, 2)), np.zeros((2, 2)), 3), "probability vector"),
    (lambda: TabularCMDP(np.full((2, 2, 2), 0.5), np.zeros((3, 2)), np.zeros((2, 2)), 3), "shape"),
    (lambda: EntropicRiskCMDPLearner(0.5, 1.0), "alpha must be < 0"),
    (lambda: erm([1.0, 2.0], [0.5], ALPHA), "same shape"),
    (lambda: BudgetGrid(3, 0.1).utility_steps(np.array([0.05])), "grid"),
])
def test_bad_input(call, msg) -> None:
    with pytest.raises(ValueError, match=msg):
        call()
