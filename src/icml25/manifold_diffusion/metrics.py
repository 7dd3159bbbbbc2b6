"""Metrics of a network of estimates: mean-square deviation, disagreement, decibels."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _tree
from .manifold_base import Manifold

__all__ = ["msd", "disagreement", "to_db"]


def to_db(x: Any) -> np.ndarray:
    """``10 log10(x)`` (x is already a squared quantity: MSD or a likelihood gap)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 10.0 * np.log10(np.asarray(x, dtype=float))


def msd(manifold: Manifold, points: Any, target: Any) -> float:
    """Network mean-square deviation ``(1/K) Σ_k d²(w_k, w*)`` (spec §2.4; Grassmann: principal angles).

    Parameters
    ----------
    manifold : Manifold
    points : (K, ...) stacked estimates
    target : one point (the true solution, e.g. the top-r principal subspace)

    Returns
    -------
    float
    """
    k = _tree.leading_size(points)
    return float(np.mean(manifold.dist(points, _tree.broadcast(target, k)) ** 2))


def disagreement(manifold: Manifold, points: Any, iters: int = 30) -> float:
    """Fréchet variance of the network around its centroid: ``(1/K) Σ_k d²(w_k, w̄)`` (spec §2.7).

    ``w̄`` is the unweighted Fréchet mean of the K estimates (``iters`` Karcher iterations).
    """
    centroid = manifold.mean(points, iters=iters)
    return msd(manifold, points, centroid)
