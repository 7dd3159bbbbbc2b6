"""Issue 19 findings for label_dp: NaN, wrong lengths, numpy scalars, Config fields, import without scikit-learn."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from icml25.label_dp import RRChannel, TwoStageDesign, feasible_vertices, optimal_design, randomized_response
from icml25.label_dp.reproduce import Config
from icml25.testing import run_without

pytest.importorskip("sklearn")


def _data(n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    return X, (rng.random(n) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)


def test_channel_rejects_nan() -> None:
    with pytest.raises(ValueError, match="p must be a probability"):
        RRChannel(float("nan"), 0.5)
    with pytest.raises(ValueError, match="q must be a probability"):
        RRChannel(0.5, float("nan"))


def test_randomized_response_rejects_nan_p() -> None:
    # before: every 1 silently became a 0 (u < NaN is False)
    with pytest.raises(ValueError, match="p must be finite"):
        randomized_response([0, 1, 1], float("nan"), 0.7, rng=0)


def test_fit_rejects_nan_p_before_fisher_scoring() -> None:
    from icml25.label_dp import RRBinaryRegression

    X, y = _data()
    with pytest.raises(ValueError, match="p must be finite"):  # before: LinAlgError: SVD did not converge
        RRBinaryRegression(p=float("nan"), q=0.8).fit(X, y)


def test_symmetric_rejects_negative_delta() -> None:
    with pytest.raises(ValueError, match="delta must be >= 0"):  # before: a channel with s < 0
        RRChannel.symmetric(1, delta=-0.9)
    with pytest.raises(ValueError, match="delta must be <"):
        RRChannel.symmetric(1, delta=1.0)


def test_numpy_integer_epsilon_is_accepted() -> None:
    X = np.column_stack([np.ones(50), np.linspace(-1, 1, 50)])
    assert optimal_design(X, np.int64(1)) == optimal_design(X, 1.0)
    assert feasible_vertices(np.float32(0.5)) == feasible_vertices(0.5)
    with pytest.raises(TypeError, match="eps must be a real number"):
        feasible_vertices("1")


def test_per_record_p_of_wrong_length() -> None:
    from icml25.label_dp import RRBinaryRegression

    X, y = _data()
    with pytest.raises(ValueError, match=r"sample_p must be a scalar or have one entry per record \(shape \(400,\)\)"):
        RRBinaryRegression(q=0.8).fit(X, y, sample_p=np.full(399, 0.8))
    with pytest.raises(ValueError, match=r"q must be a scalar or have one entry per record"):
        randomized_response(y, 0.8, np.full(3, 0.8), rng=0)


def test_per_record_channel_of_right_length_works() -> None:
    from icml25.label_dp import RRBinaryRegression

    X, y = _data()
    yt = randomized_response(y, np.full(400, 0.9), 0.9, rng=1)
    m = RRBinaryRegression(q=0.9).fit(X, yt, sample_p=np.full(400, 0.9))
    assert np.all(np.isfinite(m.params_))


def test_two_stage_validates_on_construction() -> None:
    with pytest.raises(ValueError, match="stage1_fraction"):
        TwoStageDesign(1.0, stage1_fraction=0.0)
    with pytest.raises(ValueError, match="link must be one of"):
        TwoStageDesign(1.0, link="cauchit")
    X, y = _data()
    with pytest.raises(ValueError, match="X and y must have the same number of rows"):
        TwoStageDesign(1.0).privatise(X, y[:-1], rng=0)


@pytest.mark.parametrize("field,value", [
    ("sim_reps", 0), ("sim_reps", 1), ("sim_n", 10), ("sim_eps", 0.0), ("sim_eps", float("nan")),
    ("grid_ns", ()), ("grid_ns", (3000, 2.5)), ("grid_eps", (1.0, -1.0)), ("grid_links", ("cauchit",)),
    ("adult_ns", (40000,)), ("adult_reps", 0), ("delta_reps", -1), ("pima_eps", (0.0,)), ("design_rows", "many"),
])
def test_config_rejects_bad_fields(field: str, value: object) -> None:
    with pytest.raises((ValueError, TypeError), match=field):
        dataclasses.replace(Config.quick(), **{field: value})


def test_config_presets_are_valid() -> None:
    Config.quick()
    Config.full()


def test_import_without_sklearn() -> None:
    """``import icml25.label_dp`` and its numpy-only parts work with scikit-learn missing; the estimator names the
    extra to install."""
    code = (
        "import numpy as np\n"
        "import icml25.label_dp as ld\n"
        "X = np.column_stack([np.ones(50), np.linspace(-1, 1, 50)])\n"
        "ch = ld.optimal_design(X, 1.0)\n"
        "ld.randomized_response(np.zeros(10, int), ch.p, ch.q, 0)\n"
        "ld.load_pima()\n"
        "try:\n"
        "    ld.RRBinaryRegression\n"
        "except ImportError as e:\n"
        "    assert \"pip install 'icml25[stats]'\" in str(e), e\n"
        "else:\n"
        "    raise SystemExit('RRBinaryRegression imported without scikit-learn')\n"
    )
    res = run_without(("sklearn", "statsmodels"), code)
    assert res.returncode == 0, res.stderr[-2000:]


def test_grid_design_too_coarse() -> None:
    from icml25.label_dp import grid_design

    with pytest.raises(ValueError, match="grid=2 is too coarse"):
        grid_design(np.ones((5, 2)), 1.0, grid=2)
