"""Candidate pruning for node-to-leaf costs (spec §2.3, D3): 'hierarchically reasonable' costs.

For a non-root node ``n`` with parent ``π(n)`` and a cost matrix ``C`` (n_nodes × n_leaves), the risk
``R(n) = Σ_l C(n, l) p(l)`` satisfies (Eq. D3)

    R(n) − R(π(n)) = −Σ_{l ∈ L(n)} p(l) Δ_l + Σ_{l ∉ L(n)} p(l) Δ̄_l,
    Δ_l = C(π(n), l) − C(n, l),   Δ̄_l = C(n, l) − C(π(n), l).

Bounding the sums by ``M_n = max Δ``, ``m_n = min Δ``, ``M̄_n = max Δ̄``, ``m̄_n = min Δ̄`` gives

    (a) m̄_n (ρ − p(n)) − M_n p(n) > 0  ⇒  n is not optimal         (p(n) < q_min(n) ρ, q_min = m̄/(m̄+M))
    (b) M̄_n (ρ − p(n)) − m_n p(n) < 0  ⇒  π(n) is not optimal      (p(n) > q_max(n) ρ, q_max = M̄/(M̄+m))

with ``ρ = 1`` and ``Δ̄`` over all ``l ∉ L(n)`` (*strict* form), or ``ρ = p(a₁(n))`` and ``Δ̄`` over
``L(a₁(n)) \\ L(n)`` (*soft* form; valid when ``C(n, l) = C(π(n), l)`` whenever ``LCA(n, l)`` is the root).
We use the products rather than the ratios ``q``: the bounds then need no division and hold for any cost in the
strict form (the sums are bounded by min/max whatever their signs), so pruning never removes an optimal node.
Maxima start at −inf and minima at +inf (numpy masks), and children of the root are included (bugs (a), (b)
of the official code, spec §8). A small tolerance keeps ties: only strictly suboptimal nodes are removed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml25.core.validation import check_array

from .hierarchy import Hierarchy

__all__ = ["PruningConstants", "reasonableness", "pruning_constants", "surviving_candidates"]


@dataclass(frozen=True)
class PruningConstants:
    """The per-node constants of the D3 pruning (spec §2.3); entries of the root are NaN.

    Attributes
    ----------
    kind : str
        ``"strict"`` or ``"soft"``.
    M_in, m_in : ndarray, shape (n_nodes,)
        Max / min of ``Δ_l`` over ``l ∈ L(n)``.
    M_out, m_out : ndarray, shape (n_nodes,)
        Max / min of ``Δ̄_l`` over ``l ∉ L(n)`` (strict) or ``L(a₁(n)) \\ L(n)`` (soft; 0 when empty).
    top_ancestor : ndarray of int, shape (n_nodes,)
        ``a₁(n)``, the child of the root above ``n`` (``-1`` for the root).
    tol : float
        Absolute tolerance of the pruning inequalities.
    """

    kind: str
    M_in: np.ndarray
    m_in: np.ndarray
    M_out: np.ndarray
    m_out: np.ndarray
    top_ancestor: np.ndarray
    tol: float

    @property
    def q_min(self) -> np.ndarray:
        """``q_min(n) = m̄ / (m̄ + M)`` (NaN where undefined)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.m_out / (self.m_out + self.M_in)

    @property
    def q_max(self) -> np.ndarray:
        """``q_max(n) = M̄ / (M̄ + m)`` (NaN where undefined)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.M_out / (self.M_out + self.m_in)


def _top_ancestors(h: Hierarchy) -> np.ndarray:
    top = np.full(h.n_nodes, -1, dtype=np.int64)
    level1 = np.flatnonzero(h.depth == 1)
    for a in level1:
        top[h.ancestor_matrix[:, a]] = a
    return top


def _deltas(C: np.ndarray, h: Hierarchy) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``C(π(n), ·) − C(n, ·)`` for non-root nodes, with the masks ``l ∈ L(n)`` and the node list."""
    nonroot = np.flatnonzero(h.parent >= 0)
    diff = C[h.parent[nonroot]] - C[nonroot]  # Δ (inside) = diff ; Δ̄ (outside) = -diff
    inside = h.ancestor_matrix[: h.n_leaves, nonroot].T
    return nonroot, diff, inside


def reasonableness(C: np.ndarray, h: Hierarchy, atol: float = 1e-12) -> str | None:
    """Classify a node-to-leaf cost matrix: ``"strict"``, ``"soft"`` or None (spec §2.3, D3).

    Strictly reasonable: ``C(n,l) < C(π(n),l)`` for ``l ∈ L(n)`` and ``C(n,l) > C(π(n),l)`` for ``l ∉ L(n)``.
    Softly reasonable: the same, except ``C(n,l) = C(π(n),l)`` whenever ``LCA(n,l)`` is the root.

    Parameters
    ----------
    C : ndarray, shape (n_nodes, n_leaves)
    h : Hierarchy
    atol : float
        Margin for the strict inequalities / equalities.
    """
    C = check_array(C, "C", shape=(h.n_nodes, h.n_leaves))
    nonroot, diff, inside = _deltas(C, h)
    if not (diff[inside] > atol).all():
        return None
    if (-diff[~inside] > atol).all():
        return "strict"
    top = _top_ancestors(h)
    under_top = h.ancestor_matrix[: h.n_leaves, top[nonroot]].T  # l ∈ L(a₁(n))
    deep = h.depth[nonroot] >= 2
    same_branch = under_top & ~inside
    outside_top = ~under_top
    if (np.abs(diff[outside_top & deep[:, None]]) <= atol).all() and (-diff[same_branch] > atol).all():
        # children of the root: outside_top is every l ∉ L(n), where C(n,l) = C(r,l) is required
        if (np.abs(diff[outside_top & ~deep[:, None]]) <= atol).all():
            return "soft"
    return None


def pruning_constants(C: np.ndarray, h: Hierarchy, kind: str = "strict", tol: float | None = None
                      ) -> PruningConstants:
    """Compute ``M_n, m_n, M̄_n, m̄_n`` for every non-root node (spec §2.3, D3).

    Parameters
    ----------
    C : ndarray, shape (n_nodes, n_leaves)
        Node-to-leaf cost.
    h : Hierarchy
    kind : {"strict", "soft"}
        The strict form is valid for every cost; the soft form needs ``C(n,l) = C(π(n),l)`` when ``LCA(n,l)``
        is the root (checked; ValueError otherwise).
    tol : float, optional
        Tolerance of the inequalities (default ``1e-10 · max(1, max|C|)``).
    """
    C = check_array(C, "C", shape=(h.n_nodes, h.n_leaves))
    if kind not in ("strict", "soft"):
        raise ValueError(f"kind must be 'strict' or 'soft', got {kind!r}")
    nonroot, diff, inside = _deltas(C, h)
    top = _top_ancestors(h)
    if kind == "strict":
        outside = ~inside
    else:
        under_top = h.ancestor_matrix[: h.n_leaves, top[nonroot]].T
        outside = under_top & ~inside
        rest = ~under_top
        scale = max(1.0, float(np.abs(C).max()))
        if (np.abs(diff[rest]) > 1e-9 * scale).any():
            raise ValueError("kind='soft' needs C(n, l) == C(parent(n), l) whenever LCA(n, l) is the root")
    n = h.n_nodes
    M_in = np.full(n, np.nan)
    m_in = np.full(n, np.nan)
    M_out = np.full(n, np.nan)
    m_out = np.full(n, np.nan)
    # Δ over L(n): max initialised at -inf, min at +inf (spec §8 (a)); L(n) is never empty
    M_in[nonroot] = np.where(inside, diff, -np.inf).max(axis=1)
    m_in[nonroot] = np.where(inside, diff, np.inf).min(axis=1)
    bar = -diff
    has_out = outside.any(axis=1)
    mx = np.where(outside, bar, -np.inf).max(axis=1)
    mn = np.where(outside, bar, np.inf).min(axis=1)
    M_out[nonroot] = np.where(has_out, mx, 0.0)  # empty set: its term is multiplied by ρ − p(n) = 0
    m_out[nonroot] = np.where(has_out, mn, 0.0)
    if tol is None:
        tol = 1e-10 * max(1.0, float(np.abs(C).max()))
    return PruningConstants(kind=kind, M_in=M_in, m_in=m_in, M_out=M_out, m_out=m_out, top_ancestor=top, tol=tol)


def surviving_candidates(node_probs: np.ndarray, h: Hierarchy, consts: PruningConstants) -> np.ndarray:
    """Boolean mask (n_samples, n_nodes) of the nodes that rules (a) and (b) do not remove (spec §2.3, D3).

    Every minimiser of the risk survives, so the argmin over survivors equals the brute-force argmin.
    """
    pn = check_array(node_probs, "node_probs", shape=(None, h.n_nodes), low=-1e-9, high=1 + 1e-9)
    nonroot = np.flatnonzero(h.parent >= 0)
    p = pn[:, nonroot]
    ref = 1.0 if consts.kind == "strict" else pn[:, consts.top_ancestor[nonroot]]
    mass_out = np.clip(ref - p, 0.0, None)
    prune_self = consts.m_out[nonroot] * mass_out - consts.M_in[nonroot] * p > consts.tol   # (a)
    prune_parent = consts.M_out[nonroot] * mass_out - consts.m_in[nonroot] * p < -consts.tol  # (b)
    alive = np.ones_like(pn, dtype=bool)
    alive[:, nonroot] = ~prune_self
    par = h.parent[nonroot]
    order = np.argsort(par, kind="stable")
    par_sorted = par[order]
    starts = np.flatnonzero(np.r_[True, par_sorted[1:] != par_sorted[:-1]])
    any_child_prunes = np.logical_or.reduceat(prune_parent[:, order], starts, axis=1)
    alive[:, par_sorted[starts]] &= ~any_child_prunes
    return alive
