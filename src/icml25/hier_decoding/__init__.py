"""Bayes-optimal decoding of hierarchical classifiers for any metric.

Implements 'To Each Metric Its Decoding: Post-Hoc Optimal Decision Rules of Probabilistic Hierarchical
Classifiers' (Plaud et al., ICML 2025, arXiv 2506.01552): given leaf probabilities from any classifier and a class
tree, return the prediction (a leaf, a node, or a set of nodes) that maximises the *expected* value of the metric
it will be evaluated with — accuracy, Hamming loss, hierarchical F_β, mistake severity, Wu-Palmer, Zhao/Lin, or
any node-to-leaf / leaf-to-leaf cost. A drop-in replacement for ``argmax`` at inference time.

>>> from icml25.hier_decoding import Hierarchy, decode
>>> h = Hierarchy.from_paths(["dog/husky", "dog/beagle", "cat"])
>>> Y = decode([[0.35, 0.35, 0.30]], h, "mistake_severity")  # p(dog) = 0.7 > 1/2 but no leaf is sure
>>> [h.names[n] for n in h.indicator_to_node(Y)]
['dog']
"""

from typing import Any

from .cost_pruning import PruningConstants, pruning_constants, reasonableness, surviving_candidates
from .decision_rules import argmax_leaf, deepest_above_half, leaf_cost_argmin, node_cost_argmin
from .decoding import METRIC_NAMES, all_subsets, decode, decode_logits, exhaustive_decode, get_metric
from .heuristics import (
    HEURISTICS,
    argmax_leaf_heuristic,
    confidence_threshold,
    crm_bm,
    expected_information,
    hie_self,
    plurality,
    top_down_greedy,
)
from .hf_subset_decoding import hf_beta_subset, hf_candidate_threshold
from .hierarchy import Hierarchy
from .imclef import load_imclef, read_hierarchical_arff
from .metrics import (
    Accuracy,
    Hamming,
    HFBeta,
    HierarchicalMetric,
    LeafToLeafCost,
    MistakeSeverity,
    NodeToLeafCost,
    WuPalmer,
    Zhao,
)
from .synthetic import random_tree, synthetic_posteriors, weighted_path_cost

__all__ = [
    "Hierarchy", "HierarchicalMetric", "Accuracy", "Hamming", "HFBeta", "MistakeSeverity", "WuPalmer", "Zhao",
    "NodeToLeafCost", "LeafToLeafCost", "decode", "decode_logits", "get_metric", "METRIC_NAMES",
    "exhaustive_decode", "all_subsets", "argmax_leaf", "leaf_cost_argmin", "node_cost_argmin",
    "deepest_above_half", "hf_beta_subset", "hf_candidate_threshold", "PruningConstants", "pruning_constants",
    "reasonableness", "surviving_candidates", "HEURISTICS", "argmax_leaf_heuristic", "top_down_greedy",
    "confidence_threshold", "expected_information", "plurality", "hie_self", "crm_bm", "load_imclef",
    "read_hierarchical_arff", "random_tree", "synthetic_posteriors", "weighted_path_cost", "HierarchicalDecoder",
]


def __getattr__(name: str) -> Any:
    """Lazy import of the scikit-learn meta-estimator (scikit-learn is optional: extra 'stats')."""
    if name == "HierarchicalDecoder":
        from icml25.core.optional import require

        require("sklearn", extra="stats")
        from .sklearn_decoder import HierarchicalDecoder

        return HierarchicalDecoder
    raise AttributeError(f"module 'icml25.hier_decoding' has no attribute {name!r}")
