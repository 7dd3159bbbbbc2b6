"""Metric values vs their definitions (spec §2.2) and networkx; bad-input errors."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from icml25.hier_decoding import (
    Accuracy,
    Hamming,
    HFBeta,
    Hierarchy,
    LeafToLeafCost,
    MistakeSeverity,
    NodeToLeafCost,
    WuPalmer,
    Zhao,
    decode,
    get_metric,
    random_tree,
)


@pytest.fixture(scope="module")
def tree() -> Hierarchy:
    return random_tree(13, 7, max_children=3)


def _sets(h: Hierarchy, row) -> set[int]:
    return set(np.flatnonzero(row).tolist())


def test_hf_beta_definition(tree: Hierarchy) -> None:
    rng = np.random.default_rng(0)
    Y = rng.random((30, tree.n_nodes)) < 0.4
    for beta in (0.5, 1.0, 2.0):
        for include_root in (True, False):
            m = HFBeta(tree, beta, include_root=include_root)
            S = m.score_matrix(Y)
            for i in range(5):
                for leaf in range(tree.n_leaves):
                    pred = _sets(tree, Y[i])
                    true = set(tree.ancestors(leaf).tolist())
                    if not include_root:
                        pred.discard(tree.root)
                        true.discard(tree.root)
                    tp = len(pred & true)
                    if tp == 0:
                        ref = 0.0
                    else:
                        hp, hr = tp / len(pred), tp / len(true)
                        ref = (1 + beta**2) * hp * hr / (beta**2 * hp + hr)
                    assert S[i, leaf] == pytest.approx(ref)


def test_accuracy_and_hamming(tree: Hierarchy) -> None:
    nodes = np.arange(tree.n_nodes)
    acc = Accuracy(tree).score_matrix(nodes)
    ham = Hamming(tree).score_matrix(nodes)
    for n in nodes:
        for leaf in range(tree.n_leaves):
            assert acc[n, leaf] == float(n == leaf)
            diff = tree.ancestor_matrix[n] != tree.ancestor_matrix[leaf]
            assert ham[n, leaf] == pytest.approx(diff.mean())


def test_tree_distances_vs_networkx(tree: Hierarchy) -> None:
    g = nx.Graph()
    for n in range(tree.n_nodes):
        for c in tree.children[n]:
            g.add_edge(n, int(c))
    dist = dict(nx.all_pairs_shortest_path_length(g))
    C_ms = MistakeSeverity(tree).cost_matrix
    C_wp = WuPalmer(tree).cost_matrix
    C_z = Zhao(tree).cost_matrix
    d = tree.depth
    for n in range(tree.n_nodes):
        for leaf in range(tree.n_leaves):
            assert C_ms[n, leaf] == dist[n][leaf]
            lca_depth = (d[n] + d[leaf] - dist[n][leaf]) / 2
            assert C_wp[n, leaf] == pytest.approx(1 - 2 * lca_depth / (d[n] + d[leaf]))
            lca = tree.lca_matrix()[n, leaf]
            den = tree.ic[n] + tree.ic[leaf]
            ref = 0.0 if n == leaf else (1.0 if den == 0 else 1 - 2 * tree.ic[lca] / den)
            assert C_z[n, leaf] == pytest.approx(ref)
    assert (C_z[tree.root] == 1.0).all() and (C_wp[tree.root] == 1.0).all()  # §8 division by zero


def test_expected_score_is_probability_weighted(tree: Hierarchy) -> None:
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(tree.n_leaves), size=8)
    for name in ("accuracy", "hamming", "hf_1", "mistake_severity", "wu_palmer", "zhao"):
        m = get_metric(name, tree)
        Y = m.decode(P)
        exp = m.expected_score(P, Y, average=False)
        ref = [sum(P[i, leaf] * m.score(np.array([leaf]), Y[i:i + 1]) for leaf in range(tree.n_leaves))
               for i in range(len(P))]
        np.testing.assert_allclose(exp, ref, atol=1e-12)


def test_score_accepts_node_ids(tree: Hierarchy) -> None:
    m = MistakeSeverity(tree)
    y = np.array([0, 1])
    assert m.score(y, np.array([0, 1])) == 0.0
    assert m.score(y, tree.indicator(np.array([0, 1]))) == 0.0


# ------------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("P, match", [
    ([[0.5, 0.2]], "shape"),
    ([[0.5, 0.2, 0.2]], "sum to 1"),
    ([[1.2, -0.2, 0.0]], "non-negative"),
    ([[np.nan, 0.5, 0.5]], "finite"),
])
def test_bad_probabilities(P, match) -> None:
    h = Hierarchy.from_paths(["a/x", "a/y", "b"])
    with pytest.raises(ValueError, match=match) as e:
        decode(P, h, "hf_1")
    assert "leaf_probs" in str(e.value)


def test_bad_beta_metric_and_costs() -> None:
    h = Hierarchy.from_paths(["a/x", "a/y", "b"])
    with pytest.raises(ValueError, match="beta"):
        HFBeta(h, beta=0)
    with pytest.raises(ValueError, match="beta"):
        HFBeta(h, beta=-1.0)
    with pytest.raises(ValueError, match="unknown metric"):
        decode([[0.2, 0.3, 0.5]], h, "f1_score")
    with pytest.raises(ValueError, match="shape"):
        NodeToLeafCost(h, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="shape"):
        LeafToLeafCost(h, np.zeros((5, 3)))
    with pytest.raises(TypeError, match="hierarchy"):
        MistakeSeverity("tree")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="single-node"):
        MistakeSeverity(h).score(np.array([0]), np.array([[1, 1, 0, 0, 0]]))


def test_node_id_fast_path_equals_indicator_path(tree: Hierarchy) -> None:
    nodes = np.arange(tree.n_nodes)
    Y = tree.indicator(nodes).astype(float)
    metrics = [get_metric(m, tree) for m in ("accuracy", "hamming", "hf_0.5", "hf_2", "mistake_severity", "zhao")]
    metrics.append(HFBeta(tree, 1.0, include_root=False))
    for m in metrics:
        np.testing.assert_allclose(m.score_matrix(nodes), m._score_matrix(Y), atol=1e-12, err_msg=m.name)
    with pytest.raises(ValueError, match="node indices"):
        metrics[0].score_matrix(np.array([tree.n_nodes]))
