"""Maximum-likelihood and least-squares fits: recovery on synthetic data, agreement with scipy.stats.betabinom."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from icml25.inference_scaling import (
    BetaCoverageLaw,
    FitError,
    PowerCorrelation,
    RepeatCorrelation,
    betabinom_loglik,
    fit_correlation,
    fit_counts,
    fit_curve,
    sample_counts,
)


def test_loglik_equals_scipy_betabinom() -> None:
    """Our likelihood of failures f = n - c under BetaBinom(n, alpha, beta) is scipy's logpmf."""
    rng = np.random.default_rng(0)
    n = rng.integers(5, 3000, 50)
    c = rng.binomial(n, rng.beta(0.5, 3.0, 50))
    ref = stats.betabinom.logpmf(n - c, n, 3.0, 0.5).sum()
    assert betabinom_loglik(3.0, 0.5, n, c) == pytest.approx(ref, rel=1e-10)
    # zero-inflated: mixture with a point mass at c = 0
    A = 0.7
    mix = np.log(A * stats.betabinom.pmf(n - c, n, 3.0, 0.5) + (1 - A) * (c == 0)).sum()
    assert betabinom_loglik(3.0, 0.5, n, c, A=A) == pytest.approx(mix, rel=1e-10)


def test_recovery_spec_thresholds(global_seed: int) -> None:
    """alpha = 5, beta = 0.3, 500 problems x 2,000 attempts: |beta_hat - beta| <= 0.05, |ln alpha ratio| <= 0.3."""
    n, c = sample_counts(5.0, 0.3, 1.0, 500, 2000, random_state=global_seed)
    fit = fit_counts(n, c)
    assert abs(fit.beta - 0.3) <= 0.05
    assert abs(np.log(fit.alpha / 5.0)) <= 0.3
    assert fit.n_params == 2 and fit.aic == pytest.approx(4 - 2 * fit.loglik)


def test_mle_matches_generic_optimiser_on_scipy_likelihood() -> None:
    n, c = sample_counts(8.0, 0.4, 1.0, 300, 500, random_state=3)

    def nll(t: np.ndarray) -> float:
        return -stats.betabinom.logpmf(n - c, n, np.exp(t[0]), np.exp(t[1])).sum()

    ref = optimize.minimize(nll, [0.0, 0.0], method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-10,
                                                                              "maxiter": 5000})
    fit = fit_counts(n, c)
    assert fit.alpha == pytest.approx(np.exp(ref.x[0]), rel=1e-3)
    assert fit.beta == pytest.approx(np.exp(ref.x[1]), rel=1e-3)


def test_standard_errors_are_calibrated() -> None:
    """The Hessian SE of beta is close to the spread of beta_hat over replicate data sets."""
    betas, ses = [], []
    for s in range(30):
        fit = fit_counts(*sample_counts(3.0, 0.5, 1.0, 200, 300, random_state=100 + s))
        betas.append(fit.beta)
        ses.append(fit.se["beta"])
    assert np.std(betas) == pytest.approx(np.mean(ses), rel=0.35)


def test_zero_inflated_recovers_ceiling() -> None:
    n, c = sample_counts(1.0, 0.6, 0.75, 1500, 1000, random_state=1)
    zi = fit_counts(n, c, fit_A=True)
    plain = fit_counts(n, c)
    assert zi.A == pytest.approx(0.75, abs=0.04)
    assert zi.beta == pytest.approx(0.6, abs=0.1)
    assert zi.aic < plain.aic - 10  # the ceiling is needed
    assert set(zi.se) == {"alpha", "beta", "A"}


def test_fit_counts_handles_unequal_attempts() -> None:
    rng = np.random.default_rng(5)
    p_fail = rng.beta(4.0, 0.5, 800)
    n = rng.choice([200, 1000, 20_000], 800)
    c = rng.binomial(n, 1 - p_fail)
    fit = fit_counts(n, c)
    assert fit.beta == pytest.approx(0.5, abs=0.08)


def test_all_zero_counts_and_degenerate_fits_are_reported() -> None:
    with pytest.raises(ValueError, match="no successes"):
        fit_counts(100, np.zeros(20, dtype=int))
    with pytest.raises(ValueError, match="no failures"):
        fit_counts(100, np.full(20, 100))
    # a single failure in 2,000 attempts: alpha, beta run off to infinity together (degenerate MLE)
    with pytest.raises(FitError, match="degenerate|converge"):
        fit_counts(100, np.array([100] * 19 + [99]))


def test_fit_curve_recovers_exact_parameters() -> None:
    truth = BetaCoverageLaw(7.0, 0.33, A=0.9)
    ks = np.unique(np.round(np.logspace(0, 4, 40)))
    fit = fit_curve(ks, truth.pass_at_k(ks), fit_A=True)
    assert fit.rmse < 1e-6
    assert fit.law.alpha == pytest.approx(7.0, rel=1e-3)
    assert fit.law.beta == pytest.approx(0.33, rel=1e-3)
    assert fit.law.A == pytest.approx(0.9, rel=1e-4)


def test_fit_curve_rejects_bad_curves() -> None:
    with pytest.raises(ValueError, match="non-decreasing"):
        fit_curve([1, 2, 3], [0.1, 0.3, 0.2])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fit_curve([1, 2], [0.1, 1.2])
    with pytest.raises(ValueError, match="equal length"):
        fit_curve([1, 2], [0.1])
    with pytest.raises(ValueError, match="weights"):
        fit_curve([1, 2, 3], [0.1, 0.2, 0.3], weights=[1, 1])


@pytest.mark.parametrize("family,value", [(PowerCorrelation(), 0.6), (RepeatCorrelation(), 0.5)])
def test_fit_correlation_recovers_parameter(family, value) -> None:
    base = BetaCoverageLaw(2.0, 0.6, A=0.8)
    ks = 2 ** np.arange(9)
    truth = BetaCoverageLaw(2.0, 0.6, 0.8, family.replace(value))
    fit = fit_correlation(base, ks, truth.pass_at_k(ks), family)
    assert fit.law.correlation.value == pytest.approx(value, abs=1e-3)
    assert fit.rmse < 1e-5
