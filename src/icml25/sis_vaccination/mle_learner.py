"""Infector-posterior baseline learner in the manner of Barbillon et al. (2020), as used by the official code."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np

from icml25.core.threads import thread_limits

from ._params import ParamsMixin
from ._transitions import as_transitions
from ._validation import check_probability

__all__ = ["MLELearner"]


class MLELearner(ParamsMixin):
    """The MLE learning baseline of the 'Learn to Vaccinate' (ICML 2025) experiments (Barbillon et al. 2020).

    Every transition in which vertex j goes from healthy to infected must have been caused by one of the
    vertices infected at t. With ψ_{ij,t} = p_inf for an infected i and 0 for a healthy i, the share
    r_{ij,t} = ψ_{ij,t} / Σ_k ψ_{kj,t} = Y_i(t) / I(t) (I(t) = number infected at t) is the posterior that i
    infected j under a uniform prior. The edge probability is P(i–j) = 1 − Π_t (1 − r_{ij,t}) over j's
    infection events, and i–j is an edge when max(P(i→j), P(j→i)) > ``threshold``.

    Recovery and stay-healthy transitions are left out: their ψ ratios are the same (1/n) for every pair in the
    official formula, so they carry no information about edges but drive every pair's edge probability to 1
    as T grows. With long observation windows the estimator still over-connects (every co-infected pair
    accumulates evidence); it is a baseline.

    Parameters
    ----------
    p_inf : float in (0, 1)
        Transmission probability (it cancels in r but is validated for interface parity).
    p_rec : float in (0, 1)
        Recovery probability (kept for interface parity; unused by the ratio).
    threshold : float in (0, 1)
        Edge-probability cut.

    Attributes
    ----------
    edge_probability_ : ndarray, shape (n, n)
        P(i→j) at ``[i, j]``.
    adjacency_ : ndarray of bool, shape (n, n)
    graph_ : networkx.Graph
    """

    def __init__(self, p_inf: float, p_rec: float, threshold: float = 0.5) -> None:
        self.p_inf = p_inf
        self.p_rec = p_rec
        self.threshold = threshold
        self._validate()

    def _validate(self) -> None:
        check_probability(self.p_inf, "p_inf")
        check_probability(self.p_rec, "p_rec")
        check_probability(self.threshold, "threshold")

    def fit(self, Y: Any) -> MLELearner:
        """Estimate the graph from infection states ``Y`` ((T, n) array or list of trajectories). Returns self."""
        self._validate()
        prev, nxt = as_transitions(Y)
        n = prev.shape[1]
        events = (~prev & nxt).astype(np.float64)  # [t, j]: j infected at t+1, healthy at t
        infected = prev.sum(axis=1)
        X = prev.astype(np.float64)
        single = (infected == 1).astype(np.float64)
        with np.errstate(divide="ignore"):
            w = np.where(infected > 1, np.log1p(-1.0 / np.maximum(infected, 2)), 0.0)
        with thread_limits(1):
            log_none = (X * w[:, None]).T @ events  # Σ_t Y_i(t)·log(1 − 1/I(t)) over j's infection events
            certain = (X * single[:, None]).T @ events > 0  # i was the only infected vertex at one of j's events
        prob = np.where(certain, 1.0, 1.0 - np.exp(log_none))
        np.fill_diagonal(prob, 0.0)
        self.edge_probability_ = prob
        adj = np.maximum(prob, prob.T) > float(self.threshold)
        self.adjacency_ = adj
        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from((int(a), int(b)) for a, b in zip(*np.nonzero(np.triu(adj, 1))))
        self.graph_ = g
        return self
