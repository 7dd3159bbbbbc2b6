"""Small statistics shared by reproductions: percentile-bootstrap confidence intervals over test items."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["bootstrap_ci"]


def bootstrap_ci(a: Any, b: Any = None, n_boot: int = 2000, level: float = 0.95, seed: int = 0
                 ) -> tuple[float, float, float]:
    """Mean of ``a`` (or of the paired difference ``a - b``) and its percentile-bootstrap interval.

    Items (columns) are resampled with replacement; repeated runs on the same items (rows, e.g. evaluation
    seeds) are averaged per item first, so the interval reflects the finite test set, paired across methods.

    Parameters
    ----------
    a : array-like, shape (n_items,) or (n_runs, n_items)
        Per-item outcomes (e.g. 0/1 correctness) of method A.
    b : array-like of the same shape, optional
        Outcomes of method B on the same items and runs; the statistic is then ``mean(a - b)``.
    n_boot : int
        Bootstrap resamples (>= 100).
    level : float
        Two-sided coverage in (0, 1).
    seed : int
        Seed of the resampling.

    Returns
    -------
    (estimate, low, high) : tuple of float
        In the units of ``a`` (multiply 0/1 outcomes by 100 for percentage points).
    """
    x = np.atleast_2d(np.asarray(a, dtype=float))
    if b is not None:
        y = np.atleast_2d(np.asarray(b, dtype=float))
        if y.shape != x.shape:
            raise ValueError(f"a and b must have the same shape (runs, items), got {x.shape} and {y.shape}")
        x = x - y
    if x.ndim != 2 or x.shape[1] == 0:
        raise ValueError(f"a must be (n_items,) or (n_runs, n_items) with at least one item, got shape {x.shape}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n_boot < 100:
        raise ValueError(f"n_boot must be >= 100, got {n_boot}")
    per_item = x.mean(axis=0)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, per_item.size, size=(n_boot, per_item.size))
    boots = per_item[idx].mean(axis=1)
    lo, hi = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return float(per_item.mean()), float(lo), float(hi)
