"""Closed forms of the Beta coverage law vs Monte Carlo, quadrature and limits; correlated families."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from icml25.inference_scaling import IID, BetaCoverageLaw, PowerCorrelation, RepeatCorrelation, sample_counts


def test_pass_at_1_is_mean_success() -> None:
    law = BetaCoverageLaw(3.0, 0.7, A=0.8)
    assert float(law.pass_at_k(1)) == pytest.approx(0.8 * 0.7 / 3.7, rel=1e-12)
    assert law.pass_at_1 == pytest.approx(0.8 * 0.7 / 3.7)


def test_closed_form_matches_monte_carlo() -> None:
    alpha, beta, A = 4.0, 0.4, 0.9
    rng = np.random.default_rng(0)
    p = rng.beta(alpha, beta, 400_000)
    law = BetaCoverageLaw(alpha, beta, A)
    for k in (1, 3, 10, 100, 1000):
        mc = A * (1 - np.mean(p**k))
        assert float(law.pass_at_k(k)) == pytest.approx(mc, abs=4e-3)


def test_closed_form_matches_quadrature() -> None:
    alpha, beta = 2.5, 0.3
    law = BetaCoverageLaw(alpha, beta)
    for k in (1, 5, 50):
        val = integrate.quad(lambda p, k=k: p**k * stats.beta.pdf(p, alpha, beta), 0, 1, limit=200)[0]
        assert float(law.inference_loss(k)) == pytest.approx(val, rel=1e-6)


def test_monotone_and_tends_to_ceiling() -> None:
    law = BetaCoverageLaw(10.0, 0.3, A=0.7)
    ks = np.logspace(0, 9, 60)
    v = law.pass_at_k(ks)
    assert np.all(np.diff(v) > 0) and np.all(v < 0.7)
    assert float(law.pass_at_k(1e30)) == pytest.approx(0.7, abs=1e-6)
    assert np.isfinite(law.log_inference_loss(1e9))  # no underflow in log space


@pytest.mark.parametrize("alpha,beta", [(1.0, 0.35), (5.0, 0.3), (20.0, 0.5), (0.5, 0.9)])
def test_asymptotic_form_within_1_percent_for_k_above_100_alpha(alpha: float, beta: float) -> None:
    law = BetaCoverageLaw(alpha, beta)
    ks = 100 * alpha * np.logspace(0, 4, 30)
    rel = np.abs(law.asymptotic_loss(ks) / law.inference_loss(ks) - 1)
    assert rel.max() <= 0.01
    rel_uniform = np.abs(law.asymptotic_loss(ks, uniform=True) / law.inference_loss(ks) - 1)
    assert rel_uniform.max() <= rel.max()


def test_exponent_is_log_log_slope() -> None:
    law = BetaCoverageLaw(3.0, 0.4)
    k = np.array([1e5, 1e7])
    slope = np.diff(np.log(law.inference_loss(k))) / np.diff(np.log(k))
    assert slope[0] == pytest.approx(-law.exponent, abs=1e-3)
    assert BetaCoverageLaw(3.0, 0.4, correlation=PowerCorrelation(0.5)).exponent == pytest.approx(0.2)


def test_k_for_coverage_inverts_pass_at_k() -> None:
    law = BetaCoverageLaw(6.0, 0.3, A=0.9)
    for target in (0.1, 0.5, 0.8):
        k = law.k_for_coverage(target)
        assert float(law.pass_at_k(k)) == pytest.approx(target, rel=1e-8)
    assert float(law.inference_loss(law.k_for_loss(0.05))) == pytest.approx(0.05, rel=1e-8)
    with pytest.raises(ValueError, match="target"):
        law.k_for_coverage(0.95)


def test_correlations_reduce_to_iid() -> None:
    ks = np.array([1, 2, 7, 64, 1000])
    iid = BetaCoverageLaw(4.0, 0.5).pass_at_k(ks)
    assert np.allclose(BetaCoverageLaw(4.0, 0.5, correlation=RepeatCorrelation(0.0)).pass_at_k(ks), iid)
    assert np.allclose(BetaCoverageLaw(4.0, 0.5, correlation=PowerCorrelation(1.0)).pass_at_k(ks), iid)


def test_repeat_expectation_matches_quadrature_and_simulation() -> None:
    alpha, beta, rho = 2.0, 0.6, 0.7
    corr = RepeatCorrelation(rho)
    for k in (1, 4, 30, 300):
        def integrand(p: float, k: int = k) -> float:
            return float(np.exp(corr.log_p_all_fail(p, k))) * stats.beta.pdf(p, alpha, beta)

        val = integrate.quad(integrand, 0, 1, limit=400, points=[0.9, 0.99, 0.999])[0]
        assert float(np.exp(corr.log_expected_all_fail(alpha, beta, k))) == pytest.approx(val, rel=1e-5)
    # simulate the Markov chain of outcomes and compare all-fail frequencies
    law = BetaCoverageLaw(alpha, beta, correlation=corr)
    outcomes = law.sample(20_000, 16, random_state=0, return_outcomes=True)
    for k in (1, 4, 16):
        emp = 1 - np.mean(outcomes[:, :k].any(axis=1))
        assert emp == pytest.approx(float(law.inference_loss(k)), abs=0.012)


def test_repeat_correlation_lowers_coverage() -> None:
    ks = np.array([2, 10, 100])
    base = BetaCoverageLaw(3.0, 0.4).pass_at_k(ks)
    assert np.all(BetaCoverageLaw(3.0, 0.4, correlation=RepeatCorrelation(0.5)).pass_at_k(ks) < base)
    assert np.all(BetaCoverageLaw(3.0, 0.4, correlation=PowerCorrelation(0.5)).pass_at_k(ks) < base)


def test_sample_counts_marginals() -> None:
    n, c = sample_counts(2.0, 1.0, 0.6, 20_000, 50, random_state=0)
    assert np.all(n == 50)
    # mean success = A * beta / (alpha + beta)
    assert np.mean(c / n) == pytest.approx(0.6 / 3.0, abs=0.01)
    # the unsolvable 40% never succeed; a solvable problem with 50 attempts rarely scores zero
    assert np.mean(c == 0) >= 0.4


def test_invalid_parameters() -> None:
    with pytest.raises(ValueError, match="alpha"):
        BetaCoverageLaw(-1.0, 0.5)
    with pytest.raises(ValueError, match="A must be"):
        BetaCoverageLaw(1.0, 0.5, A=1.5)
    with pytest.raises(TypeError, match="correlation"):
        BetaCoverageLaw(1.0, 0.5, correlation="iid")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rho"):
        RepeatCorrelation(1.0)
    with pytest.raises(ValueError, match="gamma"):
        PowerCorrelation(0.0)
    with pytest.raises(ValueError, match="joint law"):
        BetaCoverageLaw(1.0, 0.5, correlation=PowerCorrelation(0.5)).sample(5, 5, 0)
    assert isinstance(IID(), object)
