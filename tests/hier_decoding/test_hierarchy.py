"""Hierarchy: construction, indexing, matrices vs networkx, serialisation, validation."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from icml25.hier_decoding import Hierarchy, random_tree
from icml25.hier_decoding.data import load_tree


def _graph(h: Hierarchy) -> nx.DiGraph:
    g = nx.DiGraph()
    for n in range(h.n_nodes):
        for c in h.children[n]:
            g.add_edge(n, int(c))
    return g


@pytest.mark.parametrize("seed", range(5))
def test_matrices_match_networkx(seed: int) -> None:
    h = random_tree(12, seed)
    g = _graph(h)
    assert nx.is_arborescence(g)
    depth = nx.shortest_path_length(g, h.root)
    leaves = [n for n in g if g.out_degree(n) == 0]
    assert sorted(leaves) == list(range(h.n_leaves))  # leaves indexed first
    for n in range(h.n_nodes):
        assert h.depth[n] == depth[n]
        anc = nx.ancestors(g, n) | {n}
        assert set(np.flatnonzero(h.ancestor_matrix[n])) == anc
        below = [leaf for leaf in leaves if n in nx.ancestors(g, leaf) | {leaf}]
        assert h.n_leaves_below[n] == len(below)
        assert h.max_leaf_depth_below[n] == max(depth[leaf] for leaf in below)
        assert h.min_leaf_depth_below[n] == min(depth[leaf] for leaf in below)
        assert h.ic[n] == pytest.approx(np.log(h.n_leaves / len(below)))
    lca = h.lca_matrix()
    for n in range(h.n_nodes):
        for leaf in range(h.n_leaves):
            assert lca[n, leaf] == nx.lowest_common_ancestor(g, n, leaf)


def test_three_constructors_agree() -> None:
    a = Hierarchy.from_parent_children({"r": ["a", "b"], "a": ["x", "y"]})
    b = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "x"), ("a", "y")])
    c = Hierarchy.from_paths(["a/x", "a/y", "b"], root="r")
    assert a.names == b.names
    assert [str(n).split("/")[-1] for n in c.names] == a.names
    np.testing.assert_array_equal(a.leaf_path_matrix, c.leaf_path_matrix)


def test_json_round_trip(tmp_path) -> None:
    h = Hierarchy.from_paths(["2/1/3", "2/1/4", "2/5", "7"])
    back = Hierarchy.from_json(h.to_json(tmp_path / "h.json"))
    assert back.names == h.names and back.to_dict() == h.to_dict()
    np.testing.assert_array_equal(back.parent, h.parent)


def test_official_trees() -> None:
    t = load_tree("tieredimagenet")
    assert (t.n_nodes, t.n_leaves, t.root) == (843, 608, 719)
    assert t.depth[: t.n_leaves].min() == 3 and t.depth[: t.n_leaves].max() == 12
    i = load_tree("inat19")
    assert (i.n_nodes, i.n_leaves, i.root) == (1190, 1010, 1046)
    assert set(i.depth[: i.n_leaves]) == {7}


def test_node_probs_and_monotonicity() -> None:
    h = random_tree(14, 3)
    P = np.random.default_rng(0).dirichlet(np.ones(h.n_leaves), size=20)
    pn = h.node_probs(P)
    np.testing.assert_allclose(pn[:, h.root], 1.0)
    nonroot = h.parent >= 0
    assert (pn[:, nonroot] <= pn[:, h.parent[nonroot]] + 1e-12).all()
    np.testing.assert_allclose(pn, P @ h.leaf_path_matrix)


@pytest.mark.parametrize("children, match", [
    ({"a": ["b"], "c": ["d"]}, "exactly one root"),
    ({"a": ["b"], "b": ["a"]}, "cycle"),
    ({"r": ["a"], "a": ["b"], "b": ["c"], "c": ["a"]}, "two parents|cycle"),
    ({"r": ["a", "b"], "a": ["c"], "b": ["c"]}, "two parents"),
    ({"r": ["a", "a"]}, "twice"),
])
def test_invalid_trees(children, match) -> None:
    with pytest.raises(ValueError, match=match):
        Hierarchy(children)


def test_cycle_detached_from_root() -> None:
    with pytest.raises(ValueError, match="cycle|two parents"):
        Hierarchy({"r": ["a"], "x": ["y"], "y": ["x"]})


def test_leaf_order_and_labels() -> None:
    h = Hierarchy({"r": ["a", "b"], "a": ["x", "y"]}, leaf_order=["y", "b", "x"])
    assert h.names[:3] == ["y", "b", "x"]
    np.testing.assert_array_equal(h.leaf_indices(["x", "y"]), [2, 0])
    with pytest.raises(ValueError, match="labels"):
        h.leaf_indices(["a"])
    with pytest.raises(ValueError, match="leaf_order"):
        Hierarchy({"r": ["a", "b"]}, leaf_order=["a"])


def test_official_json_keys_are_ints() -> None:
    d = {"children": {"3": [0, 1], "4": [3, 2]}}
    h = Hierarchy.from_json(json.dumps(d))
    assert h.names == [0, 1, 2, 3, 4] and h.root == 4
