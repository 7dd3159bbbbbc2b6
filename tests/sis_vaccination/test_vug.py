"""edge_f1 against precision/recall/F1 computed from the 0/1 edge indicators of all vertex pairs."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest

from icml25.sis_vaccination import edge_f1


def test_edge_f1_equals_the_pair_indicator_scores() -> None:
    true = nx.gnp_random_graph(15, 0.25, seed=0)
    learned = nx.gnp_random_graph(15, 0.25, seed=1)
    learned.add_edges_from(list(true.edges)[:10])
    pairs = list(itertools.combinations(range(15), 2))
    y_true = [true.has_edge(*p) for p in pairs]
    y_pred = [learned.has_edge(*p) for p in pairs]
    tp = sum(t and p for t, p in zip(y_true, y_pred))
    precision, recall = tp / sum(y_pred), tp / sum(y_true)
    got = edge_f1(learned, true)
    assert got["precision"] == pytest.approx(precision) and got["recall"] == pytest.approx(recall)
    assert got["f1"] == pytest.approx(2 * precision * recall / (precision + recall))
    assert got["false_positives"] == sum(p and not t for p, t in zip(y_pred, y_true))
    assert got["false_negatives"] == sum(t and not p for p, t in zip(y_pred, y_true))


def test_edge_f1_is_orientation_free_and_zero_when_undefined() -> None:
    a = nx.Graph([(0, 1), (2, 1)])
    b = nx.Graph([(1, 0), (1, 2)])
    assert edge_f1(a, b)["f1"] == 1.0
    assert edge_f1(nx.empty_graph(3), b) == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "false_positives": 0.0,
                                             "false_negatives": 2.0}
