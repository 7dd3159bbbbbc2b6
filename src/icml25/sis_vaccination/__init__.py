"""Learn to Vaccinate (Elahi, Mürmann, Thiran, ICML 2025): learn an unknown contact graph from SIS infection
states (SISLearn), then choose k vertices to vaccinate by spectral-radius minimisation (greedy, exact
tree-decomposition DP, tree algorithm) and measure extinction times.

Public API: :class:`SISModel`, :class:`SISLearn`, :class:`MLELearner`, :func:`srm_greedy`,
:func:`srm_exact_treewidth`, :func:`srm_tree`, :func:`srm_brute_force`, baselines, :func:`spectral_radius`,
:func:`vug_experiment`, and the outbreak-graph loaders.
"""

from icml25.core.optional import require

require("networkx", extra="graphs")

from .contact_graphs import (  # noqa: E402
    augment_to_spectral_radius,
    flu_contact_graph,
    random_partial_k_tree,
    random_tree,
)
from .data import load_outbreak_tree, outbreak_tree_names  # noqa: E402
from .mle_learner import MLELearner  # noqa: E402
from .nice_tree_decomposition import NiceTreeDecomposition, nice_tree_decomposition  # noqa: E402
from .sis_model import ExtinctionTimes, SISModel  # noqa: E402
from .sislearn import LearningWarning, SISLearn  # noqa: E402
from .spectral import spectral_radius, spectral_radius_after_removal  # noqa: E402
from .srm_brute_force import srm_brute_force  # noqa: E402
from .srm_greedy import degree_strategy, random_strategy, srm_greedy, srm_greedy_naive, walk_strategy  # noqa: E402
from .srm_tree import srm_tree  # noqa: E402
from .srm_treewidth_dp import srm_exact_treewidth  # noqa: E402
from .vug import STRATEGIES, edge_f1, vug_experiment  # noqa: E402

__all__ = [
    "SISModel", "ExtinctionTimes", "SISLearn", "LearningWarning", "MLELearner",
    "spectral_radius", "spectral_radius_after_removal",
    "srm_greedy", "srm_greedy_naive", "srm_exact_treewidth", "srm_tree", "srm_brute_force",
    "degree_strategy", "walk_strategy", "random_strategy",
    "nice_tree_decomposition", "NiceTreeDecomposition",
    "vug_experiment", "edge_f1", "STRATEGIES",
    "load_outbreak_tree", "outbreak_tree_names", "augment_to_spectral_radius", "flu_contact_graph",
    "random_tree", "random_partial_k_tree",
]
