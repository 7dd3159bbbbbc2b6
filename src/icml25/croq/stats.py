"""Paired comparisons of two answer rules on the same questions: bootstrap CI and paired t-test (spec §2.3)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.stats import bootstrap_ci
from icml25.core.validation import check_array, check_int, check_probability

__all__ = ["paired_bootstrap_ci", "paired_t_test"]


def _pair(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    x, y = check_array(a, "a", ndim=1), check_array(b, "b", ndim=1)
    if x.shape != y.shape:
        raise ValueError(f"a and b must be non-empty 1-D arrays of the same length, got {x.shape} and {y.shape}")
    return x, y


def paired_bootstrap_ci(a: Any, b: Any, n_boot: int = 2000, level: float = 0.95,
                        seed: int = 0) -> tuple[float, float, float]:
    """Mean of ``b - a`` and its percentile bootstrap confidence interval (questions resampled in pairs).

    :func:`icml25.core.stats.bootstrap_ci` of ``(b, a)``, after checking that both are 1-D and of equal length.

    Parameters
    ----------
    a, b : array-like, shape (n,)
        Per-question outcomes (e.g. 0/1 correctness) of the baseline and the method.
    n_boot : int
        Bootstrap resamples.
    level : float
        Confidence level.
    seed : int
        Seed of the resampling.

    Returns
    -------
    (mean, low, high) : tuple of float
    """
    x, y = _pair(a, b)
    n_boot = check_int(n_boot, "n_boot", low=1)
    level = check_probability(level, "level", open_low=True, open_high=True)
    seed = check_int(seed, "seed", low=0)
    return bootstrap_ci(y, x, n_boot=n_boot, level=level, seed=seed)  # core's sign is first - second: b - a


def paired_t_test(a: Any, b: Any) -> float:
    """Two-sided p-value of the paired t-test of ``b - a`` (1.0 when all differences are equal to 0)."""
    from scipy import stats

    x, y = _pair(a, b)
    d = y - x
    if np.allclose(d, d[0]):
        return 1.0 if d[0] == 0 else 0.0
    return float(stats.ttest_rel(y, x).pvalue)
