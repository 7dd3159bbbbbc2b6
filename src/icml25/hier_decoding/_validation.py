"""Input checks shared by the decoders: probability matrices, predictions, positive scalars."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.validation import check_positive  # noqa: F401  (re-exported: the shared check)


def check_leaf_probs(leaf_probs: Any, n_leaves: int, atol: float = 1e-6, name: str = "leaf_probs") -> np.ndarray:
    """Return ``leaf_probs`` as a float64 array of shape (n_samples, n_leaves) after checking it.

    Rows must be finite, non-negative (within ``atol``) and sum to one within ``atol``; a 1-d input is one sample.
    Tiny negative entries (> -atol) are clipped to zero.
    """
    try:
        P = np.asarray(leaf_probs, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a numeric array of shape (n_samples, {n_leaves}), "
                        f"got {type(leaf_probs).__name__}") from None
    if P.ndim == 1:
        P = P[None, :]
    if P.ndim != 2 or P.shape[1] != n_leaves:
        raise ValueError(f"{name} must have shape (n_samples, {n_leaves}) (one column per leaf), got shape {P.shape}")
    if P.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one sample (row), got shape {P.shape}")
    if not np.isfinite(P).all():
        raise ValueError(f"{name} must be finite; got NaN or inf in {int((~np.isfinite(P)).sum())} entries")
    if P.size and P.min() < -atol:
        raise ValueError(f"{name} must be non-negative; got a minimum of {P.min():.3g}")
    sums = P.sum(axis=1)
    bad = np.abs(sums - 1.0) > atol
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} rows must sum to 1 (within {atol:g}); row {i} sums to {sums[i]:.6g} "
                         f"({int(bad.sum())} bad rows)")
    return np.clip(P, 0.0, None)


def check_indicator(y_pred: Any, n_nodes: int, name: str = "y_pred") -> np.ndarray:
    """Return a prediction as a float 0/1 array (n_samples, n_nodes).

    Accepts an indicator matrix or a 1-d integer array of node indices (single-node predictions are then
    encoded by the caller; here they are rejected so the caller can decide).
    """
    Y = np.asarray(y_pred)
    if Y.ndim == 1 and Y.shape[0] == n_nodes and Y.dtype == bool:
        Y = Y[None, :]
    if Y.ndim != 2 or Y.shape[1] != n_nodes or Y.shape[0] == 0:
        raise ValueError(f"{name} must be an indicator matrix of shape (n_samples, {n_nodes}) with n_samples >= 1 "
                         f"or a 1-d array of node indices, got shape {Y.shape}")
    if Y.dtype != bool:
        if not np.isin(Y, (0, 1)).all():
            raise ValueError(f"{name} indicator entries must be 0 or 1")
    return Y.astype(np.float64)
