"""Metrics of a network of estimates: mean-square deviation, disagreement, decibels."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _tree
from .manifold_base import Manifold

__all__ = ["msd", "disagreement", "to_db"]


def to_db(x: Any) -> np.ndarray:
    """``10 log10(x)`` (x is already a squared quantity: MSD or a likelihood gap), any shape.

    NaN/inf in ``x`` are rejected (ValueError); ``0`` gives ``-inf`` and a negative value NaN (a likelihood gap
    below zero has no dB value).
    """
    from icml25.core.validation import check_array

    arr = check_array(x, "x", min_size=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 10.0 * np.log10(arr)


def _check_stack(manifold: Manifold, points: Any, name: str, stacked: bool = True) -> Any:
    """``points`` as finite arrays shaped ``(K,) + point_shape`` (``stacked``) or ``point_shape``, per factor."""
    from icml25.core.validation import check_array

    if not isinstance(manifold, Manifold):
        raise TypeError(f"manifold must be a Manifold, got {type(manifold).__name__}")
    shapes = _tree.tree_leaves(manifold.point_shape_tree())
    leaves = _tree.tree_leaves(points)
    if len(leaves) != len(shapes):
        raise ValueError(f"{name} must have {len(shapes)} part(s) for {manifold!r}, got {len(leaves)}")
    out = []
    for leaf, shp in zip(leaves, shapes, strict=True):
        want = ((None,) if stacked else ()) + tuple(np.shape(shp))
        out.append(check_array(leaf, name, shape=want))
    if stacked and len({a.shape[0] for a in out}) > 1:
        raise ValueError(f"{name}: every part must stack the same number of agents")
    return tuple(out) if isinstance(points, (tuple, list)) else out[0]


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
    points = _check_stack(manifold, points, "points")
    target = _check_stack(manifold, target, "target", stacked=False)
    k = _tree.leading_size(points)
    return float(np.mean(manifold.dist(points, _tree.broadcast(target, k)) ** 2))


def disagreement(manifold: Manifold, points: Any, iters: int = 30) -> float:
    """Fréchet variance of the network around its centroid: ``(1/K) Σ_k d²(w_k, w̄)`` (spec §2.7).

    ``w̄`` is the unweighted Fréchet mean of the K estimates (``iters`` Karcher iterations).
    """
    from icml25.core.validation import check_int

    points = _check_stack(manifold, points, "points")
    centroid = manifold.mean(points, iters=check_int(iters, "iters", low=1))
    return msd(manifold, points, centroid)
