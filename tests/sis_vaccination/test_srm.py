"""Spectral-radius minimisation: DP and tree algorithm vs brute force, greedy sanity, nice decompositions."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from icml25.sis_vaccination import (
    degree_strategy,
    nice_tree_decomposition,
    random_partial_k_tree,
    random_strategy,
    random_tree,
    spectral_radius,
    spectral_radius_after_removal,
    srm_brute_force,
    srm_exact_treewidth,
    srm_greedy,
    srm_greedy_naive,
    srm_tree,
    walk_strategy,
)


def _brute(g: nx.Graph, k: int) -> float:
    """Independent brute force through networkx subgraphs and numpy eigvalsh over all sets of size ≤ k."""
    best = np.inf
    for size in range(k + 1):
        for r in itertools.combinations(g.nodes, size):
            h = g.subgraph(set(g) - set(r))
            a = nx.to_numpy_array(h, weight=None)
            best = min(best, float(np.linalg.eigvalsh(a).max()) if len(h) else 0.0)
    return max(best, 0.0)


@pytest.mark.parametrize("instance", range(6))
def test_dp_equals_brute_force_on_partial_2_trees(instance: int) -> None:
    g = random_partial_k_tree(12, 2, keep=0.8, seed=instance)
    for k in (1, 2, 3):
        r = srm_exact_treewidth(g, k, eps=0.01)
        assert len(r) <= k
        opt = srm_brute_force(g, k)[1] if k == 3 else _brute(g, k)
        assert opt - 1e-9 <= spectral_radius_after_removal(g, r) <= opt + 0.01


def test_brute_force_helper_agrees_with_independent_enumeration() -> None:
    g = random_partial_k_tree(9, 2, seed=7)
    for k in (1, 2):
        assert srm_brute_force(g, k)[1] == pytest.approx(_brute(g, k), abs=1e-9)


@pytest.mark.parametrize("instance", range(8))
def test_tree_algorithm_equals_brute_force(instance: int) -> None:
    t = random_tree(14, seed=100 + instance)
    for k in (1, 2):
        r = srm_tree(t, k)
        assert len(r) <= k
        assert spectral_radius_after_removal(t, r) <= srm_brute_force(t, k)[1] + 1e-4


def test_tree_and_dp_handle_optimum_below_one() -> None:
    g = nx.Graph([(0, 1), (2, 3), (4, 5), (1, 2)])  # path on 6 vertices; k=2 leaves a matching (ρ = 1) or less
    for solver in (srm_tree, srm_exact_treewidth):
        r = solver(g, 3)
        assert spectral_radius_after_removal(g, r) <= srm_brute_force(g, 3)[1] + 0.01


def test_greedy_never_below_optimum_and_component_reuse_matches_naive() -> None:
    ratios = []
    for s in range(5):
        g = random_partial_k_tree(12, 2, seed=50 + s)
        for k in (1, 2, 3):
            fast, naive = srm_greedy(g, k), srm_greedy_naive(g, k)
            assert fast == naive
            opt = srm_brute_force(g, k)[1]
            rho = spectral_radius_after_removal(g, fast)
            assert rho >= opt - 1e-9
            ratios.append(rho / opt)
    assert np.mean(ratios) <= 1.25  # near-optimal on small instances (the quick claim checks spec §6 item 5)


def test_greedy_on_star_and_disconnected_graph() -> None:
    assert srm_greedy(nx.star_graph(6), 1) == [0]
    g = nx.disjoint_union(nx.star_graph(5), nx.path_graph(3))
    assert srm_greedy(g, 1) == [0]
    assert sorted(srm_greedy(g, 2)) == sorted(srm_greedy_naive(g, 2))


def test_nice_tree_decomposition_is_valid() -> None:
    for g in (random_partial_k_tree(15, 3, seed=1), nx.Graph(nx.karate_club_graph().edges), nx.empty_graph(4),
              nx.disjoint_union(nx.cycle_graph(5), nx.star_graph(3))):
        ntd = nice_tree_decomposition(g)
        ntd.validate(g)
        assert ntd.nodes[ntd.root].bag == frozenset()


def test_baselines() -> None:
    g = nx.star_graph(5)
    assert degree_strategy(g, 1) == [0]
    assert walk_strategy(g, 1) == [0]
    r = random_strategy(g, 3, seed=0)
    assert len(set(r)) == 3 and r == random_strategy(g, 3, seed=0)


def test_spectral_radius_matches_peer_and_sparse_path() -> None:
    g = nx.Graph(nx.karate_club_graph().edges)  # without the edge weights
    assert spectral_radius(g) == pytest.approx(max(nx.adjacency_spectrum(g, weight=None).real), abs=1e-9)
    big = nx.random_regular_graph(4, 600, seed=0)
    assert spectral_radius(big) == pytest.approx(4.0, abs=1e-6)


def test_bad_budget_and_non_forest_raise() -> None:
    g = nx.path_graph(4)
    with pytest.raises(ValueError, match=r"k must be (<=|>=)"):
        srm_greedy(g, 5)
    with pytest.raises(ValueError, match=r"k must be (<=|>=)"):
        srm_exact_treewidth(g, -1)
    with pytest.raises(ValueError, match="forest"):
        srm_tree(nx.cycle_graph(4), 1)
    with pytest.raises(TypeError, match="k must be an integer"):
        degree_strategy(g, 1.5)


def _graph_from_bits(n: int, bits: list[bool]) -> nx.Graph:
    g = nx.empty_graph(n)
    g.add_edges_from(e for e, b in zip(itertools.combinations(range(n), 2), bits) if b)
    return g


try:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=25, deadline=None)
    @given(n=st.integers(2, 8), k=st.integers(0, 2), bits=st.lists(st.booleans(), min_size=28, max_size=28))
    def test_dp_and_greedy_bracket_the_optimum_on_arbitrary_small_graphs(n: int, k: int, bits: list[bool]) -> None:
        g = _graph_from_bits(n, bits)
        k = min(k, n)
        opt = _brute(g, k)
        dp = spectral_radius_after_removal(g, srm_exact_treewidth(g, k, eps=0.01))
        gr = spectral_radius_after_removal(g, srm_greedy(g, k))
        assert opt - 1e-9 <= dp <= opt + 0.01
        assert gr >= opt - 1e-9
        if nx.is_forest(g):
            assert spectral_radius_after_removal(g, srm_tree(g, k)) <= opt + 1e-4
except ImportError:  # pragma: no cover - hypothesis is a dev dependency
    pass
