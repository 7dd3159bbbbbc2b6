"""Combination matrices against their definitions computed pair by pair, and the stability bound's closed form."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from icml25.manifold_diffusion import metropolis_weights, paper_combination_matrix, uniform_weights
from icml25.manifold_diffusion.combination import check_combination_matrix, combine_step_bound


def test_metropolis_equals_the_pairwise_rule() -> None:
    g = nx.barabasi_albert_graph(12, 2, seed=0)
    a = metropolis_weights(g)
    for l in g:
        for k in g:
            if l != k:
                expected = 1.0 / max(g.degree[k] + 1, g.degree[l] + 1) if g.has_edge(l, k) else 0.0
                assert a[l, k] == pytest.approx(expected)
    assert np.allclose(a, a.T) and np.allclose(a.sum(0), 1) and np.allclose(a.sum(1), 1) and a.min() >= 0


def test_uniform_rule_averages_each_closed_neighbourhood() -> None:
    g = nx.path_graph(4)
    a = uniform_weights(g)
    assert np.allclose(a[:, 0], [0.5, 0.5, 0, 0]) and np.allclose(a[:, 1], [1 / 3, 1 / 3, 1 / 3, 0])
    assert np.allclose(a.sum(0), 1) and not np.allclose(a, a.T)


def test_paper_matrices_follow_their_rules_on_their_graphs() -> None:
    """The Metropolis matrix (Fig. 2-6, 37 edges) and the uniform-rule matrix (Fig. 7, another network) are the
    rules of this module applied to the graphs they are supported on."""
    for rule, weights in (("metropolis", metropolis_weights), ("uniform", uniform_weights)):
        a = paper_combination_matrix(rule)
        adj = ((a > 0) & ~np.eye(20, dtype=bool)).astype(float)
        assert a.shape == (20, 20) and nx.is_connected(nx.from_numpy_array(adj))
        assert np.allclose(weights(adj), a, atol=1e-6)
        check_combination_matrix(a, adj)
    assert ((paper_combination_matrix("metropolis") > 0) & ~np.eye(20, dtype=bool)).sum() == 2 * 37


def test_combine_step_bound_closed_form() -> None:
    a = paper_combination_matrix("metropolis")
    lam = np.linalg.eigvalsh(a)
    assert combine_step_bound(a) == pytest.approx(2.0 / (1.0 - lam.min()))
    assert 1.6 < combine_step_bound(a) < 1.8  # spec §8: α = 1.6 is over-relaxed but stable (λ_min ≈ −0.15)
    assert combine_step_bound(np.eye(3)) == float("inf")  # no disagreement mode, every step is stable
