"""Split conformal prediction: quantile rule, coverage band, MAPIE agreement, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25.croq import SplitConformal, conformal_threshold, min_calibration_size, option_mask
from icml25.testing import requires


def test_threshold_on_hand_made_scores() -> None:
    conf = np.array([0.9, 0.1, 0.5, 0.7, 0.3, 0.8, 0.2, 0.6, 0.4])  # n = 9
    assert conformal_threshold(conf, 0.1) == 0.1  # k = floor(0.1 * 10) = 1 -> smallest
    assert conformal_threshold(conf, 0.2) == 0.2  # k = 2
    assert conformal_threshold(conf, 0.35) == 0.3  # k = floor(3.5) = 3


@given(st.lists(st.floats(0, 1), min_size=20, max_size=200), st.floats(0.05, 0.95))
@settings(max_examples=60, deadline=None)
def test_threshold_is_tightest_valid_by_brute_force(conf: list[float], alpha: float) -> None:
    """tau is the largest candidate t with #(c < t) <= floor(alpha (n+1)) - 1 (brute force over candidates)."""
    c = np.asarray(conf)
    k = math.floor(alpha * (len(c) + 1) + 1e-9)
    if k == 0:
        with pytest.raises(ValueError, match="need n >="):
            conformal_threshold(c, alpha)
        return
    tau = conformal_threshold(c, alpha)
    best = max(t for t in c if (c < t).sum() <= k - 1)
    assert tau == best


def test_coverage_within_binomial_band_over_many_splits(global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    alpha, n_cal, n_test, reps = 0.1, 200, 500, 200
    cov = []
    for _ in range(reps):
        p = rng.dirichlet(np.ones(5), size=n_cal + n_test)
        y = (p.cumsum(1) > rng.random((len(p), 1))).argmax(1)
        cp = SplitConformal(alpha)
        cp.calibrate_from_scores(p[:n_cal], y[:n_cal])
        cov.append(cp.predict_sets(p[n_cal:])[np.arange(n_test), y[n_cal:]].mean())
    # exact expected coverage of split CP: 1 - k / (n + 1) with k = floor(alpha (n+1)); sd ~ beta-binomial
    expected = 1 - math.floor(alpha * (n_cal + 1)) / (n_cal + 1)
    sd = math.sqrt(expected * (1 - expected) / n_cal + expected * (1 - expected) / n_test) / math.sqrt(reps)
    assert abs(np.mean(cov) - expected) < 4 * sd + 1e-3
    assert np.mean(cov) >= 1 - alpha - 4 * sd


@requires("mapie")
def test_sets_match_mapie_lac() -> None:
    from mapie.classification import SplitConformalClassifier
    from sklearn.base import BaseEstimator, ClassifierMixin

    class Prefit(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.classes_ = np.arange(4)
            return self

        def predict_proba(self, X):
            return np.asarray(X)

        def predict(self, X):
            return np.asarray(X).argmax(1)

    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(4), size=1500)
    y = (p.cumsum(1) > rng.random((1500, 1))).argmax(1)
    for alpha in (0.05, 0.13, 0.2):
        est = Prefit().fit(p[:10], y[:10])
        mapie = SplitConformalClassifier(est, confidence_level=1 - alpha, conformity_score="lac", prefit=True)
        mapie.conformalize(p[:700], y[:700])
        _, sets = mapie.predict_set(p[700:])
        ours = SplitConformal(alpha)
        ours.calibrate_from_scores(p[:700], y[:700])
        assert np.array_equal(ours.predict_sets(p[700:]), sets[:, :, 0])


def test_masks_and_variable_option_counts() -> None:
    cp = SplitConformal(0.2)
    cp.tau_ = 0.1
    s = np.array([[0.5, 0.3, 0.2, np.nan], [0.4, 0.05, 0.3, 0.25]])
    sets = cp.predict_sets(s, np.array([3, 4]))
    assert sets.tolist() == [[True, True, True, False], [True, False, True, True]]
    assert option_mask(np.array([2, 3])).tolist() == [[True, True, False], [True, True, True]]


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_bad_alpha(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        SplitConformal(alpha)


def test_bad_inputs_name_the_problem() -> None:
    with pytest.raises(ValueError, match="need n >= 19"):
        conformal_threshold(np.ones(10), 0.05)
    assert min_calibration_size(0.05) == 19
    assert conformal_threshold(np.ones(10), 0.05, allow_infinite=True) == -math.inf
    with pytest.raises(ValueError, match="NaN"):
        conformal_threshold(np.array([0.1, np.nan] * 20), 0.1)
    cp = SplitConformal(0.1)
    with pytest.raises(ValueError, match="outside the option range"):
        cp.calibrate_from_scores(np.full((30, 4), 0.25), np.full(30, 4))
    with pytest.raises(ValueError, match="not fitted"):  # scikit-learn's NotFittedError
        cp.predict_sets(np.ones((2, 4)))
    with pytest.raises(ValueError, match="at least 2 options"):
        option_mask(np.array([1, 4]))
    cp.tau_ = 0.2
    with pytest.raises(ValueError, match="NaN"):
        cp.predict_sets(np.array([[0.5, np.nan]]))
