"""Hierarchical evaluation metrics (spec §2.2), each paired with its Bayes-optimal decoder (spec §2.3).

A prediction is a node-indicator matrix ``Y`` (n_samples × n_nodes): a node prediction ``n`` is ``A(n)``, a set
prediction any subset. Every metric exposes

- ``score_matrix(Y)``: ``M(ŷ_i, l)`` for every sample ``i`` and every possible true leaf ``l`` (n_samples × n_leaves);
- ``score(y_true_leaf, Y)``: the metric against the true leaves (mean, or per sample with ``average=False``);
- ``expected_score(leaf_probs, Y) = Σ_l p(l) M(ŷ, l)``: the quantity the decoder optimises;
- ``decode(leaf_probs)``: the optimal prediction (argmax of the expected score, argmin for losses/costs).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from icml25.core.validation import check_array

from ._validation import check_indicator, check_leaf_probs, check_positive
from .cost_pruning import PruningConstants, pruning_constants, reasonableness
from .decision_rules import (
    argmax_leaf,
    deepest_above_half,
    leaf_cost_argmin,
    node_cost_argmin,
    node_cost_argmin_pruned,
)
from .hf_subset_decoding import hf_beta_subset
from .hierarchy import Hierarchy

__all__ = ["HierarchicalMetric", "Accuracy", "Hamming", "HFBeta", "NodeToLeafCost", "MistakeSeverity", "WuPalmer",
           "Zhao", "LeafToLeafCost"]


def _overlap(Y: np.ndarray, h: Hierarchy) -> np.ndarray:
    """``|Ŷ_i ∩ A(l)| = (Y Eᵀ)[i, l]``, shape (n_samples, n_leaves); ``Y`` has few ones per row, so it is made
    sparse and multiplied with the dense ``Eᵀ``."""
    from scipy import sparse

    return np.asarray(sparse.csr_matrix(Y) @ h.leaf_path_matrix.T)


class HierarchicalMetric(ABC):
    """Base class: a metric ``M(ŷ, l)`` of a prediction ``ŷ`` against a true leaf ``l`` on a :class:`Hierarchy`.

    Attributes
    ----------
    name : str
    greater_is_better : bool
        True for scores (accuracy, hF_β), False for losses and costs.
    prediction_space : str
        ``"leaf"``, ``"node"`` or ``"subset"``: what :meth:`decode` returns.
    """

    name = "metric"
    greater_is_better = True
    prediction_space = "subset"

    def __init__(self, hierarchy: Hierarchy):
        if not isinstance(hierarchy, Hierarchy):
            raise TypeError(f"hierarchy must be a Hierarchy, got {type(hierarchy).__name__}")
        self.hierarchy = hierarchy

    # -------------------------------------------------------------- implemented by every metric
    @abstractmethod
    def _score_matrix(self, Y: np.ndarray) -> np.ndarray:
        """``M(ŷ_i, l)`` for a float indicator matrix ``Y`` (n_samples, n_nodes)."""

    @abstractmethod
    def decode(self, leaf_probs: Any) -> np.ndarray:
        """Bayes-optimal prediction for ``leaf_probs`` (n_samples, n_leaves): indicator (n_samples, n_nodes)."""

    # -------------------------------------------------------------- shared
    def _as_indicator(self, y_pred: Any) -> np.ndarray:
        arr = np.asarray(y_pred)
        if arr.ndim == 1 and np.issubdtype(arr.dtype, np.integer):
            return self.hierarchy.indicator(arr).astype(np.float64)
        return check_indicator(arr, self.hierarchy.n_nodes)

    def _score_nodes(self, nodes: np.ndarray) -> np.ndarray:
        """``M(A(n_i), l)`` for single-node predictions given as node indices (subclasses add fast paths)."""
        return self._score_matrix(self.hierarchy.indicator(nodes).astype(np.float64))

    def _check_nodes(self, nodes: np.ndarray) -> np.ndarray:
        if nodes.size == 0:
            raise ValueError("y_pred must hold at least one prediction, got an empty array")
        if nodes.size and (nodes.min() < 0 or nodes.max() >= self.hierarchy.n_nodes):
            raise ValueError(f"y_pred node indices must be in 0..{self.hierarchy.n_nodes - 1}")
        return nodes

    def score_matrix(self, y_pred: Any) -> np.ndarray:
        """``M(ŷ_i, l)`` for all samples and all leaves, shape (n_samples, n_leaves).

        Parameters
        ----------
        y_pred : array-like
            Indicator matrix (n_samples, n_nodes) or 1-d array of node indices.
        """
        arr = np.asarray(y_pred)
        if arr.ndim == 1 and np.issubdtype(arr.dtype, np.integer):
            return self._score_nodes(self._check_nodes(arr))
        return self._score_matrix(self._as_indicator(arr))

    def score(self, y_true_leaf: Any, y_pred: Any, average: bool = True) -> Any:
        """The metric of ``y_pred`` against the true leaves (mean over samples, or per sample).

        Parameters
        ----------
        y_true_leaf : array-like of int, shape (n_samples,)
            True leaf indices.
        y_pred : array-like
            Indicator matrix (n_samples, n_nodes) or node indices (n_samples,).
        average : bool
            Return the mean (float) or the per-sample values (ndarray).
        """
        S = self.score_matrix(y_pred)
        y = np.asarray(y_true_leaf)
        if y.ndim != 1 or y.shape[0] != S.shape[0] or not np.issubdtype(y.dtype, np.integer):
            raise ValueError(f"y_true_leaf must be a 1-d integer array of length {S.shape[0]}, got shape {y.shape} "
                             f"dtype {y.dtype}")
        if y.size and (y.min() < 0 or y.max() >= self.hierarchy.n_leaves):
            raise ValueError(f"y_true_leaf must hold leaf indices 0..{self.hierarchy.n_leaves - 1}")
        vals = S[np.arange(len(y)), y]
        return float(vals.mean()) if average else vals

    def expected_score(self, leaf_probs: Any, y_pred: Any, average: bool = True) -> Any:
        """``Σ_l p(l) M(ŷ, l)`` per sample (or its mean): the objective of the optimal decoder (spec §2.5).

        Parameters
        ----------
        leaf_probs : array-like, shape (n_samples, n_leaves)
        y_pred : array-like
            Indicator matrix (n_samples, n_nodes) or node indices (n_samples,).
        average : bool
        """
        P = check_leaf_probs(leaf_probs, self.hierarchy.n_leaves)
        S = self.score_matrix(y_pred)
        if S.shape[0] != P.shape[0]:
            raise ValueError(f"y_pred has {S.shape[0]} rows but leaf_probs has {P.shape[0]}")
        vals = (P * S).sum(axis=1)
        return float(vals.mean()) if average else vals

    def decode_nodes(self, leaf_probs: Any) -> Any:
        """Node indices (n_samples,) for single-node/leaf metrics; a list of index arrays for subset metrics."""
        Y = self.decode(leaf_probs)
        if self.prediction_space == "subset":
            return [np.flatnonzero(row) for row in Y]
        return self.hierarchy.indicator_to_node(Y)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


class Accuracy(HierarchicalMetric):
    """Exact-match accuracy ``1[ŷ = E[l]]`` (spec §2.2, 1); optimal decoder D1 (argmax leaf)."""

    name = "accuracy"
    greater_is_better = True
    prediction_space = "leaf"

    def _score_matrix(self, Y: np.ndarray) -> np.ndarray:
        h = self.hierarchy
        mismatches = Y.sum(1, keepdims=True) + (h.depth[None, : h.n_leaves] + 1.0) - 2.0 * _overlap(Y, h)
        return (np.abs(mismatches) < 0.5).astype(np.float64)

    def _score_nodes(self, nodes: np.ndarray) -> np.ndarray:
        return (nodes[:, None] == np.arange(self.hierarchy.n_leaves)[None, :]).astype(np.float64)

    def decode(self, leaf_probs: Any) -> np.ndarray:
        """D1: indicator of ``A(argmax_l p(l))``, shape (n_samples, n_nodes)."""
        return self.hierarchy.indicator(argmax_leaf(leaf_probs, self.hierarchy))


class Hamming(HierarchicalMetric):
    """Hamming loss on node indicators ``(1/|N|) Σ_m 1[ŷ_m ≠ E[l, m]]`` (spec §2.2, 2); decoder D4."""

    name = "hamming"
    greater_is_better = False
    prediction_space = "subset"

    def _score_matrix(self, Y: np.ndarray) -> np.ndarray:
        h = self.hierarchy
        mismatches = Y.sum(1, keepdims=True) + (h.depth[None, : h.n_leaves] + 1.0) - 2.0 * _overlap(Y, h)
        return mismatches / h.n_nodes

    def _score_nodes(self, nodes: np.ndarray) -> np.ndarray:
        h = self.hierarchy
        overlap = h.lca_depth_matrix()[nodes] + 1.0
        return (h.depth[nodes][:, None] + h.depth[None, : h.n_leaves] + 2.0 - 2.0 * overlap) / h.n_nodes

    def decode(self, leaf_probs: Any) -> np.ndarray:
        """D4: ``{n : p(n) > 1/2}`` (a root path), shape (n_samples, n_nodes)."""
        return self.hierarchy.indicator(deepest_above_half(leaf_probs, self.hierarchy))


class HFBeta(HierarchicalMetric):
    """Hierarchical F_β (Kosmopoulos et al. 2013; spec §2.2, 3); decoder D5 (optimal node subset).

    ``hF_β = (1+β²) |Ŷ ∩ T_l| / (|Ŷ| + β² |T_l|)`` with ``T_l = A(l)``; the root is counted in both sets unless
    ``include_root=False``.

    Parameters
    ----------
    hierarchy : Hierarchy
    beta : float
        β > 0.
    include_root : bool
        Official convention (True): hF never reaches 0 and ``|T_l| = d(l) + 1``.
    """

    greater_is_better = True
    prediction_space = "subset"

    def __init__(self, hierarchy: Hierarchy, beta: float = 1.0, include_root: bool = True):
        super().__init__(hierarchy)
        self.beta = check_positive(beta, "beta")
        self.include_root = bool(include_root)
        self.name = f"hF_{self.beta:g}"

    def _score_matrix(self, Y: np.ndarray) -> np.ndarray:
        h = self.hierarchy
        true_size = h.depth[: h.n_leaves] + 1.0
        if not self.include_root:
            Y = Y.copy()
            Y[:, h.root] = 0.0
            true_size = true_size - 1.0
        tp = _overlap(Y, h)  # |Ŷ ∩ T_l| (the root column of Y is zero when it is excluded)
        k = Y.sum(1, keepdims=True)
        b2 = self.beta**2
        denom = k + b2 * true_size[None, :]
        return np.where(denom > 0, (1.0 + b2) * tp / np.where(denom > 0, denom, 1.0), 0.0)

    def _score_nodes(self, nodes: np.ndarray) -> np.ndarray:
        h = self.hierarchy
        off = 0.0 if self.include_root else 1.0
        tp = h.lca_depth_matrix()[nodes] + 1.0 - off
        k = (h.depth[nodes] + 1.0 - off)[:, None]
        b2 = self.beta**2
        denom = k + b2 * (h.depth[None, : h.n_leaves] + 1.0 - off)
        return np.where(tp > 0, (1.0 + b2) * tp / denom, 0.0)

    def decode(self, leaf_probs: Any) -> np.ndarray:
        """D5: the optimal node subset, shape (n_samples, n_nodes) of bool."""
        return hf_beta_subset(leaf_probs, self.hierarchy, self.beta, include_root=self.include_root)


class NodeToLeafCost(HierarchicalMetric):
    """A user cost ``C(n, l)`` of predicting node ``n`` when the truth is leaf ``l`` (spec §2.2, 7); decoder D3.

    Parameters
    ----------
    hierarchy : Hierarchy
    C : array-like, shape (n_nodes, n_leaves)
    pruning : {"auto", "strict", "soft", "none"}
        See :func:`~icml25.hier_decoding.decision_rules.node_cost_argmin`.
    """

    name = "node_cost"
    greater_is_better = False
    prediction_space = "node"

    def __init__(self, hierarchy: Hierarchy, C: Any, pruning: str = "auto"):
        super().__init__(hierarchy)
        C = check_array(C, "C", shape=(hierarchy.n_nodes, hierarchy.n_leaves))
        if pruning not in ("auto", "strict", "soft", "none"):
            raise ValueError(f"pruning must be one of 'auto', 'strict', 'soft', 'none', got {pruning!r}")
        self.cost_matrix = C
        self.pruning = pruning
        self._consts: PruningConstants | None | bool = False

    def _score_matrix(self, Y: np.ndarray) -> np.ndarray:
        return self.cost_matrix[self.hierarchy.indicator_to_node(Y)]

    def _score_nodes(self, nodes: np.ndarray) -> np.ndarray:
        return self.cost_matrix[nodes]

    @property
    def reasonableness(self) -> str | None:
        """``"strict"``, ``"soft"`` or None (see :func:`~icml25.hier_decoding.cost_pruning.reasonableness`)."""
        return reasonableness(self.cost_matrix, self.hierarchy)

    def pruning_constants(self) -> PruningConstants | None:
        """The cached D3 pruning constants used by :meth:`decode` (None when brute force is used)."""
        if self._consts is False:
            kind = self.reasonableness if self.pruning == "auto" else (
                None if self.pruning == "none" else self.pruning)
            self._consts = None if kind is None else pruning_constants(self.cost_matrix, self.hierarchy, kind)
        return self._consts  # type: ignore[return-value]

    def decode(self, leaf_probs: Any) -> np.ndarray:
        """D3: indicator of ``A(argmin_n Σ_l C(n,l) p(l))`` with candidate pruning when valid."""
        h = self.hierarchy
        consts = self.pruning_constants()
        if consts is None:
            nodes = node_cost_argmin(leaf_probs, h, self.cost_matrix, pruning="none")
        else:
            P = check_leaf_probs(leaf_probs, h.n_leaves)
            nodes = node_cost_argmin_pruned(P, h, self.cost_matrix, consts)
        return h.indicator(nodes)


class MistakeSeverity(NodeToLeafCost):
    """Tree distance ``d(n) + d(l) − 2 d(LCA(n, l))`` (spec §2.2, 4); optimum: deepest node with ``p > 1/2``."""

    name = "mistake_severity"

    def __init__(self, hierarchy: Hierarchy):
        h = hierarchy
        if not isinstance(h, Hierarchy):
            raise TypeError(f"hierarchy must be a Hierarchy, got {type(h).__name__}")
        lca_depth = h.depth[h.lca_matrix()]
        C = h.depth[:, None] + h.depth[None, : h.n_leaves] - 2 * lca_depth
        super().__init__(h, C.astype(np.float64), pruning="strict")

    def decode(self, leaf_probs: Any) -> np.ndarray:
        """D3 special case: ``A(n)`` of the deepest ``n`` with ``p(n) > 1/2`` (ties at 1/2 keep the parent)."""
        return self.hierarchy.indicator(deepest_above_half(leaf_probs, self.hierarchy))


class WuPalmer(NodeToLeafCost):
    """Wu-Palmer cost ``1 − 2 d(LCA(n,l)) / (d(n) + d(l))`` (spec §2.2, 5); decoder D3, soft pruning."""

    name = "wu_palmer"

    def __init__(self, hierarchy: Hierarchy, pruning: str = "auto"):
        h = hierarchy
        if not isinstance(h, Hierarchy):
            raise TypeError(f"hierarchy must be a Hierarchy, got {type(h).__name__}")
        lca_depth = h.depth[h.lca_matrix()].astype(np.float64)
        denom = (h.depth[:, None] + h.depth[None, : h.n_leaves]).astype(np.float64)  # > 0: a leaf is not the root
        super().__init__(h, 1.0 - 2.0 * lca_depth / denom, pruning=pruning)


class Zhao(NodeToLeafCost):
    """Zhao/Lin cost ``1 − 2 IC(LCA(n,l)) / (IC(n) + IC(l))``, ``IC(n) = ln(|L|/|L(n)|)`` (spec §2.2, 6).

    ``C(n, n) = 0``; ``C = 1`` where ``IC(n) + IC(l) = 0`` (the root). Decoder D3 (soft pruning when valid).
    """

    name = "zhao"

    def __init__(self, hierarchy: Hierarchy, pruning: str = "auto"):
        h = hierarchy
        if not isinstance(h, Hierarchy):
            raise TypeError(f"hierarchy must be a Hierarchy, got {type(h).__name__}")
        ic_lca = h.ic[h.lca_matrix()]
        denom = h.ic[:, None] + h.ic[None, : h.n_leaves]
        C = np.where(denom > 0, 1.0 - 2.0 * ic_lca / np.where(denom > 0, denom, 1.0), 1.0)
        C[np.arange(h.n_leaves), np.arange(h.n_leaves)] = 0.0
        super().__init__(h, C, pruning=pruning)


class LeafToLeafCost(HierarchicalMetric):
    """A user cost ``C(l', l)`` of predicting leaf ``l'`` for true leaf ``l`` (spec §2.2, 7); decoder D2.

    Parameters
    ----------
    hierarchy : Hierarchy
    C : array-like, shape (n_leaves, n_leaves)
    """

    name = "leaf_cost"
    greater_is_better = False
    prediction_space = "leaf"

    def __init__(self, hierarchy: Hierarchy, C: Any):
        super().__init__(hierarchy)
        C = check_array(C, "C", shape=(hierarchy.n_leaves, hierarchy.n_leaves))
        self.cost_matrix = C

    def _score_matrix(self, Y: np.ndarray) -> np.ndarray:
        nodes = self.hierarchy.indicator_to_node(Y)
        if (nodes >= self.hierarchy.n_leaves).any():
            raise ValueError("y_pred must predict leaves for a leaf-to-leaf cost; got an internal node")
        return self.cost_matrix[nodes]

    def _score_nodes(self, nodes: np.ndarray) -> np.ndarray:
        if (nodes >= self.hierarchy.n_leaves).any():
            raise ValueError("y_pred must predict leaves for a leaf-to-leaf cost; got an internal node")
        return self.cost_matrix[nodes]

    def decode(self, leaf_probs: Any) -> np.ndarray:
        """D2: indicator of ``A(argmin_{l'} Σ_l C(l', l) p(l))``."""
        return self.hierarchy.indicator(leaf_cost_argmin(leaf_probs, self.hierarchy, self.cost_matrix))
