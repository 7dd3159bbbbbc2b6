"""Exact spectral-radius minimisation by dynamic programming over a nice tree decomposition (spec §2.3(b)).

FEASIBLE(λ) asks whether some R, |R| ≤ k, gives ρ(G − R) ≤ λ; an outer binary search on λ finds the smallest
feasible λ up to ``eps``. Correctness rests on ρ(G − R) = max over connected components and on monotonicity of
ρ under vertex deletion.

State compression (exact). For a node t with bag X_t and vertices V_t below it, a partial solution R ⊆ V_t is
summarised by (S, A): S = X_t ∖ R, the kept bag vertices, and A, the union of the kept components of
G[V_t ∖ R] that touch S. Components that do not touch S are finished (a forgotten vertex has all its
neighbours below), were checked ≤ λ when they last grew, and never change again; so two partial solutions with
the same (S, A) have the same futures and only the one with the fewest removals is kept. The official code
stores every removal set per (S, |R|) instead. The number of states is at most the number of removal sets of
size ≤ k, O(n^k), and usually far smaller; ``max_states`` caps it (then the result is a heuristic).
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import scipy.linalg

from icml25.core.validation import check_int, check_positive

from ._validation import check_budget, check_graph
from .nice_tree_decomposition import NiceTreeDecomposition, nice_tree_decomposition
from .spectral import spectral_radius

__all__ = ["srm_exact_treewidth", "treewidth_feasible_removals"]

State = tuple[int, int]  # (S mask, A mask)
Entry = tuple[int, int]  # (removals c, witness R mask)


class _Oracle:
    """ρ of an induced subgraph given as a vertex bitmask, with a cache shared across λ values."""

    def __init__(self, adjacency: np.ndarray) -> None:
        self.a = adjacency
        self.cache: dict[int, float] = {}

    def rho(self, mask: int) -> float:
        val = self.cache.get(mask)
        if val is None:
            idx = _bits(mask)
            if len(idx) <= 1:
                val = 0.0
            else:
                sub = self.a[np.ix_(idx, idx)]
                val = float(scipy.linalg.eigvalsh(sub, subset_by_index=[len(idx) - 1] * 2)[0])
            self.cache[mask] = val
        return val


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _touching(mask: int, seeds: int, nbr: list[int]) -> int:
    """Union of the connected components of G[mask] that contain a vertex of ``seeds``."""
    reached = seeds & mask
    frontier = reached
    while frontier:
        grow = 0
        for v in _bits(frontier):
            grow |= nbr[v]
        frontier = grow & mask & ~reached
        reached |= frontier
    return reached


def _put(table: dict[State, Entry], key: State, c: int, r: int) -> None:
    old = table.get(key)
    if old is None or c < old[0]:
        table[key] = (c, r)


def treewidth_feasible_removals(ntd: NiceTreeDecomposition, index: dict[Any, int], adjacency: np.ndarray,
                                k: int, lam: float, oracle: _Oracle | None = None,
                                max_states: int | None = None) -> int | None:
    """FEASIBLE(λ): the bitmask of a removal set R, |R| ≤ k, with ρ(G − R) ≤ λ, or None.

    Parameters
    ----------
    ntd : NiceTreeDecomposition
        Nice tree decomposition of the graph.
    index : dict
        Vertex → bit position (row of ``adjacency``).
    adjacency : ndarray, shape (n, n)
        Dense adjacency in ``index`` order.
    k : int
        Budget.
    lam : float
        Spectral-radius bound λ.
    oracle : optional
        Shared ρ cache.
    max_states : int, optional
        Keep at most this many states per node (fewest removals first): a heuristic cap.
    """
    oracle = oracle or _Oracle(adjacency)
    n = adjacency.shape[0]
    nbr = [sum(1 << int(j) for j in np.flatnonzero(adjacency[i])) for i in range(n)]
    tables: list[dict[State, Entry] | None] = [None] * len(ntd.nodes)
    users = [0] * len(ntd.nodes)
    for node in ntd.nodes:
        for ch in node.children:
            users[ch] += 1
    for t, node in enumerate(ntd.nodes):
        table: dict[State, Entry] = {}
        if node.kind == "leaf":
            table[(0, 0)] = (0, 0)
        elif node.kind == "introduce":
            bit = 1 << index[node.vertex]
            for (s, a), (c, r) in tables[node.children[0]].items():  # type: ignore[union-attr]
                if c + 1 <= k:  # remove v
                    _put(table, (s, a), c + 1, r | bit)
                if oracle.rho(a | bit) <= lam:  # keep v: it joins the active components it touches
                    _put(table, (s | bit, a | bit), c, r)
        elif node.kind == "forget":
            bit = 1 << index[node.vertex]
            for (s, a), (c, r) in tables[node.children[0]].items():  # type: ignore[union-attr]
                if s & bit:
                    s2 = s & ~bit
                    _put(table, (s2, _touching(a, s2, nbr)), c, r)
                else:
                    _put(table, (s, a), c, r)
        else:  # join
            bag_mask = sum(1 << index[v] for v in node.bag)
            left, right = (tables[ch] for ch in node.children)
            by_s: dict[int, list[tuple[int, Entry]]] = {}
            for (s, a), e in right.items():  # type: ignore[union-attr]
                by_s.setdefault(s, []).append((a, e))
            for (s, a1), (c1, r1) in left.items():  # type: ignore[union-attr]
                both_removed = bin(bag_mask & ~s).count("1")
                for a2, (c2, r2) in by_s.get(s, ()):
                    c = c1 + c2 - both_removed
                    if c > k:
                        continue
                    a = a1 | a2
                    if oracle.rho(a) <= lam:
                        _put(table, (s, a), c, r1 | r2)
        if max_states is not None and len(table) > max_states:
            keep = sorted(table.items(), key=lambda kv: (kv[1][0], bin(kv[0][1]).count("1")))[:max_states]
            table = dict(keep)
        tables[t] = table
        for ch in node.children:  # free child tables once consumed
            users[ch] -= 1
            if users[ch] == 0:
                tables[ch] = None
    root = tables[ntd.root] or {}
    best = root.get((0, 0))
    return best[1] if best is not None and best[0] <= k else None


def srm_exact_treewidth(graph: nx.Graph, k: int, eps: float = 0.01,
                        decomposition: tuple[int, nx.Graph] | None = None,
                        max_states: int | None = None) -> list[Any]:
    """Spectral-radius minimisation with budget k, exact up to ``eps`` for graphs of small treewidth.

    Binary search on λ ∈ [0, ρ(G)] (the official code starts at 1; graphs whose optimum is below 1 need 0)
    until hi − lo ≤ ``eps``; FEASIBLE(λ) is the dynamic program over a nice tree decomposition described in
    the module docstring. The returned R satisfies ρ(G − R) ≤ min_{|R'| ≤ k} ρ(G − R') + eps.

    Parameters
    ----------
    graph : networkx.Graph
        Undirected simple graph (best with treewidth ≤ 3 or so; cost grows like n^k · 2^width in the worst
        case).
    k : int
        Budget, 0 ≤ k ≤ n.
    eps : float
        Tolerance of the binary search on λ.
    decomposition : (width, tree), optional
        A tree decomposition (networkx format); default ``treewidth_min_fill_in(graph)``.
    max_states : int, optional
        Cap on DP states per node; with a cap the result is a heuristic (no optimality guarantee).

    Returns
    -------
    list
        At most k vertices to remove (fewer when fewer suffice for the smallest feasible λ).

    Examples
    --------
    >>> import networkx as nx
    >>> srm_exact_treewidth(nx.star_graph(4), 1)
    [0]
    """
    check_graph(graph)
    k = check_budget(k, graph.number_of_nodes())
    eps = check_positive(eps, "eps")
    if max_states is not None:
        max_states = check_int(max_states, "max_states", low=1)
    nodes = list(graph.nodes)
    if not nodes:
        return []
    index = {v: i for i, v in enumerate(nodes)}
    adjacency = nx.to_numpy_array(graph, nodelist=nodes, dtype=float, weight=None)
    ntd = nice_tree_decomposition(graph, decomposition)
    oracle = _Oracle(adjacency)

    def feasible(lam: float) -> int | None:
        return treewidth_feasible_removals(ntd, index, adjacency, k, lam, oracle, max_states)

    lo, hi = 0.0, spectral_radius(graph)
    at_zero = feasible(lo)
    if at_zero is not None:
        return [nodes[i] for i in _bits(at_zero)]
    best = 0
    while hi - lo > eps:
        mid = 0.5 * (lo + hi)
        r = feasible(mid)
        if r is not None:
            hi, best = mid, r
        else:
            lo = mid
    return [nodes[i] for i in _bits(best)]
