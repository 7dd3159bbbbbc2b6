"""Uniform median-of-means estimation under heavy tails, MoM k-means and MoM regression.

From 'Uniform Mean Estimation for Heavy-Tailed Distributions via Median-of-Means' (Høgsgaard & Paudice,
ICML 2025). The scalar and uniform estimators need numpy only; :class:`MoMKMeans` and :class:`MoMRegressor`
are scikit-learn estimators (extra ``stats``).
"""

from icml25.core.optional import require

from .estimators import UniformMoM, block_means, choose_K, lower_median, make_partition, median_of_means
from .samplers import classical_mom_bound, contaminate, lomax_abs_moment, student_t, symmetric_lomax

require("sklearn", extra="stats")

from .kmeans import MoMKMeans, kmeans_losses, mom_kmeans_risk  # noqa: E402
from .regression import LOSSES, MoMRegressor, loss_and_derivative  # noqa: E402

__all__ = [
    "median_of_means", "UniformMoM", "choose_K", "make_partition", "block_means", "lower_median",
    "symmetric_lomax", "lomax_abs_moment", "student_t", "classical_mom_bound", "contaminate",
    "MoMKMeans", "kmeans_losses", "mom_kmeans_risk", "MoMRegressor", "LOSSES", "loss_and_derivative",
]
