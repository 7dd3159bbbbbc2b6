"""Empirical pass@k from per-problem success counts: the unbiased estimator, curves and bootstrap intervals.

Problem ``i`` was attempted ``n_i`` times with ``c_i`` successes. The unbiased estimator of its pass@k (Chen et
al. 2021) is ``1 - C(n_i - c_i, k) / C(n_i, k)`` for ``k <= n_i``; coverage is its mean over problems. Everything
is computed in log space with ``gammaln`` so that ``n = 10^4`` (or millions) is exact to ~1e-12.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import gammaln

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_int, check_probability

__all__ = ["validate_counts", "validate_ks", "pass_at_k", "coverage_curve", "bootstrap_ci", "log_spaced_ks",
           "subsample_counts"]


def _as_int_array(x: Any, name: str) -> np.ndarray:
    """Convert ``x`` to an int64 array, refusing non-integer, non-finite or non-numeric values."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be numeric (integer counts), got the string {x!r}")
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric (integer counts), got {type(x).__name__}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite integers, got NaN or infinity")
    if np.any(arr != np.round(arr)):
        bad = arr[arr != np.round(arr)].ravel()[0]
        raise ValueError(f"{name} must hold integer counts, got the non-integer value {bad!r}")
    return arr.astype(np.int64)


def validate_counts(n: Any, c: Any) -> tuple[np.ndarray, np.ndarray]:
    """Check per-problem attempt counts ``n`` and success counts ``c`` and return them as 1-D int arrays.

    Parameters
    ----------
    n : int or array-like of int, shape (n_problems,)
        Attempts per problem (a scalar is broadcast to every problem).
    c : array-like of int, shape (n_problems,)
        Successes per problem, ``0 <= c_i <= n_i``.

    Returns
    -------
    n, c : ndarray of int64, shape (n_problems,)

    Raises
    ------
    ValueError
        Empty problem set, negative or non-integer counts, ``c_i > n_i`` or ``n_i < 1``.
    """
    c_arr = np.atleast_1d(_as_int_array(c, "c"))
    n_arr = np.atleast_1d(_as_int_array(n, "n"))
    if c_arr.ndim != 1:
        raise ValueError(f"c must be 1-D (one count per problem), got shape {c_arr.shape}")
    if c_arr.size == 0:
        raise ValueError("c is empty: need at least one problem")
    if n_arr.size == 1:
        n_arr = np.full_like(c_arr, n_arr[0])
    if n_arr.shape != c_arr.shape:
        raise ValueError(f"n and c must have the same length, got {n_arr.shape} and {c_arr.shape}")
    if np.any(n_arr < 1):
        raise ValueError(f"n must be >= 1 attempts per problem, got min {n_arr.min()}")
    if np.any(c_arr < 0):
        raise ValueError(f"c must be non-negative success counts, got min {c_arr.min()}")
    if np.any(c_arr > n_arr):
        i = int(np.argmax(c_arr > n_arr))
        raise ValueError(f"c must not exceed n: problem {i} has c={c_arr[i]} > n={n_arr[i]}")
    return n_arr, c_arr


def validate_ks(ks: Any, name: str = "ks", integer: bool = True) -> np.ndarray:
    """Check numbers of attempts ``ks`` (integers >= 1, or reals > 0 when not ``integer``); return a 1-D float array."""
    if isinstance(ks, (str, bytes)):
        raise TypeError(f"{name} must be numbers of attempts, got the string {ks!r}")
    try:
        arr = np.atleast_1d(np.asarray(ks, dtype=float))
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numbers of attempts, got {type(ks).__name__}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D list of attempt counts, got shape {arr.shape}")
    low_ok = arr >= 1 if integer else arr > 0
    if not np.all(np.isfinite(arr)) or not np.all(low_ok):
        raise ValueError(f"{name} must be finite and {'>= 1' if integer else '> 0'}, got min {np.nanmin(arr)!r}")
    if integer and np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be integers, got {arr[arr != np.round(arr)][0]!r}")
    return arr


def pass_at_k(n: Any, c: Any, k: Any) -> np.ndarray:
    """Unbiased per-problem pass@k estimator ``1 - C(n-c, k) / C(n, k)`` (Chen et al. 2021; spec 2.4-1).

    Parameters
    ----------
    n : int or array-like of int, shape (n_problems,)
        Attempts per problem.
    c : array-like of int, shape (n_problems,)
        Successes per problem.
    k : int or array-like of int, shape (n_k,)
        Numbers of attempts, ``1 <= k <= min(n)``.

    Returns
    -------
    ndarray, shape (n_problems,) for scalar ``k``, else (n_problems, n_k)
        Probability that at least one of ``k`` attempts drawn without replacement from the ``n`` is correct.

    Raises
    ------
    ValueError
        Invalid counts (see :func:`validate_counts`) or ``k > n_i`` for some problem (the estimator is
        undefined there; use a fitted law to extrapolate).

    Examples
    --------
    >>> round(float(pass_at_k(10, [3], 1)[0]), 6)
    0.3
    >>> round(float(pass_at_k(4, [1], 2)[0]), 6)
    0.5
    """
    n_arr, c_arr = validate_counts(n, c)
    scalar = np.ndim(k) == 0
    ks = validate_ks(k, "k")
    if np.any(ks[None, :] > n_arr[:, None]):
        raise ValueError(f"k must be <= the attempts n of every problem (unbiased estimator), got max k = "
                         f"{ks.max():g} > min n = {n_arr.min()}")
    nn = n_arr[:, None].astype(float)
    ff = (n_arr - c_arr)[:, None].astype(float)
    kk = ks[None, :]
    out = np.ones((n_arr.size, ks.size))
    ok = ff >= kk  # otherwise every k-subset contains a success
    okb = np.broadcast_to(ok, out.shape)
    f_b, n_b, k_b = (np.broadcast_to(a, out.shape)[okb] for a in (ff, nn, kk))
    # log C(f, k) - log C(n, k) = lnG(f+1) - lnG(f-k+1) - lnG(n+1) + lnG(n-k+1)
    log_ratio = gammaln(f_b + 1) - gammaln(f_b - k_b + 1) - gammaln(n_b + 1) + gammaln(n_b - k_b + 1)
    out[okb] = np.clip(-np.expm1(log_ratio), 0.0, 1.0)
    out[np.broadcast_to(c_arr[:, None] == 0, out.shape)] = 0.0  # exact: no success, no coverage
    return out[:, 0] if scalar else out


def coverage_curve(n: Any, c: Any, ks: Any) -> np.ndarray:
    """Coverage ``pass@k = mean_i pass_i@k`` from per-problem counts (spec 2.1, estimated as in 2.4-1).

    Parameters
    ----------
    n, c : array-like of int, shape (n_problems,)
        Attempts and successes per problem (``n`` may differ between problems).
    ks : array-like of int, shape (n_k,)
        Numbers of attempts, each ``<= min(n)``.

    Returns
    -------
    ndarray, shape (n_k,)
        Empirical coverage at each k.
    """
    ks = validate_ks(ks, "ks")
    return np.asarray(pass_at_k(n, c, ks)).mean(axis=0)


def bootstrap_ci(n: Any, c: Any, ks: Any, n_boot: int = 1000, level: float = 0.95,
                 random_state: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile bootstrap interval for coverage, resampling problems with replacement.

    Parameters
    ----------
    n, c : array-like of int, shape (n_problems,)
        Attempts and successes per problem.
    ks : array-like of int, shape (n_k,)
        Numbers of attempts (each ``<= min(n)``).
    n_boot : int
        Bootstrap replicates.
    level : float
        Two-sided confidence level in (0, 1).
    random_state : None, int or numpy Generator
        Seed of the resampling.

    Returns
    -------
    estimate, low, high : ndarray, shape (n_k,)
        Coverage on the full problem set and the interval bounds.
    """
    n_boot = check_int(n_boot, "n_boot", low=1)
    level = check_probability(level, "level", open_low=True, open_high=True)
    per_problem = np.asarray(pass_at_k(n, c, validate_ks(ks, "ks")))
    rng = check_random_state(random_state)
    m = per_problem.shape[0]
    idx = rng.integers(0, m, size=(int(n_boot), m))
    boots = per_problem[idx].mean(axis=1)  # (n_boot, n_k)
    a = (1.0 - float(level)) / 2.0
    low, high = np.quantile(boots, [a, 1.0 - a], axis=0)
    return per_problem.mean(axis=0), low, high


def log_spaced_ks(k_max: int, num: int = 41, k_min: int = 1) -> np.ndarray:
    """``num`` log-spaced integer attempt counts in ``[k_min, k_max]`` (duplicates after rounding removed)."""
    k_min = check_int(k_min, "k_min", low=1)
    k_max = check_int(k_max, "k_max", low=k_min)
    num = check_int(num, "num", low=1)
    ks = np.unique(np.round(np.logspace(np.log10(k_min), np.log10(k_max), int(num))).astype(np.int64))
    return ks


def subsample_counts(n: Any, c: Any, n_sub: int, random_state: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Counts of a random subset of ``n_sub`` of each problem's attempts (hypergeometric, without replacement).

    Parameters
    ----------
    n, c : array-like of int, shape (n_problems,)
        Attempts and successes per problem.
    n_sub : int
        Attempts kept per problem (``1 <= n_sub <= min(n)``).
    random_state : None, int or numpy Generator
        Seed.

    Returns
    -------
    n_sub, c_sub : ndarray of int64, shape (n_problems,)
    """
    n_arr, c_arr = validate_counts(n, c)
    n_sub = check_int(n_sub, "n_sub", low=1, high=int(n_arr.min()))  # at most min(n) attempts
    rng = check_random_state(random_state)
    c_sub = rng.hypergeometric(c_arr, n_arr - c_arr, int(n_sub))
    return np.full_like(n_arr, int(n_sub)), c_sub.astype(np.int64)
