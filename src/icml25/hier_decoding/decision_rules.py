"""The Bayes-optimal decision rules D1–D4 of the paper (spec §2.3), vectorised over samples.

Every function takes checked leaf probabilities ``P`` (n_samples × n_leaves) and returns node indices (single
node / single leaf rules). Ties are broken deterministically towards the shallower node, then the smaller index
(``Hierarchy.tie_order``). The hF_β subset rule D5 lives in :mod:`.hf_subset_decoding`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int, check_probability

from ._validation import check_leaf_probs
from .cost_pruning import PruningConstants, pruning_constants, reasonableness, surviving_candidates
from .hierarchy import Hierarchy

__all__ = ["argmax_leaf", "leaf_cost_argmin", "node_cost_argmin", "node_cost_argmin_pruned",
           "deepest_above_half"]


def _tie_argmin(R: np.ndarray, order: np.ndarray) -> np.ndarray:
    """argmin over columns with ties going to the first column in ``order``; returns original column ids."""
    return order[np.argmin(R[:, order], axis=1)]


def argmax_leaf(leaf_probs: Any, h: Hierarchy) -> np.ndarray:
    """D1 (accuracy): ``argmax_l p(l)``, shape (n_samples,), leaf indices (ties: smaller index).

    Parameters
    ----------
    leaf_probs : array-like, shape (n_samples, n_leaves)
    h : Hierarchy
    """
    P = check_leaf_probs(leaf_probs, h.n_leaves)
    return np.argmax(P, axis=1)


def leaf_cost_argmin(leaf_probs: Any, h: Hierarchy, C: Any) -> np.ndarray:
    """D2 (leaf-to-leaf cost): ``argmin_{l'} Σ_l C(l', l) p(l)`` = argmin of ``P Cᵀ``, shape (n_samples,).

    Parameters
    ----------
    leaf_probs : array-like, shape (n_samples, n_leaves)
    h : Hierarchy
    C : array-like, shape (n_leaves, n_leaves)
        ``C[l_pred, l_true]``.
    """
    P = check_leaf_probs(leaf_probs, h.n_leaves)
    C = check_array(C, "C", shape=(h.n_leaves, h.n_leaves))
    leaf_order = h.tie_order[h.tie_order < h.n_leaves]
    return _tie_argmin(P @ C.T, leaf_order)


def node_cost_argmin(leaf_probs: Any, h: Hierarchy, C: Any, pruning: str = "auto",
                     chunk_elements: int = 4_000_000) -> np.ndarray:
    """D3 (node-to-leaf cost): ``argmin_n Σ_l C(n, l) p(l)``, shape (n_samples,), node indices.

    Parameters
    ----------
    leaf_probs : array-like, shape (n_samples, n_leaves)
    h : Hierarchy
    C : array-like, shape (n_nodes, n_leaves)
        ``C[n_pred, l_true]``.
    pruning : {"auto", "strict", "soft", "none"}
        ``"none"`` is the brute force ``argmin(P Cᵀ)`` (the reference). ``"auto"`` prunes with the strict or
        soft constants when :func:`reasonableness` classifies ``C`` as such, and uses brute force otherwise.
        ``"strict"`` forces the strict bounds (exact for any cost, possibly ineffective).
    chunk_elements : int
        Memory budget (number of float64) of one gathered cost block.
    """
    P = check_leaf_probs(leaf_probs, h.n_leaves)
    C = check_array(C, "C", shape=(h.n_nodes, h.n_leaves))
    if pruning not in ("auto", "strict", "soft", "none"):
        raise ValueError(f"pruning must be one of 'auto', 'strict', 'soft', 'none', got {pruning!r}")
    chunk_elements = check_int(chunk_elements, "chunk_elements", low=1)
    kind = reasonableness(C, h) if pruning == "auto" else (None if pruning == "none" else pruning)
    if kind is None:
        return _tie_argmin(P @ C.T, h.tie_order)  # Eq. D3, brute force
    return node_cost_argmin_pruned(P, h, C, pruning_constants(C, h, kind), chunk_elements=chunk_elements)


def node_cost_argmin_pruned(P: np.ndarray, h: Hierarchy, C: np.ndarray, consts: PruningConstants,
                            chunk_elements: int = 4_000_000) -> np.ndarray:
    """D3 with candidate pruning: the brute-force argmin restricted to :func:`surviving_candidates`.

    Parameters
    ----------
    P : ndarray, shape (n_samples, n_leaves)
        Checked leaf probabilities.
    h : Hierarchy
    C : ndarray, shape (n_nodes, n_leaves)
    consts : PruningConstants
        From :func:`pruning_constants` (precompute once and reuse for many batches).
    chunk_elements : int
        Memory budget of one gathered cost block (rows × candidates × leaves).
    """
    pn = h._node_probs_unchecked(P)
    alive = surviving_candidates(pn, h, consts)[:, h.tie_order]  # columns in tie order
    n_alive = alive.sum(axis=1)
    out = np.empty(P.shape[0], dtype=np.int64)
    by_size = np.argsort(-n_alive, kind="stable")  # largest candidate sets first: chunk sizes shrink the budget
    start = 0
    while start < len(by_size):
        k_max = int(n_alive[by_size[start]])
        rows_budget = max(1, chunk_elements // max(1, k_max * h.n_leaves))
        stop = min(len(by_size), start + rows_budget)
        idx = by_size[start:stop]
        k = int(n_alive[idx].max())
        r, c = np.nonzero(alive[idx])  # row-major: survivors of each sample in tie order
        rank = np.arange(len(r)) - np.r_[0, np.cumsum(n_alive[idx])[:-1]][r]
        valid = np.zeros((len(idx), k), dtype=bool)
        valid[r, rank] = True
        pos = np.zeros((len(idx), k), dtype=np.int64)
        pos[r, rank] = c
        nodes = h.tie_order[pos]
        R = np.einsum("il,ikl->ik", P[idx], C[nodes])  # Eq. D3 on the survivors only
        R[~valid] = np.inf
        out[idx] = nodes[np.arange(len(idx)), np.argmin(R, axis=1)]
        start = stop
    return out


def deepest_above_half(leaf_probs: Any, h: Hierarchy, threshold: float = 0.5) -> np.ndarray:
    """D3 for mistake severity and D4 (Hamming): the deepest node with ``p(n) > 1/2``, shape (n_samples,).

    Since ``R(n) − R(π(n)) = 1 − 2 p(n)`` for the tree distance, the nodes with ``p(n) > 1/2`` form a root path and
    its deepest node is optimal; at exactly ``p(n) = 1/2`` the parent is kept (tie towards the shallower node).

    Parameters
    ----------
    leaf_probs : array-like, shape (n_samples, n_leaves)
    h : Hierarchy
    threshold : float
        0.5 for the optimal rules; other values give the confidence-threshold family.
    """
    threshold = check_probability(threshold, "threshold")
    pn = h.node_probs(leaf_probs)
    above = pn > threshold
    above[:, h.root] = True
    return np.where(above, h.depth[None, :], -1).argmax(axis=1)
