"""Optimal randomized-response label DP for binary response models, with private inference.

From 'Differentially Private Analysis for Binary Response Models: Optimality, Estimation, and Inference'
(Zhang et al., ICML 2025). Only the abstract was readable: the method is a reconstruction from its stated
ingredients (see README.md). The channel, the designs and the data loaders need only numpy/scipy; the estimator
is a scikit-learn classifier (extra ``stats``), imported on first use.
"""

from typing import Any

from .channel import RRChannel, check_binary_labels, privacy_slack, randomized_response
from .data import load_adult, load_pima
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

_NEEDS_SKLEARN = ("RRBinaryRegression", "naive_fit", "debiased_label_fit", "ConvergenceWarning")

__all__ = [
    "RRChannel", "randomized_response", "privacy_slack", "check_binary_labels", "feasible_vertices",
    "optimal_design", "grid_design", "fisher_trace", "fisher_information", "design_criterion", "TwoStageDesign",
    "LINKS", "link_functions", "RRBinaryRegression", "naive_fit", "debiased_label_fit", "ConvergenceWarning",
    "load_adult", "load_pima",
]


def __getattr__(name: str) -> Any:
    """Import the scikit-learn estimator and its baselines lazily (``pip install 'icml25[stats]'``)."""
    if name in _NEEDS_SKLEARN:
        from icml25.core.optional import require

        require("sklearn", extra="stats")
        from . import regression

        return getattr(regression, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
