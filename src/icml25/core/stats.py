"""Small statistics shared by reproductions: percentile-bootstrap confidence intervals over test items."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["bootstrap_ci"]

#: resampled indices held in memory at once (rows of ``n_items`` indices are drawn in chunks of this many elements)
_CHUNK_ELEMENTS = 1 << 22


def bootstrap_ci(a: Any, b: Any = None, n_boot: int = 2000, level: float = 0.95,
                 seed: int | np.random.Generator = 0, *,
                 quantiles: tuple[float, float] | None = None) -> tuple[float, float, float]:
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
        Bootstrap resamples (>= 1; a usable interval needs a few hundred at least).
    level : float
        Two-sided coverage in (0, 1): the quantiles ``(1 - level) / 2`` and ``(1 + level) / 2`` are returned.
    seed : int or numpy Generator
        Seed of the resampling; a ``np.random.Generator`` is used as it is (its stream continues, so several
        intervals can share one stream).
    quantiles : (float, float), optional
        The two quantiles of the bootstrap distribution to return instead of those of ``level``. Written out they
        are exact: ``(0.025, 0.975)`` differs from ``level=0.95`` in the 16th digit, since ``(1 - 0.95) / 2`` is
        ``0.025000000000000022`` in floating point.

    Returns
    -------
    (estimate, low, high) : tuple of float
        In the units of ``a`` (multiply 0/1 outcomes by 100 for percentage points).

    Notes
    -----
    The sign convention is ``a - b``: pass ``(method, baseline)`` for the gain of the method. Resamples are drawn in
    chunks of rows (memory ``O(chunk x n_items)``), which gives the same draws as one ``(n_boot, n_items)`` call.

    Examples
    --------
    >>> est, lo, hi = bootstrap_ci([1, 1, 0, 1, 0, 1, 1, 1], [0, 1, 0, 0, 0, 1, 0, 1], n_boot=500, seed=0)
    >>> round(est, 3), lo <= est <= hi
    (0.375, True)
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
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be an integer >= 1, got {n_boot!r}")
    if quantiles is None:
        quantiles = ((1 - level) / 2, (1 + level) / 2)
    elif len(quantiles) != 2 or not 0.0 <= quantiles[0] <= quantiles[1] <= 1.0:
        raise ValueError(f"quantiles must be (low, high) with 0 <= low <= high <= 1, got {quantiles!r}")
    per_item = x.mean(axis=0)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n_boot = int(n_boot)
    chunk = max(1, _CHUNK_ELEMENTS // per_item.size)
    boots = np.empty(n_boot)
    for start in range(0, n_boot, chunk):
        idx = rng.integers(0, per_item.size, size=(min(chunk, n_boot - start), per_item.size))
        boots[start:start + idx.shape[0]] = per_item[idx].mean(axis=1)
    lo, hi = np.quantile(boots, list(quantiles))
    return float(per_item.mean()), float(lo), float(hi)
