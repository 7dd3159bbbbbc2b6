"""Contact graphs: the shipped outbreak transmission trees, the seeded augmentation of spec §5, random trees
and random partial k-trees (bounded treewidth)."""

from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import Any

import networkx as nx

from icml25.core.data import resolve_data
from icml25.core.files import FileFormatError, check_file, read_json
from icml25.core.seeding import check_random_state
from icml25.core.validation import check_int, check_positive, check_probability

from ._validation import check_graph
from .spectral import spectral_radius

__all__ = ["load_outbreak_tree", "outbreak_tree_names", "augment_to_spectral_radius", "flu_contact_graph",
           "random_partial_k_tree", "random_tree"]

SLUG = "sis_vaccination"
FLU_TREE = "chn.2009.flu.1.00"
_TREES_URL = "https://github.com/DrakeLab/taube-transmission-trees"


_TREES_FORMAT = "an OutbreakTrees JSON object {tree id: {'root': case, 'edges': [[infector, infectee], ...]}}"


def _trees(path: str | Path | None) -> dict[str, Any]:
    if path is not None and Path(path).is_dir():
        check_file(path, _TREES_FORMAT)  # one line: a directory, expected the file
    return _read_trees(str(resolve_data(SLUG, "outbreak_trees_edges.json", path=path, url=None)))


@functools.lru_cache(maxsize=4)
def _read_trees(file: str) -> dict[str, Any]:
    """The trees of ``file``, each checked (a malformed file raises one line naming it and what was expected)."""
    trees = read_json(file, _TREES_FORMAT)
    if not isinstance(trees, dict) or not trees:
        raise FileFormatError(f"{file}: a JSON {type(trees).__name__} without trees; expected {_TREES_FORMAT}")
    for name, tree in trees.items():
        ok = isinstance(tree, dict) and "root" in tree and isinstance(tree.get("edges"), list) and all(
            isinstance(e, list) and len(e) == 2 and all(isinstance(v, (str, int)) for v in e) for e in tree["edges"])
        if not ok:
            raise FileFormatError(f"{file}: tree {name[:40]!r} has no 'root' or no list of [infector, infectee] "
                                  f"'edges'; expected {_TREES_FORMAT}")
    return trees


def outbreak_tree_names(path: str | Path | None = None) -> list[str]:
    """Names of the 382 OutbreakTrees transmission trees shipped with the package (Taube et al. 2022)."""
    return sorted(_trees(path))


def load_outbreak_tree(name: str = FLU_TREE, path: str | Path | None = None) -> nx.Graph:
    """One transmission tree of the OutbreakTrees database as an undirected graph on 0..n−1.

    Parameters
    ----------
    name : str
        Tree id, e.g. ``"chn.2009.flu.1.00"`` (the Beijing 2009 college influenza outbreak, 40 cases).
    path : path, optional
        A user copy of ``outbreak_trees_edges.json`` (default: the shipped copy).

    Returns
    -------
    networkx.Graph
        Cases relabelled 0..n−1 in networkx insertion order of the edge list; attribute ``label`` holds the
        database's case name, and for ``chn.2009.flu.1.00`` also ``location``, ``strain``, ``onset``.
    """
    trees = _trees(path)
    if not isinstance(name, str) or name not in trees:
        raise ValueError(f"name must be an OutbreakTrees id (see outbreak_tree_names()), got {name!r}")
    tree = nx.Graph()
    tree.add_node(trees[name]["root"])
    tree.add_edges_from(tuple(e) for e in trees[name]["edges"])
    if name == FLU_TREE:
        tree = nx.Graph()
        with open(resolve_data(SLUG, "chn_2009_flu_1_00_edges.csv"), newline="", encoding="utf-8") as f:
            tree.add_edges_from((r["infector"], r["infectee"]) for r in csv.DictReader(f))
        with open(resolve_data(SLUG, "chn_2009_flu_1_00_nodes.csv"), newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                if r["node"] in tree:
                    tree.nodes[r["node"]].update(location=r["location"], strain=r["strain"], onset=r["onset"])
    mapping = {v: i for i, v in enumerate(tree.nodes)}
    for v in tree.nodes:
        tree.nodes[v]["label"] = v
    return nx.relabel_nodes(tree, mapping, copy=True)


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
