"""Bad input: weighted graphs, node order, budgets, the reproduction's Config; the exact star chain."""

from __future__ import annotations

import itertools
import warnings

import networkx as nx
import numpy as np
import pytest

from icml25.sis_vaccination import SISModel, spectral_radius, srm_greedy, vug_experiment
from icml25.sis_vaccination._star_chain import (
    star_hub_vaccinated_extinction_time,
    star_quasi_stationary_prevalence,
)


def test_weighted_graph_warns_that_weights_are_ignored() -> None:
    g = nx.path_graph(4)
    g[1][2]["weight"] = 3.0
    with pytest.warns(UserWarning, match=r"edge weights .*weight=3\.0.*ignored"):
        SISModel(g, 0.3, 0.3)
    with pytest.warns(UserWarning, match="edge weights"):
        srm_greedy(g, 1)
    with pytest.warns(UserWarning, match="edge weights"):
        assert spectral_radius(g) == pytest.approx(spectral_radius(nx.path_graph(4)))
    unit = nx.path_graph(4)
    nx.set_edge_attributes(unit, 1, "weight")  # weight 1 everywhere is a simple graph: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SISModel(unit, 0.3, 0.3)


def test_vug_learns_graphs_whose_vertices_are_not_inserted_in_order() -> None:
    """The learned vertex j is state column j: a graph on 0..n−1 inserted out of order must still score F1 = 1
    on a dense trajectory (before, its columns followed insertion order and the learned edges were relabelled)."""
    base = nx.cycle_graph(20)
    shuffled = nx.Graph()
    shuffled.add_nodes_from(np.random.default_rng(0).permutation(20).tolist())
    shuffled.add_edges_from(base.edges)
    rows = vug_experiment(shuffled, 0.5, 0.3, 4000, [1], reps=2, cap=20, seed=0, strategies=("degree",),
                          true_graph_strategies=())
    assert rows[0]["f1"] >= 0.9


def test_vug_accepts_own_strategies_and_rejects_bad_ones() -> None:
    g = nx.cycle_graph(6)
    rows = vug_experiment(g, 0.5, 0.3, 500, [1], reps=2, cap=20, seed=0,
                          strategies={"first": lambda h, k, s: [0]}, true_graph_strategies={})
    assert [r["removed"] for r in rows] == [[0]]
    with pytest.raises(ValueError, match="strategies"):
        vug_experiment(g, 0.5, 0.3, 100, [1], strategies=("nope",))
    with pytest.raises(TypeError, match="strategies"):
        vug_experiment(g, 0.5, 0.3, 100, [1], strategies="greedy")
    with pytest.raises(ValueError, match="budgets"):
        vug_experiment(g, 0.5, 0.3, 100, [7])


@pytest.mark.parametrize("bad", [-1, 2.0, "2", None])
def test_budget_must_be_an_integer_in_range(bad: object) -> None:
    with pytest.raises((ValueError, TypeError), match=r"\bk\b"):
        srm_greedy(nx.path_graph(4), bad)  # type: ignore[arg-type]


def test_config_validates_its_fields() -> None:
    from icml25.sis_vaccination.reproduce import Config

    Config.quick()
    Config.full()
    for kwargs, field in [({"star_reps": 0}, "star_reps"), ({"star_burn_in": 5000}, "star_burn_in"),
                          ({"curve_T": ()}, "curve_T"), ({"vac_budgets": (2, 50)}, "vac_budgets"),
                          ({"learn_seeds": 2.5}, "learn_seeds"), ({"vac_cap": -1}, "vac_cap"),
                          ({"nu_transitions": 10}, "nu_transitions")]:
        with pytest.raises((ValueError, TypeError), match=field):
            Config(**kwargs)


def _full_chain(g: nx.Graph, p_inf: float, p_rec: float) -> tuple[np.ndarray, np.ndarray]:
    n = g.number_of_nodes()
    a = nx.to_numpy_array(g, nodelist=range(n), weight=None)
    states = np.array(list(itertools.product([0, 1], repeat=n)))[:, ::-1]
    p_one = np.where(states == 1, 1 - p_rec, 1 - (1 - p_inf) ** (states @ a))
    P = np.ones((2 ** n, 2 ** n))
    for i in range(n):
        nxt = states[:, i][None, :]
        P *= np.where(nxt == 1, p_one[:, i][:, None], 1 - p_one[:, i][:, None])
    return P, states


def test_lumped_star_chain_equals_the_full_chain() -> None:
    """The exact references of the reproduction's check 1, against the chain on all 2^n states."""
    leaves, p_inf, p_rec = 5, 0.5, 0.1
    P, states = _full_chain(nx.star_graph(leaves), p_inf, p_rec)
    vals, vecs = np.linalg.eig(P[1:, 1:].T)
    qsd = np.abs(np.real(vecs[:, np.argmax(np.real(vals))]))
    qsd /= qsd.sum()
    assert star_quasi_stationary_prevalence(leaves, p_inf, p_rec) == pytest.approx(qsd @ states[1:].mean(axis=1))
    # hub vaccinated: the hub never gets infected again; E[τ] from all-infected on the full chain
    P_vac, _ = _full_chain(nx.star_graph(leaves), p_inf, p_rec)
    hub_on = states[:, 0] == 1
    P_vac = P_vac.copy()
    # zero the probability of infecting a healthy hub, moving it to the same state with the hub healthy
    for s in np.flatnonzero(~hub_on):
        for t in np.flatnonzero(hub_on):
            P_vac[s, t - 1] += P_vac[s, t]  # state index t−1 = same leaves, hub healthy (bit 0 cleared)
            P_vac[s, t] = 0.0
    alive = np.arange(1, 2 ** (leaves + 1))
    times = np.linalg.solve(np.eye(alive.size) - P_vac[np.ix_(alive, alive)], np.ones(alive.size))
    assert star_hub_vaccinated_extinction_time(leaves, p_inf, p_rec) == pytest.approx(times[-1])
