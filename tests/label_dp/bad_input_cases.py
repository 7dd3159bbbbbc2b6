"""Bad-input registry of label_dp for the fuzz contract (tests/core/test_bad_input.py): one valid call per public
callable and the kinds of the arguments to corrupt."""

from __future__ import annotations

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase


def _X(n: int = 300, intercept: bool = True) -> np.ndarray:
    Z = np.random.default_rng(0).normal(size=(n, 2))
    return np.column_stack([np.ones(n), Z]) if intercept else Z


def _y(n: int = 300) -> np.ndarray:
    X = _X(n, intercept=False)
    return (X[:, 0] + 1.0 * np.random.default_rng(1).normal(size=n) > 0).astype(int)


def _fitted():  # type: ignore[no-untyped-def]
    from icml25.label_dp import RRBinaryRegression

    return RRBinaryRegression(p=0.8, q=0.8).fit(_X(intercept=False), _y())


def _channel():  # type: ignore[no-untyped-def]
    from icml25.label_dp import RRChannel

    return RRChannel(0.8, 0.7)


def _two_stage():  # type: ignore[no-untyped-def]
    from icml25.label_dp import TwoStageDesign

    return TwoStageDesign(1.0, 0.0, stage1_fraction=0.3)


_DESIGN = {"X": ARRAY, "beta": ARRAY, "p": PROB, "q": PROB}

CASES = [
    BadInputCase("RRChannel", lambda: {"p": 0.8, "q": 0.7}, {"p": PROB, "q": PROB}),
    BadInputCase("RRChannel.symmetric", lambda: {"eps": 1.0, "delta": 0.1}, {"eps": POSITIVE, "delta": PROB},
                 obj=_channel),
    BadInputCase("RRChannel.epsilon", lambda: {"delta": 0.1}, {"delta": PROB}, obj=_channel),
    BadInputCase("RRChannel.is_private", lambda: {"eps": 1.0, "delta": 0.1}, {"eps": REAL, "delta": PROB},
                 obj=_channel),
    BadInputCase("randomized_response", lambda: {"y": _y(), "p": 0.8, "q": 0.7, "rng": 0},
                 {"y": ARRAY, "p": PROB, "q": PROB}),
    BadInputCase("privacy_slack", lambda: {"p": 0.7, "q": 0.7, "eps": 1.0, "delta": 0.0},
                 {"p": PROB, "q": PROB, "eps": REAL, "delta": PROB}),
    BadInputCase("check_binary_labels", lambda: {"y": _y()}, {"y": ARRAY}),
    BadInputCase("feasible_vertices", lambda: {"eps": 1.0, "delta": 0.1}, {"eps": POSITIVE, "delta": PROB}),
    BadInputCase("optimal_design", lambda: {"X": _X(), "eps": 1.0, "delta": 0.1, "beta": np.array([0.0, 1.0, -0.5])},
                 {"X": ARRAY, "eps": POSITIVE, "delta": PROB, "beta": ARRAY}),
    BadInputCase("grid_design", lambda: {"X": _X(), "eps": 1.0, "delta": 0.0, "beta": np.array([0.0, 1.0, -0.5]),
                                         "grid": 21},
                 {"X": ARRAY, "eps": POSITIVE, "delta": PROB, "beta": ARRAY, "grid": SIZE}),
    BadInputCase("fisher_trace", lambda: {"X": _X(), "beta": np.array([0.0, 1.0, -0.5]), "p": 0.8, "q": 0.7},
                 _DESIGN),
    BadInputCase("fisher_information", lambda: {"X": _X(), "beta": np.array([0.0, 1.0, -0.5]), "p": 0.8, "q": 0.7},
                 _DESIGN),
    BadInputCase("design_criterion", lambda: {"X": _X(), "beta": np.array([0.0, 1.0, -0.5]), "p": 0.8, "q": 0.7,
                                              "criterion": "D"}, _DESIGN),
    BadInputCase("TwoStageDesign", lambda: {"eps": 1.0, "delta": 0.1, "stage1_fraction": 0.2},
                 {"eps": POSITIVE, "delta": PROB, "stage1_fraction": PROB}),
    BadInputCase("TwoStageDesign.privatise", lambda: {"X": _X(200, intercept=False), "y": _y(200), "rng": 0},
                 {"X": ARRAY, "y": ARRAY}, obj=_two_stage),
    BadInputCase("link_functions", lambda: {"link": "probit"}, {"link": TEXT}),
    BadInputCase("RRBinaryRegression", lambda: {"p": 0.8, "q": 0.8},
                 skip="scikit-learn estimator: the constructor only stores parameters; fit validates them"),
    # y is left to scikit-learn's target checks: its estimator checks require a (n, 1) y to be accepted with a
    # DataConversionWarning (check_supervised_y_2d); NaN/empty/string y are covered in tests/label_dp
    BadInputCase("RRBinaryRegression.fit", lambda: {"X": _X(intercept=False), "y": _y(),
                                                    "sample_p": np.full(300, 0.8), "sample_q": 0.8},
                 {"X": ARRAY, "sample_p": PROB, "sample_q": PROB}, obj=lambda: __import__(
                     "icml25.label_dp", fromlist=["RRBinaryRegression"]).RRBinaryRegression()),
    BadInputCase("RRBinaryRegression.conf_int", lambda: {"alpha": 0.1}, {"alpha": PROB}, obj=_fitted),
    BadInputCase("RRBinaryRegression.predict_proba", lambda: {"X": _X(10, intercept=False)}, {"X": ARRAY},
                 obj=_fitted),
    BadInputCase("naive_fit", lambda: {"X": _X(intercept=False), "y_tilde": _y()}, {"X": ARRAY, "y_tilde": ARRAY}),
    BadInputCase("debiased_label_fit", lambda: {"X": _X(intercept=False), "y_tilde": _y(), "p": 0.8, "q": 0.8,
                                                "max_iter": 50},
                 {"X": ARRAY, "y_tilde": ARRAY, "p": PROB, "q": PROB, "max_iter": SIZE}),
    BadInputCase("load_adult", skip="reads the shipped CSV; its only argument is an optional file path"),
    BadInputCase("load_pima", skip="reads the shipped CSV; its only argument is an optional file path"),
]
