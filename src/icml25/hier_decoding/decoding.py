"""The functional entry point ``decode(leaf_probs, hierarchy, metric)`` and the exhaustive oracle (spec §2.3, D6)."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from ._validation import check_leaf_probs
from .hierarchy import Hierarchy
from .metrics import Accuracy, Hamming, HFBeta, HierarchicalMetric, MistakeSeverity, WuPalmer, Zhao

__all__ = ["METRIC_NAMES", "get_metric", "decode", "decode_logits", "exhaustive_decode", "all_subsets"]

_HF_NAME = re.compile(r"hf(?:[_\- ]?beta)?[_\- =]?((?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)?")

#: metric names understood by :func:`get_metric`
METRIC_NAMES = ("accuracy", "hamming", "hf_0.5", "hf_1", "hf_2", "mistake_severity", "wu_palmer", "zhao")


def get_metric(metric: str | HierarchicalMetric, hierarchy: Hierarchy) -> HierarchicalMetric:
    """Resolve a metric name (see ``METRIC_NAMES``; ``"hf_<beta>"`` for any β > 0) or check a metric object.

    Parameters
    ----------
    metric : str or HierarchicalMetric
    hierarchy : Hierarchy
        The metric object must have been built on this hierarchy.

    Raises
    ------
    ValueError
        For an unknown name, or an hF name whose β is not a positive number (``"hf_-2"``, ``"hf_0"``).

    Examples
    --------
    >>> h = Hierarchy.from_paths(["a/x", "a/y", "b"])
    >>> get_metric("hf_2", h).beta, get_metric("hf-0.5", h).beta, get_metric("hf", h).beta
    (2.0, 0.5, 1.0)
    >>> get_metric("hf_-2", h)
    Traceback (most recent call last):
    ...
    ValueError: unknown metric 'hf_-2'; expected one of ...
    """
    if isinstance(metric, HierarchicalMetric):
        if metric.hierarchy is not hierarchy and metric.hierarchy.to_dict() != hierarchy.to_dict():
            raise ValueError("metric was built on a different hierarchy than the one given")
        return metric
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a metric name or a HierarchicalMetric, got {type(metric).__name__}")
    if not isinstance(hierarchy, Hierarchy):
        raise TypeError(f"hierarchy must be a Hierarchy, got {type(hierarchy).__name__}")
    key = metric.strip().lower()
    simple = {"accuracy": Accuracy, "hamming": Hamming, "mistake_severity": MistakeSeverity,
              "wu_palmer": WuPalmer, "zhao": Zhao}
    if key.replace("-", "_").replace(" ", "_") in simple:
        return simple[key.replace("-", "_").replace(" ", "_")](hierarchy)
    # hF_β: "hf", "hf_2", "hf-2", "hf 0.5", "hf_beta=2"; one separator, then an unsigned number (β > 0)
    match = _HF_NAME.fullmatch(key)
    if match:
        beta = float(match.group(1)) if match.group(1) else 1.0
        if not (math.isfinite(beta) and beta > 0):
            raise ValueError(f"metric {metric!r}: hF_β needs β > 0, got β = {beta:g}")
        return HFBeta(hierarchy, beta)
    raise ValueError(f"unknown metric {metric!r}; expected one of {', '.join(METRIC_NAMES)} (or 'hf_<beta>' "
                     "with beta > 0), or a HierarchicalMetric object")


def decode(leaf_probs: Any, hierarchy: Hierarchy, metric: str | HierarchicalMetric = "hf_1") -> np.ndarray:
    """Bayes-optimal decoding of leaf probabilities for ``metric`` (spec §2.5): a drop-in for ``argmax``.

    Parameters
    ----------
    leaf_probs : array-like, shape (n_samples, n_leaves)
        Calibrated leaf probabilities (rows sum to one), columns in the hierarchy's leaf order.
    hierarchy : Hierarchy
    metric : str or HierarchicalMetric
        The metric the prediction will be evaluated with.

    Returns
    -------
    ndarray of bool, shape (n_samples, n_nodes)
        Node-indicator matrix; ``hierarchy.indicator_to_node`` turns single-node predictions into node indices.

    Examples
    --------
    >>> h = Hierarchy.from_paths(["a/x", "a/y", "b"])
    >>> Y = decode([[0.3, 0.3, 0.4]], h, "mistake_severity")  # p(a) = 0.6 > 1/2
    >>> [h.names[n] for n in h.indicator_to_node(Y)]
    ['a']
    """
    return get_metric(metric, hierarchy).decode(leaf_probs)


def all_subsets(n_nodes: int) -> np.ndarray:
    """Every subset of ``n_nodes`` nodes as a (2^n_nodes, n_nodes) bool matrix (n_nodes ≤ 20)."""
    from icml25.core.validation import check_int

    n_nodes = check_int(n_nodes, "n_nodes", low=1, high=20)  # 2^n_nodes subsets
    codes = np.arange(2**n_nodes, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n_nodes)[None, :]) & 1).astype(bool)


def exhaustive_decode(leaf_probs: Any, metric: HierarchicalMetric, space: str = "nodes"
                      ) -> tuple[np.ndarray, np.ndarray]:
    """D6: exhaustive argmax of the expected metric over a candidate set — the test oracle.

    Parameters
    ----------
    leaf_probs : array-like, shape (n_samples, n_leaves)
    metric : HierarchicalMetric
    space : {"leaves", "nodes", "subsets"}
        Candidates: every leaf, every node (as ``A(n)``), or every subset of nodes (small trees only).

    Returns
    -------
    (best_indicator, best_expected) : ndarray (n_samples, n_nodes) of bool, ndarray (n_samples,)
        The best candidate (ties: first in enumeration order) and its expected score.
    """
    h = metric.hierarchy
    P = check_leaf_probs(leaf_probs, h.n_leaves)
    if space == "leaves":
        cands = h.ancestor_matrix[: h.n_leaves]
    elif space == "nodes":
        cands = h.ancestor_matrix
    elif space == "subsets":
        cands = all_subsets(h.n_nodes)
    else:
        raise ValueError(f"space must be 'leaves', 'nodes' or 'subsets', got {space!r}")
    S = metric._score_matrix(cands.astype(np.float64))  # (n_cands, n_leaves)
    expected = P @ S.T
    best = np.argmax(expected, axis=1) if metric.greater_is_better else np.argmin(expected, axis=1)
    return cands[best], expected[np.arange(P.shape[0]), best]


def decode_logits(logits: Any, hierarchy: Hierarchy, metric: str | HierarchicalMetric = "hf_1",
                  temperature: float = 1.0) -> Any:
    """Softmax of leaf ``logits`` (numpy array or torch tensor) then :func:`decode`; returns the input's type.

    Parameters
    ----------
    logits : ndarray or torch.Tensor, shape (n_samples, n_leaves)
    hierarchy : Hierarchy
    metric : str or HierarchicalMetric
    temperature : float
        Logits are divided by it before the softmax (temperature scaling for calibration).

    Returns
    -------
    ndarray of bool or torch.BoolTensor (CPU), shape (n_samples, n_nodes)
    """
    from ._validation import check_positive

    temperature = check_positive(temperature, "temperature")
    from icml25.core.validation import check_array

    if not isinstance(hierarchy, Hierarchy):
        raise TypeError(f"hierarchy must be a Hierarchy, got {type(hierarchy).__name__}")
    is_torch = hasattr(logits, "detach") and hasattr(logits, "cpu")
    z = check_array(logits.detach().cpu().double().numpy() if is_torch else logits, "logits",
                    shape=(None, hierarchy.n_leaves))
    get_metric(metric, hierarchy)  # a bad metric name fails before any work
    z = z / temperature
    z -= z.max(axis=1, keepdims=True)
    P = np.exp(z)
    P /= P.sum(axis=1, keepdims=True)
    Y = decode(P, hierarchy, metric)
    if is_torch:
        import torch

        return torch.from_numpy(Y)
    return Y
