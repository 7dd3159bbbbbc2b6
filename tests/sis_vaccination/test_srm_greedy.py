"""The greedy and the closed-walk baseline against brute force: greedy's first pick is the single vertex whose
deletion minimises ρ, and the walk score equals tr(A^ℓ) − tr(A_{−i}^ℓ) computed with matrix powers."""

from __future__ import annotations

import networkx as nx
import numpy as np

from icml25.sis_vaccination import spectral_radius_after_removal, srm_greedy, walk_strategy


def test_greedy_first_pick_is_the_best_single_deletion() -> None:
    g = nx.gnp_random_graph(16, 0.3, seed=2)
    rhos = [spectral_radius_after_removal(g, [v]) for v in g]
    assert spectral_radius_after_removal(g, srm_greedy(g, 1)) == min(rhos)


def test_greedy_is_a_greedy_chain() -> None:
    g = nx.barabasi_albert_graph(18, 2, seed=5)
    picks = srm_greedy(g, 3)
    for j in range(3):  # each pick is the best next deletion given the earlier ones
        best = min(spectral_radius_after_removal(g, picks[:j] + [v]) for v in g if v not in picks[:j])
        assert abs(spectral_radius_after_removal(g, picks[: j + 1]) - best) < 1e-9


def test_walk_scores_equal_matrix_power_traces() -> None:
    g = nx.gnp_random_graph(10, 0.35, seed=1)
    a = nx.to_numpy_array(g, nodelist=range(10), weight=None)
    a /= max(abs(np.linalg.eigvalsh(a)))
    ell = 8
    total = np.trace(np.linalg.matrix_power(a, ell))
    scores = [total - np.trace(np.linalg.matrix_power(np.delete(np.delete(a, i, 0), i, 1), ell)) for i in range(10)]
    expected = list(np.argsort(-np.array(scores), kind="stable")[:3])
    assert walk_strategy(g, 3, length=ell) == expected
