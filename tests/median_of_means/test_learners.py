from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from icml25.median_of_means import LOSSES, MoMKMeans, MoMRegressor, loss_and_derivative


@pytest.mark.parametrize("est", [MoMKMeans(n_clusters=3, n_init=2, max_iter=10), MoMRegressor(max_iter=40)],
                         ids=["MoMKMeans", "MoMRegressor"])
def test_sklearn_check_estimator(est) -> None:
    check_estimator(est)


def _clusters(nu: float, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    rng = np.random.default_rng(seed)
    return centres[rng.integers(3, size=n)] + rng.standard_t(nu, size=(n, 2)), centres


def _err(est, centres) -> float:
    from scipy.optimize import linear_sum_assignment

    D = np.linalg.norm(est[:, None] - centres[None], axis=2)
    r, c = linear_sum_assignment(D)
    return float(D[r, c].max())


@pytest.mark.parametrize("algorithm", ["mom-lloyd", "block-median", "candidates"])
def test_kmeans_recovers_centres_under_contamination(algorithm) -> None:
    X, centres = _clusters(3.0, 1500, 0)
    X[:15] = 1000.0  # 1% gross outliers: K = 61 >= 2*15 + 1
    mom = MoMKMeans(3, n_blocks=61, algorithm=algorithm, n_init=4, random_state=0).fit(X)
    assert _err(mom.cluster_centers_, centres) < 1.0
    km = KMeans(3, n_init=4, random_state=0).fit(X)
    assert _err(km.cluster_centers_, centres) > 10.0  # the mean-based k-means is captured by the outliers


def test_kmeans_matches_lloyd_on_clean_data_and_is_seeded() -> None:
    X, centres = _clusters(50.0, 900, 1)
    a = MoMKMeans(3, n_blocks=9, n_init=3, random_state=7).fit(X)
    b = MoMKMeans(3, n_blocks=9, n_init=3, random_state=7).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    km = KMeans(3, n_init=5, random_state=0).fit(X)
    assert _err(a.cluster_centers_, km.cluster_centers_) < 0.3
    assert a.transform(X).shape == (900, 3) and set(a.predict(X)) == {0, 1, 2}
    np.testing.assert_array_equal(a.labels_, a.predict(X))


def test_kmeans_bad_input() -> None:
    with pytest.raises(ValueError, match="n_clusters=5 must be <= n_samples=4"):
        MoMKMeans(5).fit(np.ones((4, 2)))
    with pytest.raises(ValueError, match="algorithm"):
        MoMKMeans(2, algorithm="nope").fit(np.random.default_rng(0).normal(size=(20, 2)))
    with pytest.raises(ValueError, match="NaN"):
        MoMKMeans(2).fit(np.array([[1.0, np.nan], [0.0, 0.0], [1.0, 1.0]]))


@pytest.mark.parametrize("loss", LOSSES)
def test_loss_derivative_matches_finite_differences(loss) -> None:
    r = np.linspace(-3.1, 3.3, 41)
    r = r[np.abs(r) > 1e-3]
    h = 1e-6
    lp, _ = loss_and_derivative(r + h, loss)
    lm, _ = loss_and_derivative(r - h, loss)
    _, d = loss_and_derivative(r, loss)
    np.testing.assert_allclose((lp - lm) / (2 * h), d, atol=1e-4)


def test_regression_matches_ols_on_gaussian_and_beats_it_on_heavy_tails() -> None:
    rng = np.random.default_rng(3)
    beta = np.array([1.0, -2.0, 0.5])
    X = rng.normal(size=(2000, 3))
    y = X @ beta + 2.0 + rng.normal(size=2000)
    mom = MoMRegressor("squared", random_state=0).fit(X, y)
    ols = LinearRegression().fit(X, y)
    assert np.abs(mom.coef_ - ols.coef_).max() < 0.1 and abs(mom.intercept_ - ols.intercept_) < 0.1
    errs_mom, errs_ols = [], []
    for s in range(6):
        rng = np.random.default_rng(10 + s)
        X = rng.standard_t(10, (1000, 3))
        y = X @ beta + rng.standard_t(1.2, 1000)
        errs_mom.append(np.linalg.norm(MoMRegressor("huber", random_state=s).fit(X, y).coef_ - beta))
        errs_ols.append(np.linalg.norm(LinearRegression().fit(X, y).coef_ - beta))
    assert np.median(errs_mom) < np.median(errs_ols)


def test_regression_in_pipeline_and_gridsearch() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 2))
    y = X @ [1.0, 1.0] + rng.standard_t(2, 300)
    gs = GridSearchCV(make_pipeline(StandardScaler(), MoMRegressor(max_iter=60, random_state=0)),
                      {"momregressor__n_blocks": [5, 11]}, cv=3).fit(X, y)
    assert gs.best_params_["momregressor__n_blocks"] in (5, 11)
    clean = X @ [1.0, 1.0]
    assert np.corrcoef(gs.predict(X), clean)[0, 1] > 0.95  # R^2 on t(2) noise is meaningless


def test_regression_bad_input() -> None:
    X, y = np.ones((10, 2)), np.ones(10)
    with pytest.raises(ValueError, match="loss must be one of"):
        MoMRegressor("cubic").fit(X, y)
    with pytest.raises(ValueError, match="quantile"):
        MoMRegressor("pinball", quantile=1.5).fit(X, y)
