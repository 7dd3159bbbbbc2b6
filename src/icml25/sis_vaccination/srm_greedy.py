"""Greedy spectral-radius minimisation (paper Algorithm 4) and the baseline vaccination strategies."""

from __future__ import annotations

import math
from typing import Any

import networkx as nx
import numpy as np
import scipy.linalg
import scipy.sparse.csgraph

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_int

from ._validation import check_budget, check_graph

__all__ = ["srm_greedy", "srm_greedy_naive", "degree_strategy", "walk_strategy", "random_strategy"]

_TIE = 1e-9  # values within this of the minimum count as ties (broken by the lowest vertex position)


def _adj(graph: nx.Graph) -> tuple[list[Any], np.ndarray]:
    nodes = list(graph.nodes)
    return nodes, nx.to_numpy_array(graph, nodelist=nodes, dtype=float, weight=None)


def _rho(a: np.ndarray) -> float:
    m = a.shape[0]
    if m == 0:
        return 0.0
    if m == 1:
        return 0.0
    return max(float(scipy.linalg.eigvalsh(a, subset_by_index=[m - 1, m - 1])[0]), 0.0)


def _pick(values: np.ndarray, allowed: np.ndarray) -> int:
    vals = np.where(allowed, values, np.inf)
    best = vals.min()
    return int(np.flatnonzero(vals <= best + _TIE)[0])


def srm_greedy_naive(graph: nx.Graph, k: int) -> list[Any]:
    """Greedy SRM recomputing ρ(G − R − v) on the whole remaining graph for every candidate v.

    The reference implementation for :func:`srm_greedy` (same output; O(k·n·n³)). Parameters and return as
    :func:`srm_greedy`.
    """
    check_graph(graph)
    k = check_budget(k, graph.number_of_nodes())
    nodes, a = _adj(graph)
    removed = np.zeros(len(nodes), dtype=bool)
    order: list[int] = []
    for _ in range(k):
        vals = np.full(len(nodes), np.inf)
        for v in np.flatnonzero(~removed):
            keep = ~removed
            keep[v] = False
            idx = np.flatnonzero(keep)
            vals[v] = _rho(a[np.ix_(idx, idx)])
        choice = _pick(vals, ~removed)
        removed[choice] = True
        order.append(choice)
    return [nodes[i] for i in order]


def srm_greedy(graph: nx.Graph, k: int) -> list[Any]:
    """Greedy spectral-radius minimisation (paper Algorithm 4), with connected-component reuse.

    k times, remove the vertex v minimising ρ(G − R − v) (ties → earliest in ``graph.nodes``). Since ρ is the
    maximum over connected components, only the component containing v changes: ρ(G − R − v) =
    max(ρ of the other components, ρ(C_v − v)), so one eigen-solve of |C_v| − 1 vertices per candidate.

    Parameters
    ----------
    graph : networkx.Graph
        Undirected simple graph.
    k : int
        Budget, 0 ≤ k ≤ n.

    Returns
    -------
    list
        The k removed vertices in the order chosen.

    Examples
    --------
    >>> import networkx as nx
    >>> srm_greedy(nx.star_graph(5), 1)
    [0]
    """
    check_graph(graph)
    k = check_budget(k, graph.number_of_nodes())
    nodes, a = _adj(graph)
    n = len(nodes)
    removed = np.zeros(n, dtype=bool)
    order: list[int] = []
    for _ in range(k):
        alive = np.flatnonzero(~removed)
        sub = a[np.ix_(alive, alive)]
        ncomp, labels = scipy.sparse.csgraph.connected_components(sub != 0, directed=False)
        comps = [alive[labels == c] for c in range(ncomp)]
        comp_rho = np.array([_rho(a[np.ix_(c, c)]) for c in comps])
        vals = np.full(n, np.inf)
        for ci, comp in enumerate(comps):
            others = np.delete(comp_rho, ci).max() if ncomp > 1 else 0.0
            if comp_rho[ci] + _TIE < others:
                vals[comp] = max(others, comp_rho[ci])  # v's own component is not the maximum: ρ unchanged
                continue
            for j, v in enumerate(comp):
                rest = np.delete(comp, j)
                vals[v] = max(others, _rho(a[np.ix_(rest, rest)]))
        choice = _pick(vals, ~removed)
        removed[choice] = True
        order.append(choice)
    return [nodes[i] for i in order]


def degree_strategy(graph: nx.Graph, k: int) -> list[Any]:
    """The k vertices of highest degree (ties → earliest in ``graph.nodes``)."""
    check_graph(graph)
    k = check_budget(k, graph.number_of_nodes())
    nodes = list(graph.nodes)
    deg = np.array([graph.degree(v) for v in nodes])
    return [nodes[i] for i in np.argsort(-deg, kind="stable")[:k]]


def walk_strategy(graph: nx.Graph, k: int, length: int | None = None) -> list[Any]:
    """The k vertices whose single deletion removes the most closed walks of length ℓ.

    score_i = tr(Ã^ℓ) − tr(Ã_{−i}^ℓ) with Ã = A / ρ(A) (scaled to avoid overflow; the ranking is unchanged),
    ℓ = ⌈log n / log 1.1⌉ by default; traces from eigenvalues, tr(Ã^ℓ) = Σ λ_j^ℓ.
    """
    check_graph(graph)
    n = graph.number_of_nodes()
    k = check_budget(k, n)
    nodes, a = _adj(graph)
    if n == 0 or k == 0:
        return []
    ell = check_int(length, "length", low=1) if length is not None else max(1, math.ceil(math.log(max(n, 2)) / math.log(1.1)))
    rho = _rho(a)
    if rho == 0.0:
        return nodes[:k]
    a = a / rho
    total = float(np.sum(scipy.linalg.eigvalsh(a) ** ell))
    scores = np.empty(n)
    for i in range(n):
        idx = np.delete(np.arange(n), i)
        scores[i] = total - float(np.sum(scipy.linalg.eigvalsh(a[np.ix_(idx, idx)]) ** ell))
    return [nodes[i] for i in np.argsort(-scores, kind="stable")[:k]]


def random_strategy(graph: nx.Graph, k: int, seed: Any = None) -> list[Any]:
    """k vertices drawn uniformly without replacement."""
    check_graph(graph)
    k = check_budget(k, graph.number_of_nodes())
    nodes = list(graph.nodes)
    rng = check_random_state(seed)
    return [nodes[i] for i in sorted(rng.choice(len(nodes), size=k, replace=False))]
