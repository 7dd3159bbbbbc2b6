"""Shipped outbreak graphs, the seeded augmentation, random graph generators and the VUG experiment."""

from __future__ import annotations

import networkx as nx
import pytest
from networkx.algorithms.approximation import treewidth_min_fill_in

from icml25.sis_vaccination import (
    augment_to_spectral_radius,
    flu_contact_graph,
    load_outbreak_tree,
    outbreak_tree_names,
    random_partial_k_tree,
    random_tree,
    spectral_radius,
    vug_experiment,
)


def test_flu_tree_and_augmentation_match_spec_calibration() -> None:
    tree = load_outbreak_tree()
    assert tree.number_of_nodes() == 40 and nx.is_tree(tree)
    assert spectral_radius(tree) == pytest.approx(3.264, abs=1e-3)
    assert tree.nodes[0]["label"] == "P1" and tree.nodes[0]["location"] == "Building 1"
    g = flu_contact_graph()
    assert g.number_of_edges() == 54 and max(d for _, d in g.degree) == 9
    assert spectral_radius(g) == pytest.approx(4.07, abs=0.01)
    assert set(tree.edges) <= {tuple(sorted(e)) for e in g.edges} | set(g.edges)


def test_outbreak_tree_collection() -> None:
    names = outbreak_tree_names()
    assert len(names) == 382
    big = max(names, key=lambda n: load_outbreak_tree(n).number_of_nodes())
    assert load_outbreak_tree(big).number_of_nodes() == 286
    with pytest.raises(ValueError, match="OutbreakTrees id"):
        load_outbreak_tree("no.such.tree")


def test_augmentation_restricted_to_attribute() -> None:
    g = augment_to_spectral_radius(load_outbreak_tree(), 3.6, seed=1, same_attribute="location")
    tree = load_outbreak_tree()
    added = [e for e in g.edges if not tree.has_edge(*e)]
    assert added and all(g.nodes[a]["location"] == g.nodes[b]["location"] for a, b in added)
    assert spectral_radius(g) >= 3.6


def test_generators() -> None:
    for s in range(5):
        t = random_tree(20, seed=s)
        assert nx.is_tree(t) and t.number_of_nodes() == 20
        p = random_partial_k_tree(20, 3, keep=0.7, seed=s)
        assert p.number_of_nodes() == 20 and treewidth_min_fill_in(p)[0] <= 3
    assert nx.utils.graphs_equal(random_tree(15, seed=3), random_tree(15, seed=3))


def test_vug_experiment_greedy_beats_random() -> None:
    g = flu_contact_graph()
    rows = vug_experiment(g, 0.2, 0.3, T_learn=2000, budgets=[6], strategies=("greedy", "random"), reps=10,
                          cap=1500, seed=0)
    by = {(r["strategy"], r["graph"]): r for r in rows}
    assert set(by) == {("greedy", "learned"), ("random", "learned"), ("greedy", "true")}
    assert by[("greedy", "learned")]["mean_time"] < 0.5 * by[("random", "learned")]["mean_time"]
    assert by[("greedy", "learned")]["rho_true"] < by[("random", "learned")]["rho_true"]
    assert all(len(r["removed"]) == 6 and 0.0 <= r["f1"] <= 1.0 for r in rows)


def test_vug_bad_input() -> None:
    with pytest.raises(ValueError, match="vertices 0..n-1"):
        vug_experiment(nx.relabel_nodes(nx.path_graph(3), {0: "a"}), 0.2, 0.3, 10, [1])
    with pytest.raises(ValueError, match="strategies"):
        vug_experiment(nx.path_graph(3), 0.2, 0.3, 10, [1], strategies=("magic",))
    with pytest.raises(ValueError, match="budgets must be <= 3"):
        vug_experiment(nx.path_graph(3), 0.5, 0.3, 50, [5], strategies=("degree",), true_graph_strategies=())
