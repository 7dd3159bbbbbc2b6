"""Heuristic decoders H1–H7 (spec §2.4): the baselines the optimal rules are compared with.

Each takes ``(leaf_probs, hierarchy)`` and returns a node-indicator matrix (n_samples, n_nodes) of bool encoding
one node ``A(n)`` per sample, like :func:`~icml25.hier_decoding.decode`. All are vectorised over samples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from icml25.core.validation import check_probability, check_real

from ._validation import check_leaf_probs
from .hierarchy import Hierarchy

__all__ = ["argmax_leaf_heuristic", "top_down_greedy", "confidence_threshold", "expected_information",
           "plurality", "hie_self", "crm_bm", "HEURISTICS"]


def _padded_children(h: Hierarchy) -> tuple[np.ndarray, np.ndarray]:
    width = max(1, max(len(c) for c in h.children))
    ch = np.full((h.n_nodes, width), -1, dtype=np.int64)
    for i, c in enumerate(h.children):
        ch[i, : len(c)] = c
    return ch, np.array([len(c) for c in h.children])


def _descend(pn: np.ndarray, h: Hierarchy, use_plurality: bool) -> np.ndarray:
    n = pn.shape[0]
    ch, n_children = _padded_children(h)
    node = np.full(n, h.root, dtype=np.int64)
    active = np.ones(n, dtype=bool)
    running_second = np.zeros(n)
    rows = np.arange(n)
    for _ in range(int(h.depth.max())):
        active &= n_children[node] > 0
        if not active.any():
            break
        kids = ch[node]  # (n, width)
        vals = np.where(kids >= 0, pn[rows[:, None], np.maximum(kids, 0)], -np.inf)
        best_pos = np.argmax(vals, axis=1)  # ties: the first child
        best = kids[rows, best_pos]
        move = active.copy()
        if use_plurality:
            p_best = vals[rows, best_pos]
            second = -np.sort(-vals, axis=1)[:, 1] if vals.shape[1] > 1 else np.full(n, -np.inf)
            multi = n_children[node] > 1
            running_second = np.where(active & multi, np.maximum(running_second, second), running_second)
            move &= ~multi | (p_best >= running_second)  # single-child nodes are traversed
        node = np.where(move, best, node)
        active &= move
    return node


def argmax_leaf_heuristic(leaf_probs: Any, hierarchy: Hierarchy) -> np.ndarray:
    """H1: the most probable leaf."""
    P = check_leaf_probs(leaf_probs, hierarchy.n_leaves)
    return hierarchy.indicator(np.argmax(P, axis=1))


def top_down_greedy(leaf_probs: Any, hierarchy: Hierarchy) -> np.ndarray:
    """H2: from the root, repeatedly move to the most probable child until a leaf."""
    pn = hierarchy.node_probs(leaf_probs)
    return hierarchy.indicator(_descend(pn, hierarchy, use_plurality=False))


def confidence_threshold(leaf_probs: Any, hierarchy: Hierarchy, tau: float = 0.5) -> np.ndarray:
    """H3 (Valmadre 2022): among nodes with ``p(n) ≥ τ``, the most specific (largest IC, then deepest)."""
    tau = check_probability(tau, "tau")
    pn = hierarchy.node_probs(leaf_probs)
    ok = pn >= tau
    ok[:, hierarchy.root] = True
    key = hierarchy.ic + 1e-9 * hierarchy.depth  # IC ties (single-child chains): the deeper node
    return hierarchy.indicator(np.where(ok, key[None, :], -np.inf).argmax(axis=1))


def expected_information(leaf_probs: Any, hierarchy: Hierarchy, lam: float = 0.0) -> np.ndarray:
    """H4 (Deng et al. 2012, hedging with λ): ``argmax_n p(n) (IC(n) + λ)``."""
    lam = check_real(lam, "lam")
    pn = hierarchy.node_probs(leaf_probs)
    val = pn * (hierarchy.ic[None, :] + lam)
    order = hierarchy.tie_order
    return hierarchy.indicator(order[np.argmax(val[:, order], axis=1)])


def plurality(leaf_probs: Any, hierarchy: Hierarchy) -> np.ndarray:
    """H5 (Valmadre 2022): descend while the best child beats the running max of second-best probabilities."""
    pn = hierarchy.node_probs(leaf_probs)
    return hierarchy.indicator(_descend(pn, hierarchy, use_plurality=True))


def hie_self(leaf_probs: Any, hierarchy: Hierarchy) -> np.ndarray:
    """H6 (HiE-Self, Jain et al. 2023): the leaf maximising ``p(l) p(π(l))``."""
    pn = hierarchy.node_probs(leaf_probs)
    L = hierarchy.n_leaves
    score = pn[:, :L] * pn[:, hierarchy.parent[:L]]
    return hierarchy.indicator(np.argmax(score, axis=1))


def crm_bm(leaf_probs: Any, hierarchy: Hierarchy) -> np.ndarray:
    """H7 (CRM-BM, Karthik et al. 2021): argmax leaf when ``max_l p(l) ≥ 0.5``, else the CRM leaf.

    The CRM leaf is ``argmin_{l'} Σ_l dist(l', l) p(l)`` with the tree distance. The test is on the maximum
    *leaf* probability (the official code tested node probabilities, always true because ``p(root) = 1``).
    """
    pn = hierarchy.node_probs(leaf_probs)
    L = hierarchy.n_leaves
    P = pn[:, :L]
    lca_depth = hierarchy.depth[hierarchy.lca_matrix()[:L]]
    dist = hierarchy.depth[:L, None] + hierarchy.depth[None, :L] - 2 * lca_depth
    crm = np.argmin(P @ dist.T.astype(np.float64), axis=1)
    top = np.argmax(P, axis=1)
    return hierarchy.indicator(np.where(P.max(axis=1) >= 0.5, top, crm))


#: name -> heuristic, in the order of spec §2.4
HEURISTICS: dict[str, Callable[[Any, Hierarchy], np.ndarray]] = {
    "H1 argmax leaf": argmax_leaf_heuristic,
    "H2 top-down greedy": top_down_greedy,
    "H3 threshold 0.5": confidence_threshold,
    "H4 expected information": expected_information,
    "H5 plurality": plurality,
    "H6 HiE-Self": hie_self,
    "H7 CRM-BM": crm_bm,
}
