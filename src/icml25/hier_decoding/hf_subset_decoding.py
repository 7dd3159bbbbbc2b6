"""D5: the Bayes-optimal node subset for the hierarchical F_β score (spec §2.3), vectorised over samples.

For a predicted set ``Ŷ`` of size ``k`` the expected hF_β (root counted in both sets) is

    S(Ŷ) = Σ_{n ∈ Ŷ} Δ_k(n),   Δ_k(n) = (1+β²) Σ_{l ∈ L(n)} p(l) / (k + b_l),   b_l = β² (d(l)+1)     (Eq. D5)

so for each ``k`` the best set is the ``k`` nodes of largest ``Δ_k``, and the optimum is the best ``k``.
``Δ_k(n)`` only depends on the leaf-depth profile ``P_n(t) = Σ_{l ∈ L(n), d(l) = t} p(l)``, computed for all nodes
with one sparse product. All samples of a chunk are processed together: candidates are gathered into a padded
(samples × K) array, ``Δ_k`` for every ``k ≤ K`` is one einsum, one sort gives every top-``k`` sum.

Candidate pruning, certified. The official constant ``q_β(n) = 1/(1 + β²(D(n)+1))`` (keep ``p(n) ≥ q_β(n)``) is
*not* a valid pruning rule: on small random trees it removes nodes of the optimal set (our tests show it;
e.g. a depth-1 leaf with ``p = 0.6`` belongs to the optimal hF_0.5 set while ``q = 2/3``). We use it only as a
first guess, then certify with a bound we prove: if ``T`` is optimal with ``|T| = k`` and ``n_k`` is its member of
smallest ``Δ_k``, optimality against ``k − 1`` gives ``Δ_k(n_k) ≥ Σ_{m ∈ T∖n_k} (Δ_{k−1}(m) − Δ_k(m)) ≥
(V* − Δ_k(n_k)) / (k − 1 + B)``, so every member ``n`` has ``(1+β²) p(n)/(k + b_min(n)) ≥ Δ_k(n) ≥ V*/(k + B)``:

    n ∈ T  ⇒  p(n) ≥ V_lb (1 + b_min(n)) / ((1+β²)(1 + B))                                        (certificate)

with ``b_min(n)`` the smallest ``b_l`` below ``n``, ``B`` the largest ``b_l`` with ``p(l) > 0`` and ``V_lb ≤ V*`` the
value found in the first pass. Samples whose certified candidate set is not contained in the first guess are
solved again on the union, so the result is exactly the optimum over all node subsets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import check_leaf_probs, check_positive
from .hierarchy import Hierarchy

__all__ = ["hf_beta_subset", "hf_candidate_threshold"]


def hf_candidate_threshold(h: Hierarchy, beta: float) -> np.ndarray:
    """The official first-guess constant ``q_β(n) = 1 / (1 + β² (D(n)+1))`` (not a valid pruning on its own)."""
    beta = check_positive(beta, "beta")
    return 1.0 / (1.0 + beta**2 * (h.max_leaf_depth_below + 1.0))


def _depth_profile_matrix(h: Hierarchy) -> tuple[Any, int]:
    """Sparse (n_leaves × n_nodes·T) matrix: column ``n·T + t`` sums the leaves of ``L(n)`` at depth ``t``."""
    from scipy import sparse

    T = int(h.depth[: h.n_leaves].max()) + 1
    leaves, nodes = np.nonzero(h.leaf_path_matrix)
    cols = nodes * T + h.depth[leaves]
    return sparse.csc_matrix((np.ones(len(leaves)), (leaves, cols)), shape=(h.n_leaves, h.n_nodes * T)), T


class _Solver:
    """Exact top-k search over given candidate sets (the per-chunk kernel of D5)."""

    def __init__(self, h: Hierarchy, beta: float, include_root: bool, chunk_elements: int):
        self.h = h
        self.b2 = beta**2
        self.prof_matrix, self.T = _depth_profile_matrix(h)
        t = np.arange(self.T, dtype=np.float64)
        self.b = self.b2 * (t + 1.0) if include_root else self.b2 * t  # b_l per leaf depth
        self.chunk_elements = chunk_elements

    def solve(self, P: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Optimal sets (indicator) and values over ``cand`` (bool, samples × nodes, columns in node order)."""
        h = self.h
        cand = cand[:, h.tie_order]  # candidates in (depth, index) order: stable sorts favour shallower nodes
        n_cand = cand.sum(axis=1)
        Y = np.zeros((P.shape[0], h.n_nodes), dtype=bool)
        value = np.zeros(P.shape[0])
        by_size = np.argsort(-n_cand, kind="stable")
        start = 0
        while start < len(by_size):
            K0 = int(n_cand[by_size[start]])
            if K0 == 0:  # nothing to choose (root excluded, no mass): empty set, value 0
                break
            rows = max(1, self.chunk_elements // (K0 * K0 + K0 * self.T))
            idx = by_size[start:start + rows]
            start += len(idx)
            Y[idx], value[idx] = self._solve_chunk(P[idx], cand[idx], int(n_cand[idx].max()))
        return Y, value

    def _solve_chunk(self, P: np.ndarray, c: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray]:
        h, m = self.h, P.shape[0]
        rows = np.arange(m)
        pos = np.argsort(~c, axis=1, kind="stable")[:, :K]
        valid = np.take_along_axis(c, pos, axis=1)
        nodes = h.tie_order[pos]  # (m, K)
        used = np.unique(nodes[valid])  # profiles of the chunk's candidate nodes only
        cols = (used[:, None] * self.T + np.arange(self.T)[None, :]).ravel()
        prof = np.asarray(self.prof_matrix[:, cols].T @ P.T).T.reshape(m, len(used), self.T)
        G = prof[rows[:, None], np.minimum(np.searchsorted(used, nodes), len(used) - 1)]  # (m, K, T): P_n(t)
        G[~valid] = 0.0
        k = np.arange(1, K + 1, dtype=np.float64)
        W = (1.0 + self.b2) / (k[None, :] + self.b[:, None])  # (T, K): (1+β²) / (k + b_t)
        delta = np.einsum("mjt,tk->mkj", G, W)  # Eq. D5: Δ_k(n) for k = 1..K and every candidate n
        delta[~np.broadcast_to(valid[:, None, :], delta.shape)] = -np.inf
        top = -np.sort(-delta, axis=2)
        V = np.cumsum(top, axis=2)[:, np.arange(K), np.arange(K)]  # V_k = sum of the k largest Δ_k
        k_star = np.argmax(V, axis=1)  # first maximum: the smallest k among ties
        best = delta[rows, k_star]  # (m, K)
        rank = np.argsort(-best, axis=1, kind="stable")
        chosen = np.arange(K)[None, :] <= k_star[:, None]
        r, j = np.nonzero(chosen)
        Y = np.zeros((m, h.n_nodes), dtype=bool)
        Y[r, nodes[r, rank[r, j]]] = True
        return Y, V[rows, k_star]


def hf_beta_subset(leaf_probs: Any, h: Hierarchy, beta: float = 1.0, include_root: bool = True,
                   prune: bool = True, chunk_elements: int = 2_000_000, return_stats: bool = False) -> Any:
    """D5: the node set maximising the expected hF_β, as an indicator matrix (n_samples, n_nodes) of bool.

    Parameters
    ----------
    leaf_probs : array-like, shape (n_samples, n_leaves)
        Leaf probabilities (rows sum to one).
    h : Hierarchy
    beta : float
        β > 0 (β > 1 favours recall, i.e. larger sets).
    include_root : bool
        Count the root in both sets (official convention, default). With False, ``d(l)+1`` becomes ``d(l)``
        and the root is not a candidate (it is still set in the returned indicator, where it changes nothing).
    prune : bool
        Certified candidate pruning (see the module docstring); False searches every node with ``p(n) > 0``.
    chunk_elements : int
        Memory budget (float64 count) of the per-chunk ``samples × K × K`` array.
    return_stats : bool
        Also return a dict with the mean candidate count and the number of re-solved samples.

    Returns
    -------
    ndarray of bool, shape (n_samples, n_nodes)
        Ties between set sizes go to the smallest ``k``; ties inside the top-``k`` to shallower nodes, so the set
        is ancestor-closed.
    """
    from icml25.core.validation import check_int

    beta = check_positive(beta, "beta")
    P = check_leaf_probs(leaf_probs, h.n_leaves)
    chunk_elements = check_int(chunk_elements, "chunk_elements", low=1)
    pn = h._node_probs_unchecked(P)
    solver = _Solver(h, beta, include_root, chunk_elements)
    root_col = np.zeros(h.n_nodes, dtype=bool)
    root_col[h.root] = True
    positive = pn > 0
    if include_root:
        positive |= root_col
    else:
        positive &= ~root_col
    stats = {"resolved": 0}
    if not prune:
        Y, _ = solver.solve(P, positive)
        stats["mean_candidates"] = float(positive.sum(1).mean())
    else:
        guess = (pn >= hf_candidate_threshold(h, beta)[None, :]) & positive  # official first guess
        if not include_root:  # make the first guess non-empty: the most probable child of the root
            top = np.flatnonzero(h.depth == 1)
            guess[np.arange(len(P)), top[np.argmax(pn[:, top], axis=1)]] = True
        guess |= positive & root_col
        Y, V = solver.solve(P, guess)
        # certificate: every member of an optimal set has p(n) ≥ V* (1 + b_min(n)) / ((1+β²)(1 + B))
        offset = 1.0 if include_root else 0.0
        b_min = beta**2 * (h.min_leaf_depth_below + offset)
        leaf_depth = h.depth[: h.n_leaves]
        B = beta**2 * (np.where(P > 0, leaf_depth[None, :], 0).max(axis=1) + offset)
        thr = V[:, None] * (1.0 + b_min[None, :]) / ((1.0 + beta**2) * (1.0 + B[:, None]))
        certified = (pn >= thr * (1.0 - 1e-9) - 1e-12) & positive
        redo = (certified & ~guess).any(axis=1)
        if redo.any():
            Y[redo], _ = solver.solve(P[redo], guess[redo] | certified[redo])
        stats["resolved"] = int(redo.sum())
        stats["mean_candidates"] = float((guess | certified).sum(1).mean())
    Y[:, h.root] = True  # always optimal with the root counted; neutral without it
    return (Y, stats) if return_stats else Y
