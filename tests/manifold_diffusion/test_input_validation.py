"""Issue 19 findings for manifold_diffusion: NaN in a stream, bad sizes, Config fields."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.manifold_diffusion import (
    DiffusionAdaptation,
    Euclidean,
    Grassmann,
    metropolis_weights,
    pca_loss_grad,
    simulate,
    synthetic_pca_stream,
    to_db,
)


def _setup():
    a = metropolis_weights(np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]]))
    g = Grassmann(4, 2)
    stream, target = synthetic_pca_stream(3, 20, 4, 2, rng=np.random.default_rng(0))
    return DiffusionAdaptation(g, a, 0.05), stream, g.random_point(np.random.default_rng(1))


def test_simulate_rejects_nan_in_stream() -> None:
    # one NaN sample used to turn every agent's estimate into NaN after the combine step
    algo, stream, init = _setup()
    stream[1, 7, 2] = np.nan
    with pytest.raises(ValueError, match="stream must be finite"):
        simulate(algo, stream, pca_loss_grad, init)


def test_simulate_rejects_nan_gradient_naming_the_iteration() -> None:
    algo, stream, init = _setup()

    calls = []

    def bad_grad(points, samples):
        calls.append(1)
        g = pca_loss_grad(points, samples)
        return g * np.nan if len(calls) == 5 else g

    with pytest.raises(ValueError, match="iteration 5"):
        simulate(algo, stream, bad_grad, init)


def test_simulate_rejects_nan_init_and_bad_sizes() -> None:
    algo, stream, init = _setup()
    with pytest.raises(ValueError, match="init"):
        simulate(algo, stream, pca_loss_grad, np.full_like(init, np.nan))
    with pytest.raises(TypeError, match="n_iter"):
        simulate(algo, stream, pca_loss_grad, init, n_iter=2.5)
    with pytest.raises(ValueError, match="record_every"):
        simulate(algo, stream, pca_loss_grad, init, record_every=0)
    with pytest.raises(TypeError, match="loss_grad"):
        simulate(algo, stream, "pca", init)


def test_clean_run_is_unchanged_by_the_checks() -> None:
    algo, stream, init = _setup()
    res = simulate(algo, stream, pca_loss_grad, init, n_iter=30)
    assert np.all(np.isfinite(res.points))


def test_to_db_and_euclidean() -> None:
    assert to_db(np.array([1.0, 10.0])).tolist() == [0.0, 10.0]
    with pytest.raises(ValueError, match="x must be finite"):
        to_db(np.array([1.0, np.nan]))
    with pytest.raises(TypeError, match="shape"):
        Euclidean(2.5)
    with pytest.raises(ValueError, match="shape"):
        Euclidean(0)
    with pytest.raises(ValueError, match="shape"):
        Euclidean()


def test_config_validates_fields() -> None:
    from icml25.manifold_diffusion.reproduce import Config

    with pytest.raises(ValueError, match="pca_runs"):
        Config(pca_runs=0)
    with pytest.raises(ValueError, match="r"):
        Config(d=5, r=5)
    with pytest.raises(ValueError, match="mu"):
        Config(mu=-0.1)
    with pytest.raises(ValueError, match="step_sizes"):
        Config(step_sizes=(0.09, 0.05))
    with pytest.raises(ValueError, match="steady_window"):
        Config(steady_window=700, pca_iters=600)
