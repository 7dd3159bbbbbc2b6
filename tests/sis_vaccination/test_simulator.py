"""SIS simulator against closed forms: one-step transition probabilities, quasi-stationary prevalence, the
extinction time of independent recoveries."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from icml25.sis_vaccination import SISModel


def _exact_transition_matrix(g: nx.Graph, p_inf: float, p_rec: float) -> np.ndarray:
    """P[y, y'] of the synchronous SIS chain on all 2^n states (state index = bitmask of infected)."""
    n = g.number_of_nodes()
    a = nx.to_numpy_array(g, nodelist=range(n), weight=None)
    states = np.array(list(itertools.product([0, 1], repeat=n)))[:, ::-1]  # row s: bit i = vertex i
    m = states @ a
    p_one = np.where(states == 1, 1 - p_rec, 1 - (1 - p_inf) ** m)  # P(next_i = 1 | state)
    P = np.ones((2 ** n, 2 ** n))
    for i in range(n):
        nxt = states[:, i][None, :]
        P *= np.where(nxt == 1, p_one[:, i][:, None], 1 - p_one[:, i][:, None])
    return P, states


def test_one_step_probabilities_match_closed_form() -> None:
    g = nx.path_graph(4)
    model = SISModel(g, 0.3, 0.2, seed=0)
    state = np.array([True, False, True, False])
    reps = 40_000
    nxt = model._advance(np.repeat(state[:, None], reps, axis=1))
    # vertex 1 has two infected neighbours, vertex 3 one; infected vertices stay with 1 − p_rec
    expected = np.array([0.8, 1 - 0.7 ** 2, 0.8, 0.3])
    assert np.allclose(nxt.mean(axis=1), expected, atol=0.01)


def test_star_prevalence_matches_quasi_stationary_distribution() -> None:
    """Long-run prevalence on K_{1,5} equals the prevalence under the exact quasi-stationary distribution."""
    g = nx.star_graph(5)
    P, states = _exact_transition_matrix(g, 0.5, 0.1)
    Q = P[1:, 1:]  # transient (non-extinct) states
    vals, vecs = np.linalg.eig(Q.T)
    qsd = np.abs(np.real(vecs[:, np.argmax(np.real(vals))]))
    qsd /= qsd.sum()
    exact = float(qsd @ states[1:].mean(axis=1))
    runs = SISModel(g, 0.5, 0.1, seed=1).run_trajectories(3000, reps=40)
    alive = np.concatenate([y[200:][y[200:].any(axis=1)] for y in runs])  # condition on survival
    sim = float(alive.mean())
    assert abs(sim - exact) < 0.01, (sim, exact)


def test_transition_matrix_rows_sum_to_one() -> None:
    P, _ = _exact_transition_matrix(nx.cycle_graph(4), 0.3, 0.4)
    assert np.allclose(P.sum(axis=1), 1.0)


def test_extinction_time_of_vaccinated_hub_matches_markov_chain() -> None:
    """Hub vaccinated: exact E[τ] from the (hub infected?, infected leaves) chain vs the simulator."""
    from scipy.stats import binom

    leaves, p_inf, p_rec = 9, 0.5, 0.1
    idx = {(h, j): i for i, (h, j) in enumerate((h, j) for h in (0, 1) for j in range(leaves + 1))}
    Q = np.zeros((len(idx), len(idx)))
    for (h, j), a in idx.items():
        for stay in range(j + 1):
            for new in range(leaves - j + 1):
                p = binom.pmf(stay, j, 1 - p_rec) * binom.pmf(new, leaves - j, p_inf * h)
                for h2, ph in ((0, p_rec if h else 1.0), (1, (1 - p_rec) if h else 0.0)):
                    Q[a, idx[(h2, stay + new)]] += p * ph
    trans = [i for key, i in idx.items() if key != (0, 0)]
    Qt = Q[np.ix_(trans, trans)]
    times = np.linalg.solve(np.eye(len(trans)) - Qt, np.ones(len(trans)))
    expected = float(times[trans.index(idx[(1, leaves)])])
    ext = SISModel(nx.star_graph(leaves), p_inf, p_rec, seed=3).vaccinate([0]).simulate_many(1500, 2000)
    assert ext.fraction_censored == 0.0
    se = ext.times.std() / np.sqrt(1500)
    assert abs(ext.capped_mean - expected) < 4 * se, (ext.capped_mean, expected)


def test_vaccinated_vertex_is_never_infected_and_same_seed_same_path() -> None:
    g = nx.complete_graph(6)
    a = SISModel(g, 0.6, 0.2, seed=5).vaccinate([2])
    Y = a.run(300)
    first_healthy = int(np.argmin(Y[:, 2]))
    assert not Y[first_healthy:, 2].any(), "a vaccinated vertex that recovered was infected again"
    b = SISModel(g, 0.6, 0.2, seed=5).vaccinate([2])
    assert np.array_equal(Y, b.run(300))


def test_reseeded_trajectories_only_hold_sis_transitions() -> None:
    g = nx.path_graph(3)
    model = SISModel(g, 0.2, 0.5, seed=0).reset(k_random=1)
    segs = model.run_trajectories(500, reps=4, reseed=True)
    assert sum(s.shape[0] - 1 for s in segs) == 2000
    for s in segs:
        assert not (~s[:-1].any(axis=1)).any(), "no transition may start from the all-healthy state"


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5])
def test_bad_probabilities_raise(bad: float) -> None:
    with pytest.raises(ValueError, match="p_inf"):
        SISModel(nx.path_graph(3), bad, 0.3)
    with pytest.raises(ValueError, match="p_rec"):
        SISModel(nx.path_graph(3), 0.3, bad)


def test_bad_graphs_raise() -> None:
    g = nx.path_graph(3)
    g.add_edge(1, 1)
    with pytest.raises(ValueError, match="self-loops"):
        SISModel(g, 0.3, 0.3)
    with pytest.raises(ValueError, match="undirected"):
        SISModel(nx.DiGraph([(0, 1)]), 0.3, 0.3)
    with pytest.raises(TypeError, match="networkx"):
        SISModel(np.eye(3), 0.3, 0.3)
