"""Baseline laws recover their own parameters; compare_laws ranks the Beta law first on Beta data."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.inference_scaling import (
    BetaCurveLaw,
    ExpPowerLaw,
    NegLogPowerLaw,
    SingleDifficulty,
    compare_laws,
    sample_counts,
)

KS = np.unique(np.round(np.logspace(0, 4, 40)))


def test_exp_power_law_recovers_parameters() -> None:
    y = np.exp(-2.0 * KS**-0.4)
    law = ExpPowerLaw().fit(KS, y)
    assert law.a_ == pytest.approx(-2.0, rel=1e-6) and law.b_ == pytest.approx(-0.4, rel=1e-6)
    assert np.allclose(law.predict(KS), y)


def test_neg_log_power_law_recovers_parameters() -> None:
    y = np.exp(-1.5 * KS**-0.3)
    law = NegLogPowerLaw().fit(KS, y)
    assert law.C_ == pytest.approx(1.5, rel=1e-8) and law.b_ == pytest.approx(0.3, rel=1e-8)


def test_single_difficulty() -> None:
    y = 1 - 0.9**KS
    assert SingleDifficulty().fit(KS, y).p_bar_ == pytest.approx(0.1)
    assert SingleDifficulty().fit(KS[5:], y[5:]).p_bar_ == pytest.approx(0.1, rel=1e-4)
    assert SingleDifficulty().fit_counts(10, [1, 3]).p_bar_ == pytest.approx(0.2)


def test_unfitted_law_raises() -> None:
    with pytest.raises(ValueError, match="not fitted"):
        ExpPowerLaw().predict([1, 2])
    assert BetaCurveLaw(fit_A=False).get_params() == {"fit_A": False}


def test_compare_laws_on_beta_data() -> None:
    n, c = sample_counts(10.0, 0.3, 1.0, 400, 4000, random_state=0)
    ks = np.unique(np.round(np.logspace(0, np.log10(4000), 25))).astype(int)
    rows = {r["law"]: r for r in compare_laws(n, c, ks, holdout_k=400, random_state=0)}
    beta = rows["beta (count MLE)"]
    single = rows["single difficulty"]
    assert beta["mae_extrap"] < 0.03
    assert beta["mae_extrap"] < 0.2 * single["mae_extrap"]
    assert beta["mae_fit"] < single["mae_fit"]
    assert set(rows) == {"beta (count MLE)", "beta (curve LS)", "exp power law (Brown)",
                         "neg-log power law (Schaeffer)", "single difficulty"}


def test_beta_coverage_estimator_matches_fit_counts() -> None:
    from icml25.inference_scaling import BetaCoverageEstimator, fit_counts

    n, c = sample_counts(4.0, 0.4, 0.8, 300, 500, random_state=2)
    est = BetaCoverageEstimator(fit_A=True).fit(n, c)
    ref = fit_counts(n, c, fit_A=True).law
    assert np.allclose(est.predict(KS), ref.pass_at_k(KS))
    assert est.set_params(fit_A=False).get_params() == {"fit_A": False}
    with pytest.raises(ValueError, match="unknown parameter"):
        est.set_params(alpha=1.0)
