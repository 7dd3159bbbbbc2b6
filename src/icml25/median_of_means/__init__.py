"""Uniform median-of-means estimation under heavy tails, MoM k-means and MoM regression.

From 'Uniform Mean Estimation for Heavy-Tailed Distributions via Median-of-Means' (Høgsgaard & Paudice,
ICML 2025). The scalar and uniform estimators and the samplers need numpy only; :class:`MoMKMeans` and
:class:`MoMRegressor` are scikit-learn estimators (extra ``stats``), imported on first use.
"""

from typing import Any

from .estimators import UniformMoM, block_means, choose_K, lower_median, make_partition, median_of_means
from .samplers import classical_mom_bound, contaminate, lomax_abs_moment, student_t, symmetric_lomax

_LAZY = {"MoMKMeans": "kmeans", "kmeans_losses": "kmeans", "mom_kmeans_risk": "kmeans",
         "MoMRegressor": "regression", "LOSSES": "regression", "loss_and_derivative": "regression"}

__all__ = [
    "median_of_means", "UniformMoM", "choose_K", "make_partition", "block_means", "lower_median",
    "symmetric_lomax", "lomax_abs_moment", "student_t", "classical_mom_bound", "contaminate",
    "MoMKMeans", "kmeans_losses", "mom_kmeans_risk", "MoMRegressor", "LOSSES", "loss_and_derivative",
]


def __getattr__(name: str) -> Any:
    """Import the scikit-learn estimators lazily (``pip install 'icml25[stats]'``)."""
    if name in _LAZY:
        import importlib

        from icml25.core.optional import require

        require("sklearn", extra="stats")
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
