"""Exhaustive spectral-radius minimisation for tiny graphs (a reference for the exact algorithms)."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import networkx as nx
import numpy as np
import scipy.linalg

from icml25.core.validation import check_int

from ._validation import check_budget, check_graph

__all__ = ["srm_brute_force"]


def srm_brute_force(graph: nx.Graph, k: int, max_subsets: int = 2_000_000) -> tuple[list[Any], float]:
    """The optimum of min_{|R| ≤ k} ρ(G − R) by enumerating every vertex set of size exactly k.

    (Sets of size < k are never better: ρ does not increase under vertex deletion.)

    Parameters
    ----------
    graph : networkx.Graph
        Small undirected simple graph.
    k : int
        Budget, 0 ≤ k ≤ n.
    max_subsets : int
        Refuse (ValueError) when C(n, k) exceeds this.

    Returns
    -------
    (R, rho) : (list, float)
        An optimal removal set (first in lexicographic order of ``graph.nodes`` positions) and ρ(G − R).
    """
    check_graph(graph)
    n = graph.number_of_nodes()
    k = check_budget(k, n)
    max_subsets = check_int(max_subsets, "max_subsets", low=1)
    from math import comb

    if comb(n, k) > max_subsets:
        raise ValueError(f"C(n={n}, k={k}) = {comb(n, k)} subsets exceeds max_subsets={max_subsets}")
    nodes = list(graph.nodes)
    a = nx.to_numpy_array(graph, nodelist=nodes, dtype=float, weight=None)
    best, best_set = np.inf, ()
    everyone = np.arange(n)
    for removed in combinations(range(n), k):
        keep = np.delete(everyone, removed)
        m = keep.size
        val = 0.0 if m <= 1 else float(scipy.linalg.eigvalsh(a[np.ix_(keep, keep)], subset_by_index=[m - 1, m - 1])[0])
        if val < best - 1e-12:
            best, best_set = val, removed
    return [nodes[i] for i in best_set], max(float(best), 0.0)
