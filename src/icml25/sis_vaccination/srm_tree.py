"""Spectral-radius minimisation on trees and forests: binary search on λ with a leaf-up feasibility test."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import scipy.linalg

from icml25.core.validation import check_positive

from ._validation import check_budget, check_graph
from .spectral import spectral_radius

__all__ = ["srm_tree", "tree_feasible_removals"]


def _rho_of(adjacency: np.ndarray, idx: list[int]) -> float:
    if len(idx) <= 1:
        return 0.0
    a = adjacency[np.ix_(idx, idx)]
    return max(float(scipy.linalg.eigvalsh(a, subset_by_index=[len(idx) - 1] * 2)[0]), 0.0)


def tree_feasible_removals(forest: nx.Graph, lam: float) -> list[Any]:
    """A minimum vertex set R with ρ(F − R) ≤ λ on a forest F (leaf-up rule).

    Post-order over each tree: v joins the kept components of its kept children when ρ of the union stays
    ≤ λ; otherwise v is removed. Exchange argument: when the union violates, any solution agreeing below v must
    remove v; when it does not, swapping a removed v for its parent never hurts, so the rule is optimal.
    """
    removed: list[Any] = []
    kept_below: dict[Any, list[int]] = {}
    position = {v: i for i, v in enumerate(forest.nodes)}
    adjacency = nx.to_numpy_array(forest, nodelist=list(forest.nodes), dtype=float, weight=None)
    for comp in nx.connected_components(forest):
        root = min(comp, key=position.__getitem__)
        for v in nx.dfs_postorder_nodes(forest, source=root):
            group = [position[v]]
            for child in [u for u in forest[v] if u in kept_below]:
                group.extend(kept_below.pop(child))
            if _rho_of(adjacency, group) <= lam:
                kept_below[v] = group
            else:
                removed.append(v)
                kept_below[v] = []  # removed: contributes nothing upwards
        kept_below.clear()
    return removed


def srm_tree(graph: nx.Graph, k: int, eps: float = 1e-4) -> list[Any]:
    """Spectral-radius minimisation with budget k on a forest (trees: treewidth 1).

    Binary search on λ ∈ [0, ρ(G)] until the bracket is ≤ ``eps``, testing feasibility with
    :func:`tree_feasible_removals`; returns the removal set of the smallest feasible λ found, so
    ρ(G − R) ≤ min_{|R'| ≤ k} ρ(G − R') + eps.

    Parameters
    ----------
    graph : networkx.Graph
        A forest (ValueError otherwise).
    k : int
        Budget, 0 ≤ k ≤ n.
    eps : float
        Binary-search tolerance on λ.

    Returns
    -------
    list
        At most k vertices.

    Examples
    --------
    >>> import networkx as nx
    >>> srm_tree(nx.star_graph(4), 1)
    [0]
    """
    check_graph(graph)
    k = check_budget(k, graph.number_of_nodes())
    if graph.number_of_nodes() and not nx.is_forest(graph):
        raise ValueError("graph must be a forest (acyclic); use srm_exact_treewidth or srm_greedy otherwise")
    eps = check_positive(eps, "eps")
    lo, hi = 0.0, spectral_radius(graph)
    at_zero = tree_feasible_removals(graph, lo)
    if len(at_zero) <= k:
        return at_zero
    best: list[Any] = []
    while hi - lo > eps:
        mid = 0.5 * (lo + hi)
        rem = tree_feasible_removals(graph, mid)
        if len(rem) <= k:
            hi, best = mid, rem
        else:
            lo = mid
    return best
