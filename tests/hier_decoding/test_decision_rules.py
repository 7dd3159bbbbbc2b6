"""Optimal decoders vs the exhaustive oracle (D6), pruning == brute force, and the pitfalls of spec §8."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25.hier_decoding import (
    HEURISTICS,
    HFBeta,
    Hierarchy,
    LeafToLeafCost,
    MistakeSeverity,
    NodeToLeafCost,
    WuPalmer,
    Zhao,
    exhaustive_decode,
    get_metric,
    hf_beta_subset,
    hf_candidate_threshold,
    node_cost_argmin,
    pruning_constants,
    random_tree,
    reasonableness,
    weighted_path_cost,
)

METRICS = ("accuracy", "hamming", "hf_0.5", "hf_1", "hf_2", "mistake_severity", "wu_palmer", "zhao")
SPACE = {"subset": "subsets", "node": "nodes", "leaf": "leaves"}


def _cases(seed: int, n_trees: int):
    rng = np.random.default_rng(seed)
    for _ in range(n_trees):
        h = random_tree(int(rng.integers(3, 15)), rng, max_children=int(rng.integers(2, 5)))
        yield h, rng.dirichlet(0.3 * np.ones(h.n_leaves), size=3), rng


@pytest.mark.parametrize("seed", [0, 1])
def test_decoders_equal_exhaustive_optimum(seed: int, global_seed: int) -> None:
    for h, P, rng in _cases(1000 * global_seed + seed, 30):
        metrics = [get_metric(m, h) for m in METRICS] + [
            HFBeta(h, 1.0, include_root=False), HFBeta(h, 3.0),
            NodeToLeafCost(h, weighted_path_cost(h, rng)),
            NodeToLeafCost(h, rng.normal(size=(h.n_nodes, h.n_leaves))),  # not reasonable: brute force
            LeafToLeafCost(h, rng.uniform(size=(h.n_leaves, h.n_leaves)))]
        for m in metrics:
            space = "subsets" if m.name == "accuracy" else SPACE[m.prediction_space]
            _, best = exhaustive_decode(P, m, space)
            got = m.expected_score(P, m.decode(P), average=False)
            np.testing.assert_allclose(got, best, atol=1e-9, err_msg=f"{m.name} on {h}")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pruned_d3_equals_brute_force(seed: int) -> None:
    for h, P, rng in _cases(seed + 50, 40):
        costs = [MistakeSeverity(h).cost_matrix, WuPalmer(h).cost_matrix, Zhao(h).cost_matrix,
                 weighted_path_cost(h, rng), rng.normal(size=(h.n_nodes, h.n_leaves))]
        for C in costs:
            brute = node_cost_argmin(P, h, C, pruning="none")
            for mode in ("auto", "strict"):
                np.testing.assert_array_equal(node_cost_argmin(P, h, C, pruning=mode), brute)


def test_pruned_d3_equals_brute_force_on_real_tree() -> None:
    from icml25.hier_decoding import synthetic_posteriors
    from icml25.hier_decoding.data import load_tree

    h = load_tree("tieredimagenet")
    P, _, _ = synthetic_posteriors(h, 300, 4.0, 0)
    for m in (WuPalmer(h), Zhao(h), MistakeSeverity(h)):
        assert m.reasonableness in ("strict", "soft")
        brute = node_cost_argmin(P, h, m.cost_matrix, pruning="none")
        np.testing.assert_array_equal(h.indicator_to_node(m.decode(P)), brute)


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_certified_hf_pruning_equals_unpruned_on_larger_trees(beta: float) -> None:
    from icml25.hier_decoding import synthetic_posteriors

    for seed in range(3):
        h = random_tree(80, seed, max_children=4)
        P, _, _ = synthetic_posteriors(h, 100, 3.0 * seed, seed)
        Y = hf_beta_subset(P, h, beta)
        Y_all = hf_beta_subset(P, h, beta, prune=False)
        m = HFBeta(h, beta)
        np.testing.assert_allclose(m.expected_score(P, Y, average=False), m.expected_score(P, Y_all, average=False),
                                   atol=1e-12)


def test_reasonableness_classes() -> None:
    h = random_tree(14, 4, max_children=3)
    assert reasonableness(MistakeSeverity(h).cost_matrix, h) == "strict"
    assert reasonableness(weighted_path_cost(h, 0), h) == "strict"
    assert reasonableness(WuPalmer(h).cost_matrix, h) == "soft"
    assert reasonableness(-MistakeSeverity(h).cost_matrix, h) is None


# ------------------------------------------------------------------------------------------------ hypothesis
@st.composite
def tree_and_probs(draw):
    n = draw(st.integers(3, 12))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    h = random_tree(n, rng)
    alpha = draw(st.sampled_from([0.05, 0.3, 1.0]))
    P = rng.dirichlet(alpha * np.ones(h.n_leaves), size=4)
    return h, P, rng


@settings(max_examples=40, deadline=None)
@given(tree_and_probs())
def test_optimal_beats_every_heuristic_per_sample(case) -> None:
    h, P, _ = case
    heur = {k: f(P, h) for k, f in HEURISTICS.items()}
    for name in METRICS:
        m = get_metric(name, h)
        sign = 1.0 if m.greater_is_better else -1.0
        opt = sign * m.expected_score(P, m.decode(P), average=False)
        for k, Y in heur.items():
            assert (opt >= sign * m.expected_score(P, Y, average=False) - 1e-9).all(), (name, k)


@settings(max_examples=40, deadline=None)
@given(tree_and_probs(), st.sampled_from([0.5, 1.0, 2.0]))
def test_hf_set_is_ancestor_closed(case, beta) -> None:
    h, P, _ = case
    Y = hf_beta_subset(P, h, beta)
    nonroot = np.flatnonzero(h.parent >= 0)
    assert (~Y[:, nonroot] | Y[:, h.parent[nonroot]]).all()
    assert Y[:, h.root].all()


@settings(max_examples=30, deadline=None)
@given(tree_and_probs())
def test_relabelling_leaves_permutes_the_output(case) -> None:
    h, P, rng = case
    perm = rng.permutation(h.n_leaves)  # new leaf order: column j of the new P is old leaf perm[j]
    h2 = Hierarchy({h.names[i]: [h.names[c] for c in h.children[i]] for i in range(h.n_nodes)
                    if len(h.children[i])}, leaf_order=[h.names[j] for j in perm])
    P2 = P[:, perm]
    new_of_old = {h.names[i]: h2.index(h.names[i]) for i in range(h.n_nodes)}
    cols = np.array([new_of_old[h.names[i]] for i in range(h.n_nodes)])
    for name in METRICS:
        Y = get_metric(name, h).decode(P)
        Y2 = get_metric(name, h2).decode(P2)
        m, m2 = get_metric(name, h), get_metric(name, h2)
        np.testing.assert_allclose(m.expected_score(P, Y, average=False), m2.expected_score(P2, Y2, average=False),
                                   atol=1e-12)
        if name in ("hf_1", "hamming", "mistake_severity"):  # generic p: unique optimum
            np.testing.assert_array_equal(Y2[:, cols], Y)


# ------------------------------------------------------------------------------------------------ pitfalls §8
def test_pitfall_a_constants_are_finite_and_keep_parents() -> None:
    """(a) max/min initialised to -inf/+inf: q_max is finite, so internal nodes remain candidates."""
    h = random_tree(14, 11, max_children=3)
    c = pruning_constants(WuPalmer(h).cost_matrix, h, "soft")
    nonroot = h.parent >= 0
    assert np.isfinite(c.M_in[nonroot]).all() and np.isfinite(c.m_in[nonroot]).all()
    assert not np.isnan(c.q_max[nonroot & (h.depth >= 2)]).any()
    # an ambiguous distribution between two siblings: Wu-Palmer prefers their parent (an internal node)
    parent = int(h.parent[0])
    P = np.zeros((1, h.n_leaves))
    sibs = [int(x) for x in h.children[parent] if x < h.n_leaves]
    if len(sibs) >= 2:
        P[0, sibs] = 1.0 / len(sibs)
        assert h.indicator_to_node(WuPalmer(h).decode(P))[0] >= h.n_leaves


def test_pitfall_b_root_children_included_root_can_win() -> None:
    """(b) children of the root are pruned correctly: for a strict cost the root is optimal when nothing
    has p > 1/2."""
    h = Hierarchy.from_paths(["a/x", "a/y", "b/z", "b/w", "c/v"])
    P = np.full((1, 5), 0.2)
    for C in (MistakeSeverity(h).cost_matrix, weighted_path_cost(h, 0)):
        brute = node_cost_argmin(P, h, C, pruning="none")
        assert brute[0] == h.root
        assert node_cost_argmin(P, h, C, pruning="strict")[0] == h.root


def test_pitfall_c_crm_bm_uses_leaf_probabilities() -> None:
    """(c) CRM-BM switches to the CRM leaf when max leaf probability < 0.5 (not max node probability)."""
    h = Hierarchy.from_paths(["a/x", "a/y", "a/u", "b"])
    P = np.array([[0.25, 0.25, 0.2, 0.3]])  # argmax leaf = b (0.3 < 0.5); the CRM leaf is x (risk 1.8 vs 2.1)
    node = h.indicator_to_node(HEURISTICS["H7 CRM-BM"](P, h))[0]
    assert h.names[node].startswith("a/")
    P = np.array([[0.1, 0.1, 0.2, 0.6]])
    assert h.names[h.indicator_to_node(HEURISTICS["H7 CRM-BM"](P, h))[0]] == "b"


def test_pitfall_d_expected_information_is_p_times_ic() -> None:
    """(d) H4 is argmax p(n) IC(n) (the official config pointed to another class)."""
    h = random_tree(12, 5)
    P = np.random.default_rng(0).dirichlet(np.ones(h.n_leaves), size=30)
    got = h.indicator_to_node(HEURISTICS["H4 expected information"](P, h))
    val = h.node_probs(P) * h.ic
    np.testing.assert_allclose(val[np.arange(30), got], val.max(axis=1))


def test_pitfall_ties_at_one_half_keep_parent() -> None:
    h = Hierarchy.from_paths(["a/x", "a/y", "b"])
    P = np.array([[0.25, 0.25, 0.5]])  # p(a) = p(b) = 0.5 exactly
    assert h.indicator_to_node(MistakeSeverity(h).decode(P))[0] == h.root
    assert h.indicator_to_node(get_metric("hamming", h).decode(P))[0] == h.root


def test_root_convention_flag() -> None:
    h = Hierarchy.from_paths(["a/x", "a/y", "b"])
    y = np.array([2])
    wrong = h.indicator(np.array([0]))
    assert HFBeta(h, 1.0).score(y, wrong) == pytest.approx(2 * 1 / (3 + 2))  # root shared
    assert HFBeta(h, 1.0, include_root=False).score(y, wrong) == 0.0


def test_official_hf_constant_is_not_a_valid_pruning() -> None:
    """The official q_β = 1/(1+β²(D(n)+1)) would drop an optimal node; our certified pruning keeps it."""
    h = Hierarchy.from_paths(["a", "b/c/d", "b/c/e"])
    P = np.array([[0.6, 0.2, 0.2]])
    beta = 0.5
    m = HFBeta(h, beta)
    best_set, best = exhaustive_decode(P, m, "subsets")
    a = h.index("a")
    assert best_set[0, a] and h.node_probs(P)[0, a] < hf_candidate_threshold(h, beta)[a]
    assert hf_beta_subset(P, h, beta)[0, a]
    assert m.expected_score(P, m.decode(P), average=False)[0] == pytest.approx(best[0])
