"""Spectral radii against closed forms and networkx's adjacency spectrum of the induced subgraph."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from icml25.sis_vaccination import spectral_radius, spectral_radius_after_removal


@pytest.mark.parametrize("graph,closed_form", [
    (nx.complete_graph(7), 6.0),  # K_n: n − 1
    (nx.star_graph(8), math.sqrt(8)),  # K_{1,m}: √m
    (nx.path_graph(9), 2 * math.cos(math.pi / 10)),  # P_n: 2 cos(π/(n+1))
    (nx.cycle_graph(11), 2.0),  # C_n: 2
    (nx.complete_bipartite_graph(3, 5), math.sqrt(15)),  # K_{a,b}: √(ab)
    (nx.empty_graph(4), 0.0),
])
def test_closed_forms(graph: nx.Graph, closed_form: float) -> None:
    assert spectral_radius(graph) == pytest.approx(closed_form, abs=1e-9)


def test_after_removal_equals_the_induced_subgraph() -> None:
    g = nx.gnp_random_graph(25, 0.2, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(5):
        removed = list(rng.choice(25, size=4, replace=False))
        sub = g.subgraph(set(g) - set(removed))
        peer = max(abs(nx.adjacency_spectrum(sub, weight=None)))
        assert spectral_radius_after_removal(g, removed) == pytest.approx(float(peer), abs=1e-9)


def test_removal_never_increases_rho_and_the_hub_of_a_star_empties_it() -> None:
    g = nx.barabasi_albert_graph(30, 2, seed=1)
    removed: list[int] = []
    last = spectral_radius(g)
    for v in (0, 5, 9, 17):
        removed.append(v)
        now = spectral_radius_after_removal(g, removed)
        assert now <= last + 1e-12
        last = now
    assert spectral_radius_after_removal(nx.star_graph(6), [0]) == 0.0
