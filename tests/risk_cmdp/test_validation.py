"""Issue 19 findings for risk_cmdp: NaN in the model, K <= 0, delta = 0, eps = NaN, negative c_bonus, alpha = 0,
and the reproduction Config."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from icml25.risk_cmdp import (
    BudgetGrid,
    EntropicRiskCMDPLearner,
    RiskNeutralPrimalDualLearner,
    TabularCMDP,
    env_risky_safe,
    erm,
    oce,
    utility,
)
from icml25.risk_cmdp.reproduce import Config


def _model() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    env = env_risky_safe()
    return env.P[0].copy(), env.r[0].copy(), env.g[0].copy()


@pytest.mark.parametrize("name", ["P", "r", "g"])
def test_nan_in_model_is_rejected(name: str) -> None:
    P, r, g = _model()
    arrays = {"P": P, "r": r, "g": g}
    arrays[name][0, 0] = np.nan  # before: accepted (NaN compares False with every bound)
    with pytest.raises(ValueError, match=f"{name} must be finite"):
        TabularCMDP(arrays["P"], arrays["r"], arrays["g"], H=5)


@pytest.mark.parametrize("K", [0, -3])
def test_nonpositive_K(K: int) -> None:
    for learner in (EntropicRiskCMDPLearner(-1.0, 2.2), RiskNeutralPrimalDualLearner(2.2)):
        with pytest.raises(ValueError, match="K must be >= 1"):  # before: "math domain error"
            learner.run(env_risky_safe(), K)


def test_K_must_be_an_integer() -> None:
    with pytest.raises(TypeError, match="K must be an integer"):
        EntropicRiskCMDPLearner(-1.0, 2.2).run(env_risky_safe(), 2.5)


@pytest.mark.parametrize("delta", [0.0, 1.0, math.nan])
def test_delta_in_open_unit_interval(delta: float) -> None:
    with pytest.raises(ValueError, match="delta must be a probability in \\(0, 1\\)"):  # before: ZeroDivisionError
        EntropicRiskCMDPLearner(-1.0, 2.2, delta=delta)
    with pytest.raises(ValueError, match="delta"):
        RiskNeutralPrimalDualLearner(2.2, delta=delta)


def test_eps_nan_and_negative_bonus() -> None:
    with pytest.raises(ValueError, match="eps must be a finite number"):
        EntropicRiskCMDPLearner(-1.0, 2.2, eps=math.nan)
    with pytest.raises(ValueError, match="c_bonus must be >= 0"):
        EntropicRiskCMDPLearner(-1.0, 2.2, c_bonus=-0.1)
    with pytest.raises(ValueError, match="c_bonus must be >= 0"):
        RiskNeutralPrimalDualLearner(2.2, c_bonus=-0.1)
    EntropicRiskCMDPLearner(-1.0, 2.2, c_bonus=0.0, rho=math.inf)  # no bonus and no truncation are valid


@pytest.mark.parametrize("rho", [0.0, -1.0, math.nan])
def test_bad_rho(rho: float) -> None:
    with pytest.raises(ValueError, match="rho"):
        EntropicRiskCMDPLearner(-1.0, 2.2, rho=rho)


@pytest.mark.parametrize("alpha", [0.0, 0.5, math.nan, math.inf])
def test_alpha_must_be_negative(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha"):  # before: erm(..., alpha=0) returned NaN
        erm([0.0, 1.0], [0.5, 0.5], alpha)
    with pytest.raises(ValueError, match="alpha"):
        oce([0.0, 1.0], [0.5, 0.5], 0.5, alpha)
    with pytest.raises(ValueError, match="alpha"):
        utility([0.0, 1.0], alpha)


def test_erm_rejects_nan_and_bad_probs() -> None:
    with pytest.raises(ValueError, match="values must be finite"):
        erm([0.0, np.nan], [0.5, 0.5], -1.0)
    with pytest.raises(ValueError, match="probs must sum to one"):
        erm([0.0, 1.0], [0.5, 0.6], -1.0)
    with pytest.raises(ValueError, match="probs must be >= 0"):
        erm([0.0, 1.0], [-0.5, 1.5], -1.0)


def test_budget_grid() -> None:
    with pytest.raises(ValueError, match="eps must be"):
        BudgetGrid(5, 0.0)
    with pytest.raises(ValueError, match="eps must be <= H"):
        BudgetGrid(1, 2.0)
    with pytest.raises(TypeError, match="H must be an integer"):
        BudgetGrid(2.5, 0.1)
    with pytest.raises(ValueError, match="g must be finite"):
        BudgetGrid(5, 0.1).utility_steps(np.array([0.1, np.nan]))


def test_step_rejects_bad_action() -> None:
    env = env_risky_safe()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action must be <= 1"):
        env.step(2)


@pytest.mark.parametrize("field,value", [
    ("alpha", 0.0), ("eps", 0.0), ("eps", 0.3), ("threshold_r", math.nan), ("K_r", 0), ("seeds_r", 0),
    ("K_garnet", -1), ("K_ablation", 2.5), ("garnet_seeds", ()), ("garnet_seeds", (0, -1)), ("c_bonus", -1.0),
    ("c_eta", 0.0), ("c_rho", math.inf), ("mc_rollouts", 0),
])
def test_config_rejects_bad_fields(field: str, value: object) -> None:
    with pytest.raises((ValueError, TypeError), match=field):
        dataclasses.replace(Config.quick(), **{field: value})


def test_config_presets_are_valid() -> None:
    Config.quick()
    Config.full()
