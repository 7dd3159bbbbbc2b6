"""Riemannian diffusion adaptation for distributed optimization on manifolds (Wang et al., ICML 2025).

K agents on a graph each stream data and jointly minimise an average cost over a Riemannian manifold by
adapt-then-combine: a Riemannian stochastic-gradient step on the newest sample, then one Riemannian gradient
step toward the weighted Fréchet mean of the neighbours' estimates. Manifolds (Grassmann, Stiefel, SPD,
Euclidean, Product) are batched over agents; PCA and Gaussian-mixture problems ship with analytic gradients.
"""

from .combination import (
    check_combination_matrix,
    combine_step_bound,
    metropolis_weights,
    paper_combination_matrix,
    uniform_weights,
)
from .diffusion import DRSGD, Centralized, DiffusionAdaptation, NonCooperative
from .gmm import (
    average_log_likelihood,
    gmm_loss_grad,
    gmm_manifold,
    gmm_params_to_manifold,
    manifold_to_gmm_params,
)
from .gmm_data import kmeans_plusplus_gmm, random_gmm_parameters, sample_gmm
from .grassmann_stiefel import Grassmann, Stiefel
from .manifold_base import Euclidean, Manifold, Product
from .metrics import disagreement, msd, to_db
from .pca import pca_loss, pca_loss_grad, principal_subspace, synthetic_pca_stream
from .pymanopt_adapter import PymanoptManifold, from_pymanopt
from .simulate import SimulationResult, simulate
from .spd import SPD

__all__ = [
    "Manifold", "Euclidean", "Product", "Grassmann", "Stiefel", "SPD", "from_pymanopt", "PymanoptManifold",
    "DiffusionAdaptation", "NonCooperative", "Centralized", "DRSGD", "simulate", "SimulationResult",
    "metropolis_weights", "uniform_weights", "check_combination_matrix", "combine_step_bound",
    "paper_combination_matrix", "msd", "disagreement", "to_db", "pca_loss", "pca_loss_grad",
    "principal_subspace", "synthetic_pca_stream", "gmm_manifold", "gmm_loss_grad", "gmm_params_to_manifold",
    "manifold_to_gmm_params", "average_log_likelihood", "random_gmm_parameters", "sample_gmm",
    "kmeans_plusplus_gmm",
]
