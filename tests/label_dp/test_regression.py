from __future__ import annotations

import warnings

import numpy as np
import pytest
import statsmodels.api as sm

from icml25.label_dp import (
    ConvergenceWarning,
    RRBinaryRegression,
    TwoStageDesign,
    load_adult,
    load_pima,
    randomized_response,
)
from icml25.label_dp.regression import _loglik, fisher_scoring


def _data(n=3000, seed=0, link_fn=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    eta = -1.0 + X @ [1.0, -0.5]
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    return X, y, rng


@pytest.mark.parametrize("link,family_link", [("logit", sm.families.links.Logit()),
                                              ("probit", sm.families.links.Probit())])
def test_no_noise_equals_statsmodels_glm(link, family_link) -> None:
    X, y, _ = _data()
    # the identity channel is p = q = 1 (P(y~=1|y=1) = P(y~=0|y=0) = 1)
    m = RRBinaryRegression(link=link, p=1.0, q=1.0).fit(X, y)
    ref = sm.GLM(y, sm.add_constant(X), family=sm.families.Binomial(link=family_link)).fit()
    np.testing.assert_allclose(m.params_, ref.params, atol=1e-6)
    np.testing.assert_allclose(m.bse_, ref.bse, rtol=1e-3)


def test_score_matches_finite_differences() -> None:
    X, y, rng = _data(500, 1)
    Z = np.column_stack([np.ones(500), X])
    p, q = np.full(500, 0.8), np.full(500, 0.65)
    yt = randomized_response(y, p, q, rng)
    beta = np.array([-0.3, 0.7, 0.2])
    res = fisher_scoring(Z, yt, p, q, "logit", max_iter=0, beta0=beta)
    h = 1e-6
    fd = [(_loglik(Z, yt, beta + h * e, p, q, "logit", 0.0) - _loglik(Z, yt, beta - h * e, p, q, "logit", 0.0))
          / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(res["score"].sum(0), fd, rtol=1e-5, atol=1e-6)


def test_rr_mle_is_consistent_and_naive_is_not() -> None:
    X, y, rng = _data(20000, 2)
    yt = randomized_response(y, 0.75, 0.75, rng)
    m = RRBinaryRegression(p=0.75, q=0.75).fit(X, yt)
    truth = np.array([-1.0, 1.0, -0.5])
    assert np.all(np.abs(m.params_ - truth) < 4 * m.bse_)
    ci = m.conf_int()
    assert np.all((ci[:, 0] < truth) & (truth < ci[:, 1]))
    naive = RRBinaryRegression(p=1.0, q=1.0).fit(X, yt)
    assert np.abs(naive.coef_[0] - 1.0) > 0.3  # attenuated towards 0
    proba = m.predict_proba(X[:5])
    np.testing.assert_allclose(proba.sum(1), 1.0)
    assert "const" in m.summary() and m.score(X, y) > 0.6


def test_two_stage_design_only_sees_private_labels() -> None:
    X, y, rng = _data(4000, 3)
    Z = np.column_stack([np.ones(4000), X])
    seen = []

    def fit_fn(Xs, ys, p, q):
        seen.append(np.asarray(ys).copy())
        return RRBinaryRegression(fit_intercept=False).fit(Xs, ys, sample_p=p, sample_q=q).coef_

    d = TwoStageDesign(eps=1.0, delta=0.0)
    yt = d.privatise(Z, y, rng, fit_fn=fit_fn)
    assert len(seen) == 1 and np.array_equal(seen[0], yt[d.stage1_])
    assert d.stage1_.sum() == 400 and d.channel2_.is_private(1.0, 0.0)
    m = RRBinaryRegression(fit_intercept=False).fit(Z, yt, sample_p=d.p_, sample_q=d.q_)
    assert m.converged_


def test_separation_warns_and_ridge_fallback() -> None:
    X = np.r_[-np.ones(50), np.ones(50)][:, None] + np.random.default_rng(0).normal(0, 0.01, (100, 1))
    y = (X[:, 0] > 0).astype(int)
    with pytest.warns(ConvergenceWarning, match="fallback_ridge"):
        m = RRBinaryRegression(p=1.0, q=1.0).fit(X, y)
    assert not m.converged_
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = RRBinaryRegression(p=1.0, q=1.0, fallback_ridge=1e-3).fit(X, y)
    assert np.all(np.isfinite(r.params_)) and r.ridge_used_ == 1e-3


@pytest.mark.parametrize("kwargs,X,y,msg", [
    ({"p": 0.4, "q": 0.5}, np.random.default_rng(0).normal(size=(20, 2)), np.r_[np.zeros(10), np.ones(10)],
     "carries no information"),
    ({"p": 0.8, "q": 0.8}, np.random.default_rng(0).normal(size=(21, 2)), np.arange(21) % 3,
     "Only binary classification is supported"),
    ({"p": 0.8, "q": 0.8}, np.random.default_rng(0).normal(size=(20, 2)), np.r_[np.zeros(19), np.nan],
     "y contains NaN"),
    ({"p": 0.8, "q": 0.8}, np.random.default_rng(0).normal(size=(20, 2)), np.linspace(0, 1, 20),
     "Unknown label type"),
    ({}, np.random.default_rng(0).normal(size=(20, 2)), np.r_[np.zeros(10), np.ones(10)],
     "pass the channel actually applied"),
    ({"p": 0.8, "q": 0.8}, np.column_stack([np.ones(20), np.arange(20.0)]), np.r_[np.zeros(10), np.ones(10)],
     "constant"),
    ({"p": 0.8, "q": 0.8}, np.column_stack([np.arange(20.0), 2 * np.arange(20.0)]),
     np.r_[np.zeros(10), np.ones(10)], "collinear"),
    ({"link": "cauchit", "p": 0.8, "q": 0.8}, np.random.default_rng(0).normal(size=(20, 2)),
     np.r_[np.zeros(10), np.ones(10)], "link must be"),
])
def test_bad_input(kwargs, X, y, msg) -> None:
    with pytest.raises(ValueError, match=msg):
        RRBinaryRegression(**kwargs).fit(X, y)


def test_labels_are_encoded_like_a_scikit_learn_classifier() -> None:
    # fails if: fit assumes 0/1 labels, so that named classes are refused or the positive class is not classes_[1]
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 2))
    y01 = (X[:, 0] - X[:, 1] + rng.normal(size=500) > 0).astype(int)
    ref = RRBinaryRegression(p=0.85, q=0.8).fit(X, y01)
    named = RRBinaryRegression(p=0.85, q=0.8).fit(X, np.array(["no", "yes"])[y01])
    assert named.classes_.tolist() == ["no", "yes"]
    np.testing.assert_allclose(named.params_, ref.params_)
    assert set(named.predict(X).tolist()) <= {"no", "yes"}
    np.testing.assert_array_equal(named.predict(X) == "yes", ref.predict(X) == 1)


def test_loaders() -> None:
    X, y, names = load_adult()
    assert X.shape == (30162, 4) and y.mean() == pytest.approx(0.249, abs=0.001) and names[-1] == "male"
    Xp, yp, _ = load_pima()
    assert Xp.shape[1] == 5 and 700 < len(yp) < 768 and set(np.unique(yp)) == {0, 1}
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_adult(path="/nonexistent/adult.csv")
