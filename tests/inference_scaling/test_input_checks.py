"""Bad input is refused before any work, naming the argument; the reproduction's Config validates its fields."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.inference_scaling import (
    AttemptCost,
    BetaCoverageLaw,
    PowerCorrelation,
    best_model_for_budget,
    coverage_curve,
    fit_curve,
    log_spaced_ks,
    pass_at_k,
)


def test_numbers_written_as_text_are_refused() -> None:
    """float('0.35') would silently accept these: a string is a user mistake, not a number."""
    with pytest.raises(TypeError, match="alpha"):
        BetaCoverageLaw("4.0", 0.35)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"\bk\b"):
        pass_at_k([10, 10], [1, 2], "3")
    with pytest.raises(TypeError, match="eps"):
        BetaCoverageLaw(4.0, 0.35).k_for_loss("0.1")  # type: ignore[arg-type]


def test_curves_must_be_one_dimensional_and_errors_name_the_argument() -> None:
    ks = np.array([1.0, 2.0, 4.0, 8.0])
    y = BetaCoverageLaw(2.0, 0.4).pass_at_k(ks)
    with pytest.raises(ValueError, match="coverage"):
        fit_curve(ks, y[None, :])  # was silently flattened
    with pytest.raises(ValueError, match="ks"):
        coverage_curve([10, 10], [1, 2], [1.0, np.nan])  # was reported as 'k'
    with pytest.raises(ValueError, match="flops_grid"):
        best_model_for_budget({"m": (BetaCoverageLaw(2.0, 0.4), AttemptCost(1e9, 10))}, [1e12, np.inf])


def test_law_rejects_nan_attempts_and_correlation_rejects_bad_p() -> None:
    with pytest.raises(ValueError, match=r"\bk\b"):
        BetaCoverageLaw(2.0, 0.4).pass_at_k([1.0, np.nan])
    with pytest.raises(ValueError, match=r"\bp\b"):
        PowerCorrelation(0.5).log_p_all_fail(np.array([0.2, 1.5]), 3)
    with pytest.raises(ValueError, match="num"):
        log_spaced_ks(100, num=0)


def test_config_validates_its_fields() -> None:
    from icml25.inference_scaling.reproduce import Config

    Config.quick()
    Config.full()
    for kwargs, field in [({"n_ks": 0}, "n_ks"), ({"slope_k_hi": 50.0}, "slope_k_hi"), ({"vae_k_max": 30}, "vae_k_max"),
                          ({"vae_rhos": (1.0,)}, "vae_rhos"), ({"vae_lr": float("nan")}, "vae_lr"),
                          ({"vae_temperatures": ()}, "vae_temperatures"), ({"extrap_budget": 10_000}, "extrap_budget"),
                          ({"vae_k_max": 2048}, "vae_k_max"), ({"delta_quantile": 1.0}, "delta_quantile")]:
        with pytest.raises((ValueError, TypeError), match=field):
            Config(**kwargs)
