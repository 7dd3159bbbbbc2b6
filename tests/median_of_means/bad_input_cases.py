"""Bad-input registry of median_of_means for the fuzz contract (tests/core/test_bad_input.py): one valid call per
public callable and the kinds of the arguments to corrupt. Sample arguments whose extra axes are legitimate
(``x`` of median_of_means, ``values``, ``r``, ``y`` of scikit-learn's column-vector convention) are not declared;
their NaN/inf handling is tested in test_validation.py."""

from __future__ import annotations

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase


def _X(n: int = 120) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.vstack([rng.normal(size=(n // 2, 2)), rng.normal(size=(n - n // 2, 2)) + 6.0])


def _y() -> np.ndarray:
    X = _X()
    return X @ np.array([1.0, -1.0]) + np.random.default_rng(1).normal(size=len(X))


def _kmeans():  # type: ignore[no-untyped-def]
    from icml25.median_of_means import MoMKMeans

    return MoMKMeans(2, n_blocks=5, n_init=1, max_iter=5, random_state=0).fit(_X())


def _regressor():  # type: ignore[no-untyped-def]
    from icml25.median_of_means import MoMRegressor

    return MoMRegressor(n_blocks=5, max_iter=20, random_state=0).fit(_X(), _y())


def _partition() -> np.ndarray:
    return np.arange(120).reshape(6, 20)


CASES = [
    BadInputCase("median_of_means", lambda: {"x": np.arange(20.0), "K": 5, "rng": 0}, {"K": SIZE}),
    BadInputCase("UniformMoM", lambda: {"K": 5, "random_state": 0}, {"K": SIZE}),
    BadInputCase("UniformMoM.fit", lambda: {"X": _X()}, {}, obj=lambda: _uniform()),
    BadInputCase("UniformMoM.estimate", lambda: {"funcs": lambda X: X}, {}, obj=lambda: _uniform().fit(_X())),
    BadInputCase("choose_K", lambda: {"delta": 0.05, "n_functions": 10}, {"delta": PROB, "n_functions": SIZE}),
    BadInputCase("make_partition", lambda: {"n": 20, "K": 4, "random_state": 0}, {"n": SIZE, "K": SIZE}),
    BadInputCase("block_means", lambda: {"values": np.arange(120.0), "partition": _partition()},
                 {"partition": ARRAY}),
    BadInputCase("lower_median", lambda: {"values": np.arange(5.0)}, {}),
    BadInputCase("symmetric_lomax", lambda: {"alpha": 1.5, "size": 10, "scale": 1.0, "random_state": 0},
                 {"alpha": POSITIVE, "size": SIZE, "scale": POSITIVE}),
    BadInputCase("lomax_abs_moment", lambda: {"alpha": 3.0, "p": 1.5, "scale": 1.0},
                 {"alpha": POSITIVE, "p": POSITIVE, "scale": POSITIVE}),
    BadInputCase("student_t", lambda: {"df": 3.0, "size": 10, "random_state": 0}, {"df": POSITIVE, "size": SIZE}),
    BadInputCase("classical_mom_bound", lambda: {"v_p": 1.0, "p": 1.5, "n": 1000, "delta": 0.05},
                 {"v_p": POSITIVE, "p": REAL, "n": SIZE, "delta": PROB}),
    BadInputCase("contaminate", lambda: {"X": _X(), "fraction": 0.05, "location": 100.0, "random_state": 0},
                 {"X": ARRAY, "fraction": PROB, "location": REAL}),
    BadInputCase("MoMKMeans", lambda: {"n_clusters": 2},
                 skip="scikit-learn estimator: the constructor only stores parameters; fit validates them"),
    BadInputCase("MoMKMeans.fit", lambda: {"X": _X()}, {"X": ARRAY},
                 obj=lambda: __import__("icml25.median_of_means", fromlist=["MoMKMeans"]).MoMKMeans(
                     2, n_blocks=5, n_init=1, max_iter=5, random_state=0)),
    BadInputCase("MoMKMeans.predict", lambda: {"X": _X(10)}, {"X": ARRAY}, obj=_kmeans),
    BadInputCase("MoMKMeans.transform", lambda: {"X": _X(10)}, {"X": ARRAY}, obj=_kmeans),
    BadInputCase("kmeans_losses", lambda: {"X": _X(), "centers": np.array([[0.0, 0.0], [6.0, 6.0]])},
                 {"X": ARRAY, "centers": ARRAY}),
    BadInputCase("mom_kmeans_risk", lambda: {"X": _X(), "centers": np.array([[0.0, 0.0], [6.0, 6.0]]),
                                             "partition": _partition()},
                 {"X": ARRAY, "centers": ARRAY, "partition": ARRAY}),
    BadInputCase("MoMRegressor", lambda: {"loss": "huber"},
                 skip="scikit-learn estimator: the constructor only stores parameters; fit validates them"),
    BadInputCase("MoMRegressor.fit", lambda: {"X": _X(), "y": _y()}, {"X": ARRAY},
                 obj=lambda: __import__("icml25.median_of_means", fromlist=["MoMRegressor"]).MoMRegressor(
                     n_blocks=5, max_iter=20, random_state=0)),
    BadInputCase("MoMRegressor.predict", lambda: {"X": _X(10)}, {"X": ARRAY}, obj=_regressor),
    BadInputCase("loss_and_derivative", lambda: {"r": np.linspace(-2, 2, 5), "loss": "huber", "huber_c": 1.0,
                                                 "quantile": 0.3, "power": 1.5},
                 {"loss": TEXT, "huber_c": POSITIVE, "quantile": PROB, "power": REAL}),
]


def _uniform():  # type: ignore[no-untyped-def]
    from icml25.median_of_means import UniformMoM

    return UniformMoM(K=5, random_state=0)
