"""Contact graphs: the shipped outbreak transmission trees (loaded by ``data.py``), the seeded augmentation of
spec §5, random trees and random partial k-trees (bounded treewidth)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import networkx as nx

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_int, check_positive, check_probability

from ._validation import check_graph
from .data import FLU_TREE, load_outbreak_tree, outbreak_tree_names
from .spectral import spectral_radius

__all__ = ["load_outbreak_tree", "outbreak_tree_names", "augment_to_spectral_radius", "flu_contact_graph",
           "random_partial_k_tree", "random_tree"]


def augment_to_spectral_radius(graph: nx.Graph, target: float, seed: Any = 0,
                               same_attribute: str | None = None, max_tries: int = 100_000) -> nx.Graph:
    """Add uniformly random vertex pairs until ρ(G) ≥ ``target`` (spec §5 augmentation; our choice).

    Parameters
    ----------
    graph : networkx.Graph
        Graph on vertices 0..n−1 (copied, not modified).
    target : float
        Spectral radius to reach.
    seed : int or Generator
        ``numpy.random.default_rng(seed)``; each proposal is ``rng.choice(n, 2, replace=False)``; existing edges
        are no-ops.
    same_attribute : str, optional
        Only accept pairs whose node attribute of this name is equal (e.g. ``"location"``).
    max_tries : int
        Give up (ValueError) after this many proposals.

    Returns
    -------
    networkx.Graph
    """
    check_graph(graph)
    target = check_positive(target, "target")
    max_tries = check_int(max_tries, "max_tries", low=1)
    if same_attribute is not None and not isinstance(same_attribute, str):
        raise TypeError(f"same_attribute must be a node attribute name (str) or None, got {same_attribute!r}")
    n = graph.number_of_nodes()
    if set(graph.nodes) != set(range(n)):
        raise ValueError("graph must have vertices 0..n-1 (use load_outbreak_tree or nx.convert_node_labels_to_integers)")
    if n < 2:
        raise ValueError(f"graph needs at least 2 vertices, got {n}")
    rng = check_random_state(seed)
    g = graph.copy()
    for _ in range(int(max_tries)):
        if spectral_radius(g) >= target:
            return g
        a, b = (int(x) for x in rng.choice(n, 2, replace=False))
        if same_attribute is not None and g.nodes[a].get(same_attribute) != g.nodes[b].get(same_attribute):
            continue
        g.add_edge(a, b)
    raise ValueError(f"target spectral radius {target} not reached after {max_tries} proposals")


def flu_contact_graph(target_rho: float = 3.9, seed: Any = 0, path: str | Path | None = None) -> nx.Graph:
    """The augmented chn.2009.flu.1.00 contact graph (n = 40): the transmission tree plus seeded random pairs
    until ρ ≥ ``target_rho`` (seed 0: 54 edges, ρ ≈ 4.07, Δ = 9)."""
    target_rho = check_positive(target_rho, "target_rho")
    return augment_to_spectral_radius(load_outbreak_tree(FLU_TREE, path=path), target_rho, seed=seed)


def random_tree(n: int, seed: Any = None) -> nx.Graph:
    """A uniformly random labelled tree on 0..n−1 (Prüfer sequence)."""
    n = check_int(n, "n", low=1)
    rng = check_random_state(seed)
    if n <= 2:
        return nx.path_graph(n)
    prufer = [int(x) for x in rng.integers(0, n, size=n - 2)]
    return nx.from_prufer_sequence(prufer)


def random_partial_k_tree(n: int, k: int, keep: float = 0.8, seed: Any = None) -> nx.Graph:
    """A random partial k-tree (treewidth ≤ k): grow a k-tree, keep each edge with probability ``keep``.

    The k-tree starts from a (k+1)-clique; each new vertex joins a uniformly chosen existing k-clique.
    """
    k = check_int(k, "k", low=1)
    n = check_int(n, "n", low=k + 1)
    keep = check_probability(keep, "keep", open_low=True)
    rng = check_random_state(seed)
    g = nx.complete_graph(k + 1)
    cliques = [tuple(c) for c in _k_subsets(list(range(k + 1)), k)]
    for v in range(k + 1, n):
        base = cliques[int(rng.integers(len(cliques)))]
        g.add_edges_from((v, u) for u in base)
        for drop in range(k):
            cliques.append(tuple(sorted((*base[:drop], *base[drop + 1:], v))))
    out = nx.Graph()
    out.add_nodes_from(range(n))
    out.add_edges_from(e for e in g.edges if rng.random() < keep)
    return out


def _k_subsets(items: list[int], k: int) -> list[tuple[int, ...]]:
    from itertools import combinations

    return list(combinations(items, k))
