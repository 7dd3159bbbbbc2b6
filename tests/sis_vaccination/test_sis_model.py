"""Extinction times against closed forms: without transmission every infected vertex recovers after a
Geometric(p_rec) time, so τ from an all-infected start is the maximum of n independent geometric variables."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from icml25.sis_vaccination import SISModel


def _expected_max_geometric(n: int, p: float) -> float:
    """E[max of n Geometric(p) on {1, 2, ...}] = Σ_{t ≥ 0} (1 − (1 − (1 − p)^t)^n)."""
    t = np.arange(0, 2000)
    return float(np.sum(1.0 - (1.0 - (1.0 - p) ** t) ** n))


def test_extinction_time_without_transmission_matches_the_closed_form() -> None:
    g = nx.path_graph(5)
    ext = SISModel(g, 1e-12, 0.3, seed=0).simulate_many(4000, cap=10_000)
    assert ext.fraction_censored == 0.0
    expected = _expected_max_geometric(5, 0.3)
    assert ext.capped_mean == pytest.approx(expected, rel=0.03)  # standard error ≈ 0.6 %


def test_vaccinating_everyone_ends_the_outbreak_at_the_recovery_rate() -> None:
    g = nx.complete_graph(4)
    ext = SISModel(g, 0.9, 0.5, seed=1).vaccinate(list(g)).simulate_many(4000, cap=1000)
    assert ext.capped_mean == pytest.approx(_expected_max_geometric(4, 0.5), rel=0.03)


def test_censoring_bookkeeping() -> None:
    g = nx.complete_graph(12)
    ext = SISModel(g, 0.9, 0.05, seed=2).simulate_many(20, cap=50)  # far above threshold: nobody dies out
    assert ext.fraction_censored == 1.0 and np.all(ext.times == 50) and ext.capped_mean == 50.0
    assert ext.median == float(np.median(ext.times)) and ext.cap == 50
