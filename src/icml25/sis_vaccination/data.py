"""Data loading: the OutbreakTrees transmission trees shipped in ``data/`` (Taube et al. 2022), resolved through
:func:`icml25.core.data.resolve_data` (the user's path, the cache, then the shipped copy)."""

from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import Any

import networkx as nx

from icml25.core.data import resolve_data
from icml25.core.files import FileFormatError, check_file, read_json

__all__ = ["load_outbreak_tree", "outbreak_tree_names"]

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
