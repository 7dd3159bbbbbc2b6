"""Bad-input registry of manifold_diffusion for the fuzz contract (tests/core/test_bad_input.py): one valid call of
every public callable and the kinds of its numeric arguments."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.testing import ARRAY, POSITIVE, SIZE, TEXT, BadInputCase

K, D, R = 4, 5, 2


def _a() -> np.ndarray:
    from icml25.manifold_diffusion import metropolis_weights

    return metropolis_weights(np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]]))


def _g() -> Any:
    from icml25.manifold_diffusion import Grassmann

    return Grassmann(D, R)


def _points() -> np.ndarray:
    return _g().random_point(np.random.default_rng(0), size=K)


def _target() -> np.ndarray:
    return _g().random_point(np.random.default_rng(1))


def _samples() -> np.ndarray:
    return np.random.default_rng(2).standard_normal((K, D))


def _stream() -> np.ndarray:
    return np.random.default_rng(3).standard_normal((K, 6, D))


def _diffusion() -> Any:
    from icml25.manifold_diffusion import DiffusionAdaptation

    return DiffusionAdaptation(_g(), _a(), step_size=0.05)


def _simulate_kwargs() -> dict[str, Any]:
    from icml25.manifold_diffusion import pca_loss_grad

    return {"algo": _diffusion(), "stream": _stream(), "loss_grad": pca_loss_grad, "init": _target(), "n_iter": 8,
            "record_every": 2}


def _gmm_params() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from icml25.manifold_diffusion import random_gmm_parameters

    return random_gmm_parameters(2, 2, np.random.default_rng(0))


def _gmm_point() -> Any:
    from icml25.manifold_diffusion import gmm_params_to_manifold

    return gmm_params_to_manifold(*_gmm_params())


def _gmm_data() -> np.ndarray:
    from icml25.manifold_diffusion import sample_gmm

    return sample_gmm(*_gmm_params(), n=60, rng=np.random.default_rng(1))


def _adjacency() -> np.ndarray:
    return np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])


CASES: list[BadInputCase] = [
    BadInputCase("Manifold", skip="abstract interface; its concrete manifolds have cases"),
    BadInputCase("Euclidean", skip="takes its shape as positional *shape (no keyword to corrupt); bad shapes are "
                                   "tested in tests/manifold_diffusion/test_input_validation.py"),
    BadInputCase("Product", lambda: {"manifolds": [_g(), _g()]}),
    BadInputCase("Grassmann", lambda: {"d": 5, "r": 2}, {"d": SIZE, "r": SIZE}),
    BadInputCase("Stiefel", lambda: {"d": 5, "r": 2}, {"d": SIZE, "r": SIZE}),
    BadInputCase("SPD", lambda: {"n": 3, "k": 2}, {"n": SIZE, "k": SIZE}),
    BadInputCase("from_pymanopt", skip="wraps a pymanopt manifold object (optional extra); no numeric input"),
    BadInputCase("PymanoptManifold", skip="built by from_pymanopt from a pymanopt manifold; no numeric input"),
    BadInputCase("DiffusionAdaptation", lambda: {"manifold": _g(), "A": _a(), "step_size": 0.05, "combine_step": 1.0,
                                                 "combine": "exact_frechet", "frechet_iters": 3},
                 {"A": ARRAY, "step_size": POSITIVE, "combine_step": POSITIVE, "combine": TEXT,
                  "frechet_iters": SIZE}),
    BadInputCase("NonCooperative", lambda: {"manifold": _g(), "step_size": 0.05}, {"step_size": POSITIVE}),
    BadInputCase("Centralized", lambda: {"manifold": _g(), "step_size": 0.05}, {"step_size": POSITIVE}),
    BadInputCase("DRSGD", lambda: {"manifold": _g(), "A": _a(), "step_size": 0.05, "consensus_step": 0.5},
                 {"A": ARRAY, "step_size": POSITIVE, "consensus_step": POSITIVE}),
    BadInputCase("simulate", _simulate_kwargs, {"stream": ARRAY, "init": ARRAY, "n_iter": SIZE,
                                                "record_every": SIZE}),
    BadInputCase("SimulationResult", skip="result container returned by simulate (which has a case)"),
    BadInputCase("metropolis_weights", lambda: {"graph": _adjacency()}, {"graph": ARRAY}),
    BadInputCase("uniform_weights", lambda: {"graph": _adjacency()}, {"graph": ARRAY}),
    BadInputCase("check_combination_matrix", lambda: {"a": _a()}, {"a": ARRAY}),
    BadInputCase("combine_step_bound", lambda: {"a": _a()}, {"a": ARRAY}),
    BadInputCase("paper_combination_matrix", lambda: {"rule": "uniform"}, {"rule": TEXT}),
    BadInputCase("msd", lambda: {"manifold": _g(), "points": _points(), "target": _target()},
                 {"points": ARRAY, "target": ARRAY}),
    BadInputCase("disagreement", lambda: {"manifold": _g(), "points": _points(), "iters": 5},
                 {"points": ARRAY, "iters": SIZE}),
    BadInputCase("to_db", lambda: {"x": np.array([0.1, 1.0])}),  # any shape is valid; NaN/inf: tested directly
    BadInputCase("pca_loss", lambda: {"points": _points(), "samples": _samples()},
                 {"points": ARRAY, "samples": ARRAY}),
    BadInputCase("pca_loss_grad", lambda: {"points": _points(), "samples": _samples()},
                 {"points": ARRAY, "samples": ARRAY}),
    BadInputCase("principal_subspace", lambda: {"data": _samples(), "r": 2}, {"data": ARRAY, "r": SIZE}),
    BadInputCase("synthetic_pca_stream", lambda: {"n_agents": 3, "n_samples": 4, "d": 5, "r": 2, "decay": 0.8,
                                                  "rng": np.random.default_rng(0)},
                 {"n_agents": SIZE, "n_samples": SIZE, "d": SIZE, "r": SIZE, "decay": POSITIVE}),
    BadInputCase("gmm_manifold", lambda: {"d": 3, "n_components": 2}, {"d": SIZE, "n_components": SIZE}),
    BadInputCase("gmm_params_to_manifold", lambda: dict(zip(("means", "covariances", "weights"), _gmm_params())),
                 {"means": ARRAY, "covariances": ARRAY, "weights": ARRAY}),
    BadInputCase("manifold_to_gmm_params", lambda: {"point": _gmm_point()}),
    BadInputCase("gmm_loss_grad", lambda: {"points": tuple(np.stack([p, p]) for p in _gmm_point()),
                                           "samples": _gmm_data()[:2]}, {"samples": ARRAY}),
    BadInputCase("average_log_likelihood", lambda: {"points": _gmm_point(), "data": _gmm_data(), "chunk": 16},
                 {"data": ARRAY, "chunk": SIZE}),
    BadInputCase("random_gmm_parameters", lambda: {"d": 2, "n_components": 2, "rng": np.random.default_rng(0)},
                 {"d": SIZE, "n_components": SIZE}),
    BadInputCase("sample_gmm", lambda: dict(zip(("means", "covariances", "weights"), _gmm_params()),
                                            n=10, rng=np.random.default_rng(0)),
                 {"means": ARRAY, "covariances": ARRAY, "weights": ARRAY, "n": SIZE}),
    BadInputCase("kmeans_plusplus_gmm", lambda: {"data": _gmm_data(), "n_components": 2, "random_state": 1},
                 {"data": ARRAY, "n_components": SIZE}),
]
