"""The MLE baseline against its formula computed by hand, transition by transition (an independent loop)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from icml25.sis_vaccination import MLELearner, SISModel


def _edge_probability_by_loop(Y: np.ndarray) -> np.ndarray:
    """P(i→j) = 1 − Π_t (1 − Y_i(t)/I(t)) over the steps t where j goes from healthy to infected."""
    n = Y.shape[1]
    prod = np.ones((n, n))
    for t in range(len(Y) - 1):
        infected = Y[t].sum()
        for j in range(n):
            if not Y[t, j] and Y[t + 1, j]:
                for i in range(n):
                    if Y[t, i]:
                        prod[i, j] *= 1.0 - 1.0 / infected
    p = 1.0 - prod
    np.fill_diagonal(p, 0.0)
    return p


def test_edge_probability_equals_the_formula() -> None:
    g = nx.cycle_graph(6)
    Y = SISModel(g, 0.4, 0.3, seed=0).run_trajectories(300, reseed=False)[0]
    est = MLELearner(0.4, 0.3).fit(Y)
    np.testing.assert_allclose(est.edge_probability_, _edge_probability_by_loop(Y.astype(bool)), atol=1e-12)
    adj = np.maximum(est.edge_probability_, est.edge_probability_.T) > 0.5
    assert np.array_equal(est.adjacency_, adj)
    assert set(map(frozenset, est.graph_.edges)) == {frozenset((int(a), int(b))) for a, b in zip(*np.nonzero(adj))}


def test_a_lone_infector_is_certain() -> None:
    """When i is the only infected vertex at j's infection, the posterior that i infected j is 1."""
    Y = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=bool)
    p = MLELearner(0.3, 0.3).fit(Y).edge_probability_
    assert p[0, 1] == pytest.approx(1.0) and p[1, 0] == 0.0 and p[:, 2].sum() == 0.0
