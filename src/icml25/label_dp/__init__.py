"""Optimal randomized-response label DP for binary response models, with private inference.

From 'Differentially Private Analysis for Binary Response Models: Optimality, Estimation, and Inference'
(Zhang et al., ICML 2025). Only the abstract was readable: the method is a reconstruction from its stated
ingredients (see README.md). The estimator is a scikit-learn classifier (extra ``stats``).
"""

from icml25.core.optional import require

from .channel import RRChannel, check_binary_labels, privacy_slack, randomized_response
from .design import (
    TwoStageDesign,
    design_criterion,
    feasible_vertices,
    fisher_information,
    fisher_trace,
    grid_design,
    optimal_design,
)
from .links import LINKS, link_functions

require("sklearn", extra="stats")

from .datasets import load_adult, load_pima  # noqa: E402
from .regression import ConvergenceWarning, RRBinaryRegression, debiased_label_fit, naive_fit  # noqa: E402

__all__ = [
    "RRChannel", "randomized_response", "privacy_slack", "check_binary_labels", "feasible_vertices",
    "optimal_design", "grid_design", "fisher_trace", "fisher_information", "design_criterion", "TwoStageDesign",
    "LINKS", "link_functions", "RRBinaryRegression", "naive_fit", "debiased_label_fit", "ConvergenceWarning",
    "load_adult", "load_pima",
]
