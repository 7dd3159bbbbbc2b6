"""Input checks shared by the public functions of this package (clear ValueError/TypeError messages)."""

from __future__ import annotations

import warnings
from typing import Any

import networkx as nx
import numpy as np

from icml25.core import validation as v

__all__ = ["check_graph", "check_probability", "check_budget", "check_states"]


def check_graph(graph: Any, name: str = "graph") -> nx.Graph:
    """Return ``graph`` if it is an undirected simple networkx graph without self-loops, else raise."""
    if not isinstance(graph, nx.Graph):
        raise TypeError(f"{name} must be a networkx.Graph, got {type(graph).__name__}")
    if graph.is_directed():
        raise ValueError(f"{name} must be undirected, got a directed graph ({type(graph).__name__})")
    if graph.is_multigraph():
        raise ValueError(f"{name} must be a simple graph, got a multigraph ({type(graph).__name__})")
    loops = nx.number_of_selfloops(graph)
    if loops:
        raise ValueError(f"{name} must have no self-loops, got {loops} (e.g. at node {next(nx.nodes_with_selfloops(graph))!r})")
    weighted = next(((a, b, w) for a, b, w in graph.edges(data="weight", default=1) if w != 1), None)
    if weighted is not None:
        a, b, w = weighted
        warnings.warn(f"{name} has edge weights (e.g. weight={w!r} on edge ({a!r}, {b!r})), but the SIS model, the "
                      "learners and spectral-radius minimisation are defined on simple unweighted graphs: the "
                      f"weights are ignored. Pass networkx.Graph({name}.edges) to drop them.", UserWarning,
                      stacklevel=3)
    return graph


def check_probability(value: Any, name: str) -> float:
    """Return ``value`` as a float if it lies in the open interval (0, 1), else raise ValueError/TypeError."""
    return v.check_probability(value, name, open_low=True, open_high=True)


def check_budget(k: Any, n: int, name: str = "k") -> int:
    """Return ``k`` as an int if ``0 <= k <= n`` (n = number of vertices), else raise ValueError/TypeError."""
    if isinstance(k, (float, np.floating)):
        raise TypeError(f"{name} must be an integer budget, got {k!r}")
    return v.check_int(k, name, low=0, high=n)


def check_states(Y: Any, n: int | None = None, name: str = "Y") -> np.ndarray:
    """Return the infection states ``Y`` of shape (T, n) as a bool array, checking binarity and shape."""
    arr = np.asarray(Y)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (time steps, vertices), got shape {arr.shape}")
    if arr.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 time steps (one transition), got {arr.shape[0]}")
    if n is not None and arr.shape[1] != n:
        raise ValueError(f"{name} must have {n} columns (one per vertex), got {arr.shape[1]}")
    if arr.dtype != bool:
        if not np.issubdtype(arr.dtype, np.number):
            raise TypeError(f"{name} must hold 0/1 or bool values, got dtype {arr.dtype}")
        bad = ~np.isin(arr, (0, 1))
        if bad.any():
            raise ValueError(f"{name} must be binary (0/1), got value {arr[bad][0]!r}")
        arr = arr.astype(bool)
    return arr
