"""CGCIVL (Ke et al., ICML 2025): conservative offline goal-conditioned implicit V-learning.

Library: the OGBench-style pointmaze data layer (:func:`generate_pointmaze_dataset`, :func:`load_dataset`,
:func:`save_dataset`, :func:`cached_pointmaze_dataset`), the maze geometry (:class:`MazeLayout`,
:func:`maze_layout`), the goal sampler (:class:`GCDataset`), quasimetric heads (:class:`MRN`, :class:`IQE`,
:class:`QuasimetricValue`), the losses (:func:`ivl_loss`, :func:`conservative_penalty`, :func:`awr_loss`), the agents
(:class:`GCIVL`, :class:`CGCIVL`, :class:`AgentConfig`), rollouts (:func:`evaluate`) and value diagnostics against
BFS maze distances (:func:`value_diagnostics` and its parts). torch and ogbench are imported on first use.
"""

from typing import Any

from .data import (
    DATASET_KINDS,
    cached_pointmaze_dataset,
    check_dataset,
    generate_pointmaze_dataset,
    load_dataset,
    oracle_direction,
    save_dataset,
)
from .diagnostics import (
    binned_auc,
    discounted_distance_bound,
    overestimation_rate,
    rank_correlation,
    value_diagnostics,
    wall_auc,
    wall_auc_gain_ci,
)
from .maze import MAZES, MazeLayout, maze_layout
from .sampler import GOAL_KINDS, GCDataset

__all__ = ["generate_pointmaze_dataset", "load_dataset", "save_dataset", "cached_pointmaze_dataset", "check_dataset",
           "oracle_direction", "DATASET_KINDS", "MazeLayout", "maze_layout", "MAZES", "GCDataset", "GOAL_KINDS",
           "MRN", "IQE", "interval_union_length", "QuasimetricValue", "MLPValue", "expectile_weight", "ivl_loss",
           "conservative_penalty", "awr_loss", "value_floor", "AgentConfig", "GCIVL", "CGCIVL", "evaluate",
           "overestimation_rate", "discounted_distance_bound", "rank_correlation", "binned_auc", "wall_auc",
           "value_diagnostics", "wall_auc_gain_ci"]

_LAZY = {"MRN": "quasimetric", "IQE": "quasimetric", "interval_union_length": "quasimetric",
         "QuasimetricValue": "quasimetric", "MLPValue": "quasimetric", "expectile_weight": "losses",
         "ivl_loss": "losses", "conservative_penalty": "losses", "awr_loss": "losses", "value_floor": "losses",
         "AgentConfig": "agents", "GCIVL": "agents", "CGCIVL": "agents", "evaluate": "evaluation"}


def __getattr__(name: str) -> Any:  # torch / ogbench modules are imported on first use
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'icml25.cgcivl' has no attribute {name!r}")
