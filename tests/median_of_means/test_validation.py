"""Bad input for median_of_means: NaN/inf in samples (arguments the fuzz registry cannot declare because extra
axes are legitimate there), block counts, the reproduction Config, import without scikit-learn."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from icml25.median_of_means import UniformMoM, block_means, contaminate, lower_median, median_of_means
from icml25.median_of_means.reproduce import Config
from icml25.testing import run_without


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_samples_must_be_finite(bad: float) -> None:
    x = np.arange(20.0)
    x[3] = bad
    with pytest.raises(ValueError, match="x must be finite"):
        median_of_means(x, 4, rng=0)
    with pytest.raises(ValueError, match="values must be finite"):
        block_means(x, np.arange(20).reshape(4, 5))
    with pytest.raises(ValueError, match="values must be finite"):
        lower_median(x)
    with pytest.raises(ValueError, match="X must be finite"):
        UniformMoM(4).fit(x.reshape(10, 2))


def test_function_values_must_be_finite() -> None:
    est = UniformMoM(2, random_state=0).fit(np.ones((10, 2)))
    with pytest.raises(ValueError, match="funcs values must be finite"):
        est.estimate(lambda X: np.log(X - 1.0))
    with pytest.raises(TypeError, match="funcs must be a callable"):
        est.estimate("mean")


def test_K_larger_than_the_sample_names_the_sample() -> None:
    with pytest.raises(ValueError, match=r"K \(number of blocks\) must be in \[1, n\] = \[1, 1\].*length of x"):
        median_of_means(np.ones((1, 5)), 3)
    with pytest.raises(ValueError, match="X"):
        UniformMoM(11).fit(np.ones((10, 2)))


def test_multivariate_sample_is_valid() -> None:
    est = median_of_means(np.ones((20, 3)), 4, rng=0)
    assert est.shape == (3,)


def test_partition_must_be_disjoint_integers() -> None:
    with pytest.raises(ValueError, match="disjoint"):
        block_means(np.arange(6.0), np.array([[0, 1], [1, 2]]))
    with pytest.raises(TypeError, match="partition must hold integers"):
        block_means(np.arange(6.0), np.array([[0.5, 1.0]]))


def test_contaminate_location_shape() -> None:
    with pytest.raises(ValueError, match="location must be a scalar or have one entry per column"):
        contaminate(np.zeros((10, 2)), 0.1, np.zeros(3), random_state=0)
    X, mask = contaminate(np.zeros((10, 2)), 0.2, np.array([5.0, 6.0]), random_state=0)
    assert mask.sum() == 2 and np.all(X[mask] == [5.0, 6.0])


def test_regressor_y_must_be_finite() -> None:
    pytest.importorskip("sklearn")
    from icml25.median_of_means import MoMRegressor

    X = np.random.default_rng(0).normal(size=(50, 2))
    y = X[:, 0].copy()
    y[0] = np.nan
    with pytest.raises(ValueError, match="y"):
        MoMRegressor(n_blocks=3, max_iter=5).fit(X, y)
    with pytest.raises(ValueError, match="power must be <= 2"):
        MoMRegressor("power", power=3.0).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="radius"):
        MoMRegressor(radius=-1.0).fit(X, X[:, 0])


@pytest.mark.parametrize("field,value", [
    ("bound_n", 0), ("bound_reps", 5), ("bound_alpha", 1.0), ("bound_p", 2.5), ("bound_p", 1.9),
    ("delta", 0.0), ("delta", math.nan), ("dim", 0), ("uniform_K", 0), ("alphas", (1.5,)), ("alphas", ()),
    ("ns", (1000,)), ("ns", (1000, 10)), ("uniform_reps", 2), ("class_sizes", (0, 10)), ("class_n", 10),
    ("km_nus", (3.0, 10.0)), ("km_n", 10), ("km_reps", 0), ("reg_n", 5), ("reg_reps", 0),
    ("with_theilsen", "yes"),
])
def test_config_rejects_bad_fields(field: str, value: object) -> None:
    with pytest.raises((ValueError, TypeError), match=field):
        dataclasses.replace(Config.quick(), **{field: value})


def test_config_presets_are_valid() -> None:
    Config.quick()
    Config.full()


def test_import_without_sklearn() -> None:
    code = (
        "import numpy as np\n"
        "import icml25.median_of_means as mm\n"
        "assert mm.median_of_means(np.arange(10.0), 2, rng=0) >= 0\n"
        "try:\n"
        "    mm.MoMKMeans\n"
        "except ImportError as e:\n"
        "    assert \"pip install 'icml25[stats]'\" in str(e), e\n"
        "else:\n"
        "    raise SystemExit('MoMKMeans imported without scikit-learn')\n"
    )
    res = run_without(("sklearn", "statsmodels"), code)
    assert res.returncode == 0, res.stderr[-2000:]
