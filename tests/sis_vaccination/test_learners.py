"""SISLearn and the MLE baseline: the exact ν identity, graph recovery on small instances, streaming, bad input."""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pytest

from icml25.sis_vaccination import LearningWarning, MLELearner, SISLearn, SISModel, edge_f1


def _tiny_data(transitions: int = 60_000, seed: int = 0):
    g = nx.path_graph(5)
    g.add_edge(2, 5)
    model = SISModel(g, 0.4, 0.3, seed=seed).reset(k_random=1)
    return g, model.run_trajectories(transitions // 50, reps=50, reseed=True)


def test_exact_nu_identity_and_recovery() -> None:
    g, Y = _tiny_data()
    est = SISLearn(0.4, 3, pruning="exact", superset="all").fit(Y)
    true = nx.to_numpy_array(g, nodelist=range(6), weight=None) > 0
    done = ~np.isnan(est.nu_)
    assert est.nu_[done & true].min() >= est.nu_bound - 0.04
    assert np.abs(est.nu_[done & ~true]).max() <= 0.04
    assert np.array_equal(est.adjacency_, true)
    assert nx.utils.graphs_equal(est.graph_, nx.Graph(g)) or sorted(est.graph_.edges) == sorted(g.edges)


def test_exact_nu_matches_brute_force_formula() -> None:
    """ν̂ from the vectorised cell table equals a direct loop over the conditioning configurations."""
    from icml25.sis_vaccination.sislearn import _exact_nu

    rng = np.random.default_rng(0)
    prev = rng.random((3000, 5)) < 0.5
    nxt = rng.random((3000, 5)) < 0.3 + 0.4 * prev[:, [1]]
    superset = np.array([1, 2, 4])
    got = _exact_nu(prev, nxt, 0, superset)
    rows = ~prev[:, 0]
    for j, i in enumerate(superset):
        others = [s for s in superset if s != i]
        total = 0.0
        for y in range(2 ** len(others)):
            cfg = np.all([prev[:, o] == bool((y >> b) & 1) for b, o in enumerate(others)], axis=0) & rows
            c1, c0 = cfg & prev[:, i], cfg & ~prev[:, i]
            if c1.sum() and c0.sum():
                total += cfg.sum() / rows.sum() * (nxt[c1, 0].mean() - nxt[c0, 0].mean())
        assert got[j] == pytest.approx(total, abs=1e-12)
    assert got[0] > 0.3 and abs(got[1]) < 0.06 and abs(got[2]) < 0.06


def test_heuristic_learns_flu_graph() -> None:
    from icml25.sis_vaccination import flu_contact_graph

    g = flu_contact_graph()
    Y = SISModel(g, 0.3, 0.3, seed=1).run(2000)
    f1 = edge_f1(SISLearn(0.3, 9).fit(Y).graph_, g)["f1"]
    assert f1 >= 0.85
    assert edge_f1(nx.empty_graph(40), g)["f1"] == 0.0


def test_partial_fit_on_chunks_equals_fit() -> None:
    g, Y = _tiny_data(20_000, seed=2)
    whole = SISLearn(0.4, 3, pruning="exact").fit(Y)
    stream = SISLearn(0.4, 3, pruning="exact")
    half = len(Y) // 2
    stream.partial_fit(Y[:half]).partial_fit(Y[half:])
    assert np.array_equal(whole.adjacency_, stream.adjacency_)
    assert np.allclose(whole.mu_, stream.mu_)
    assert np.allclose(np.nan_to_num(whole.nu_), np.nan_to_num(stream.nu_))
    assert stream.n_transitions_ == whole.n_transitions_


def test_exact_falls_back_with_warning_when_superset_is_large() -> None:
    g = nx.complete_graph(8)
    Y = SISModel(g, 0.3, 0.3, seed=0).run(500)
    with pytest.warns(LearningWarning, match="fell back"):
        SISLearn(0.3, 7, pruning="exact", max_exact_superset=3, superset="all").fit(Y)


def test_dead_epidemic_warns() -> None:
    Y = SISModel(nx.path_graph(4), 0.1, 0.9, seed=0).run(200)
    with pytest.warns(LearningWarning, match="persisting epidemic"):
        SISLearn(0.1, 2, eps_mu=0.05).fit(Y)


def test_mle_baseline_beats_nothing_but_is_worse_than_sislearn() -> None:
    from icml25.sis_vaccination import flu_contact_graph

    g = flu_contact_graph()
    Y = SISModel(g, 0.3, 0.3, seed=4).run(1500)
    mle = MLELearner(0.3, 0.3).fit(Y)
    assert mle.edge_probability_.shape == (40, 40)
    f_mle = edge_f1(mle.graph_, g)["f1"]
    f_sis = edge_f1(SISLearn(0.3, 9).fit(Y).graph_, g)["f1"]
    assert f_sis > f_mle
    assert edge_f1(mle.graph_, g)["recall"] > 0.9  # it over-connects rather than missing edges


def test_bad_input_raises() -> None:
    with pytest.raises(ValueError, match="binary"):
        SISLearn(0.3, 2).fit(np.array([[0, 2], [1, 0]]))
    with pytest.raises(ValueError, match="at least 2 time steps"):
        SISLearn(0.3, 2).fit(np.zeros((1, 3)))
    est = SISLearn(0.3, 2).fit(np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]]))
    with pytest.raises(ValueError, match="3 columns"):
        est.partial_fit(np.zeros((4, 5)))
    with pytest.raises(ValueError, match="p_inf"):
        SISLearn(1.2, 2)
    with pytest.raises(ValueError, match="eps_nu"):
        SISLearn(0.3, 3, eps_nu=0.2)
    with pytest.raises(ValueError, match="pruning"):
        SISLearn(0.3, 3, pruning="magic")
    with pytest.raises(ValueError, match="p_rec"):
        MLELearner(0.3, 0.0)


def test_get_params_roundtrip() -> None:
    est = SISLearn(0.3, 4, eps_mu=0.02)
    params = est.get_params()
    assert params["eps_mu"] == 0.02 and params["max_degree"] == 4
    assert SISLearn(**params).get_params() == params
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.set_params(z=1.5)
    assert est.z == 1.5


@pytest.mark.parametrize("pruning", ["heuristic", "exact"])
def test_partial_fit_on_chunks_of_one_series_equals_fit(pruning: str) -> None:
    from icml25.sis_vaccination import flu_contact_graph

    g = flu_contact_graph()
    Y = SISModel(g, 0.3, 0.3, seed=6).run(1200)
    stream = SISLearn(0.3, 9, pruning=pruning, max_exact_superset=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LearningWarning)
        whole = SISLearn(0.3, 9, pruning=pruning, max_exact_superset=6).fit(Y)
        for a, b in [(0, 3), (3, 400), (400, 401), (401, 1201)]:  # includes a one-row chunk
            stream.partial_fit(Y[a:b])
    assert stream.n_transitions_ == whole.n_transitions_ == 1200
    assert np.array_equal(whole.adjacency_, stream.adjacency_)
    assert np.allclose(whole.mu_, stream.mu_)
