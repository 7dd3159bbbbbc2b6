"""Bad-input registry of risk_cmdp for the fuzz contract (tests/core/test_bad_input.py): one valid call per public
callable and the kinds of the arguments to corrupt."""

from __future__ import annotations

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, BadInputCase


def _env():  # type: ignore[no-untyped-def]
    from icml25.risk_cmdp import env_risky_safe

    return env_risky_safe()


def _grid():  # type: ignore[no-untyped-def]
    from icml25.risk_cmdp import BudgetGrid

    return BudgetGrid(5, 0.5)


def _model() -> dict:
    env = _env()
    return {"P": env.P.copy(), "r": env.r.copy(), "bonus": np.full(env.r.shape, 0.01), "y": 1.0}


def _plan_kwargs() -> dict:
    grid = _grid()
    env = _env()
    return {**_model(), "g_steps": grid.utility_steps(env.g), "alpha": -1.0, "grid": grid}


def _ran(cls_name: str):  # type: ignore[no-untyped-def]
    def make():  # type: ignore[no-untyped-def]
        import icml25.risk_cmdp as rc

        learner = (rc.EntropicRiskCMDPLearner(-1.0, 2.2, eps=0.5, seed=0) if cls_name == "rs"
                   else rc.RiskNeutralPrimalDualLearner(2.2, seed=0))
        return learner

    return make


_POLICY = {"policy": ARRAY, "lam": REAL, "alpha": REAL}
_DATA = {"P": ARRAY, "r": ARRAY, "bonus": ARRAY, "y": REAL}

CASES = [
    BadInputCase("TabularCMDP", lambda: {"P": _env().P[0].copy(), "r": _env().r[0].copy(), "g": _env().g[0].copy(),
                                         "H": 5, "s1": 0},
                 {"P": ARRAY, "r": ARRAY, "g": ARRAY, "H": SIZE}),
    BadInputCase("TabularCMDP.step", lambda: {"action": 1}, {"action": REAL}, obj=lambda: _reset(_env())),
    BadInputCase("env_risky_safe", skip="no arguments: the fixed Env R of spec §5"),
    BadInputCase("env_garnet", lambda: {"seed": 0, "S": 4, "A": 2, "H": 3, "n_successors": 2},
                 {"S": SIZE, "A": SIZE, "H": SIZE, "n_successors": SIZE}),
    BadInputCase("EntropicRiskCMDPLearner", lambda: {"alpha": -1.0, "threshold": 2.2, "eps": 0.5, "delta": 0.05,
                                                     "c_bonus": 0.01, "eta": 0.5, "rho": 2.0},
                 {"alpha": REAL, "threshold": REAL, "eps": POSITIVE, "delta": PROB, "c_bonus": REAL,
                  "eta": POSITIVE}),
    BadInputCase("EntropicRiskCMDPLearner.run", lambda: {"env": _env(), "K": 2}, {"K": SIZE}, obj=_ran("rs")),
    BadInputCase("RiskNeutralPrimalDualLearner", lambda: {"threshold": 2.2, "delta": 0.05, "c_bonus": 0.01,
                                                          "eta": 0.5, "rho": 2.0},
                 {"threshold": REAL, "delta": PROB, "c_bonus": REAL, "eta": POSITIVE}),
    BadInputCase("RiskNeutralPrimalDualLearner.run", lambda: {"env": _env(), "K": 2}, {"K": SIZE},
                 obj=_ran("rn")),
    BadInputCase("evaluate", lambda: {"env": _env(), "policy": np.ones((5, 4), int), "lam": 1.0, "alpha": -1.0,
                                      "grid": _grid()}, _POLICY),
    BadInputCase("terminal_budget_distribution", lambda: {"env": _env(), "policy": np.ones((5, 4), int),
                                                          "lam": 1.0, "grid": _grid()},
                 {"policy": ARRAY, "lam": REAL}),
    BadInputCase("monte_carlo", lambda: {"env": _env(), "policy": np.ones((5, 4), int), "lam": 1.0, "alpha": -1.0,
                                         "grid": _grid(), "n": 50, "rng": 0}, {**_POLICY, "n": SIZE}),
    BadInputCase("solve_lp", lambda: {"env": _env(), "threshold": 2.2, "alpha": -1.0, "eps": 0.5},
                 {"threshold": REAL, "alpha": REAL, "eps": POSITIVE}),
    BadInputCase("LPSolution", skip="result container returned by solve_lp"),
    BadInputCase("max_erm_policy", lambda: {"env": _env(), "alpha": -1.0}, {"alpha": REAL}),
    BadInputCase("plan_augmented", lambda: {**_plan_kwargs(), "rng": 0},
                 {**_DATA, "g_steps": ARRAY, "alpha": REAL}),
    BadInputCase("plan_augmented_loop", _plan_kwargs, {**_DATA, "g_steps": ARRAY, "alpha": REAL}),
    BadInputCase("plan_markov", lambda: {**_model(), "g": _env().g.copy(), "rng": 0}, {**_DATA, "g": ARRAY}),
    BadInputCase("AugmentedPlan", skip="result container returned by plan_augmented"),
    BadInputCase("BudgetGrid", lambda: {"H": 5, "eps": 0.1}, {"H": SIZE, "eps": POSITIVE}),
    # g may have any shape (extra axes are legitimate), so only NaN/inf are tested, in test_validation.py
    BadInputCase("BudgetGrid.utility_steps", lambda: {"g": _env().g.copy()}, {}, obj=_grid),
    BadInputCase("erm", lambda: {"values": np.array([0.0, 1.0, 2.0]), "probs": np.array([0.2, 0.3, 0.5]),
                                 "alpha": -1.0}, {"values": ARRAY, "probs": ARRAY, "alpha": REAL}),
    BadInputCase("oce", lambda: {"values": np.array([0.0, 1.0, 2.0]), "probs": np.array([0.2, 0.3, 0.5]),
                                 "lam": 1.0, "alpha": -1.0},
                 {"values": ARRAY, "probs": ARRAY, "lam": REAL, "alpha": REAL}),
    BadInputCase("utility", lambda: {"t": np.array([0.0, 1.0]), "alpha": -1.0}, {"alpha": REAL}),
]


def _reset(env):  # type: ignore[no-untyped-def]
    env.reset(seed=0)
    return env
