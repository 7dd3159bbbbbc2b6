"""Input checks shared by the public functions of this package (clear ValueError/TypeError messages)."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

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
    return graph


def check_probability(value: Any, name: str) -> float:
    """Return ``value`` as a float if it lies in the open interval (0, 1), else raise ValueError."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number in (0, 1), got {value!r}") from None
    if not 0.0 < v < 1.0:
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {v}")
    return v


def check_budget(k: Any, n: int, name: str = "k") -> int:
    """Return ``k`` as an int if ``0 <= k <= n`` (n = number of vertices), else raise ValueError."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"{name} must be an integer budget, got {type(k).__name__}")
    k = int(k)
    if k < 0 or k > n:
        raise ValueError(f"{name} must satisfy 0 <= {name} <= number of vertices ({n}), got {k}")
    return k


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
