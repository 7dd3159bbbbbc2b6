"""Median-of-means estimators: scalar/vector MoM, uniform MoM over a function class, the choice of K."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from icml25.core.seeding import check_random_state

__all__ = ["make_partition", "median_of_means", "block_means", "UniformMoM", "choose_K", "lower_median"]


def _check_K(K: Any, n: int) -> int:
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)):
        raise TypeError(f"K (number of blocks) must be an integer, got {type(K).__name__}")
    K = int(K)
    if K < 1 or K > n:
        raise ValueError(f"K (number of blocks) must be in [1, n] = [1, {n}], got {K}")
    return K


def make_partition(n: int, K: int, random_state: Any = None) -> np.ndarray:
    """A random partition of ``range(n)`` into ``K`` blocks of size ``m = n // K``.

    The ``n - K*m`` leftover indices (fewer than ``K``) are dropped, as in the paper's definition (spec §2.1).

    Returns
    -------
    ndarray of int, shape (K, m)
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    K = _check_K(K, n)
    rng = check_random_state(random_state)
    m = n // K
    return rng.permutation(n)[: K * m].reshape(K, m)


def lower_median(values: np.ndarray, axis: int = 0) -> np.ndarray:
    """The lower median along ``axis``: the ``ceil(K/2)``-th order statistic (one of the values for even K)."""
    values = np.asarray(values)
    K = values.shape[axis]
    k = (K - 1) // 2
    return np.take(np.partition(values, k, axis=axis), k, axis=axis)


def block_means(values: np.ndarray, partition: np.ndarray) -> np.ndarray:
    """Block means ``mu_k = (1/m) sum_{i in B_k} values_i`` (spec §2.1), shape ``(K,) + values.shape[1:]``."""
    values = np.asarray(values, dtype=float)
    K, m = partition.shape
    if values.ndim == 1 or values[0].size <= 8:
        return values[partition].mean(axis=1)
    # many columns: average with a sparse (K, n) matrix instead of gathering a (K, m, ...) copy
    from scipy.sparse import csr_matrix

    P = csr_matrix((np.full(K * m, 1.0 / m), partition.ravel(), np.arange(0, K * m + 1, m)),
                   shape=(K, values.shape[0]))
    flat = values.reshape(values.shape[0], -1)
    return np.asarray(P @ flat).reshape((K,) + values.shape[1:])


def _validate_partition(partition: Any, n: int) -> np.ndarray:
    part = np.asarray(partition)
    if part.ndim != 2 or not np.issubdtype(part.dtype, np.integer):
        raise ValueError(f"partition must be an integer array of shape (K, m), got shape {part.shape}, "
                         f"dtype {part.dtype}")
    if part.size and (part.min() < 0 or part.max() >= n):
        raise ValueError(f"partition indices must lie in [0, {n}), got range [{part.min()}, {part.max()}]")
    if np.unique(part).size != part.size:
        raise ValueError("partition blocks must be disjoint (an index appears twice)")
    return part


def _check_finite(x: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or inf; remove or impute them before estimating means")


def median_of_means(x: Any, K: int, axis: int = 0, rng: Any = None, partition: Any = None) -> Any:
    """Median-of-means estimate of the mean of ``x`` along ``axis`` (spec §2.1).

    ``MoM_K = median_k (1/m) sum_{i in B_k} x_i`` with a random partition into ``K`` blocks of size
    ``m = floor(n/K)``; the lower median is used for even ``K``. ``K=1`` is the empirical mean (of the
    ``n`` points); ``K=n`` is the (lower) sample median.

    Parameters
    ----------
    x : array_like
        Sample; the mean is taken along ``axis`` (length ``n``).
    K : int
        Number of blocks, ``1 <= K <= n``.
    axis : int
        Sample axis.
    rng : None, int or numpy Generator
        Randomness of the partition (ignored when ``partition`` is given).
    partition : array of int, shape (K, m), optional
        A fixed partition (e.g. from :func:`make_partition`), for estimates that must share it.

    Returns
    -------
    float or ndarray
        The estimate, with ``axis`` removed.
    """
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 0:
        raise ValueError("x must have at least one dimension (a sample)")
    arr = np.moveaxis(arr, axis, 0)
    n = arr.shape[0]
    _check_finite(arr, "x")
    if partition is None:
        partition = make_partition(n, K, rng)
    else:
        partition = _validate_partition(partition, n)
        if partition.shape[0] != _check_K(K, n):
            raise ValueError(f"partition has {partition.shape[0]} blocks but K={K}")
    est = lower_median(block_means(arr, partition), axis=0)
    return float(est) if np.ndim(est) == 0 else est


class UniformMoM:
    """Uniform median-of-means over a function class, from the 'Uniform Mean Estimation for Heavy-Tailed
    Distributions via Median-of-Means' (ICML 2025) paper.

    One random partition is drawn at :meth:`fit` and used for every function, which is what the uniform
    guarantee ``sup_f |MoM_K(f) - E f| <= eps`` is about (spec §2.1).

    Parameters
    ----------
    K : int
        Number of blocks.
    random_state : None, int or Generator
        Seed of the partition.

    Attributes
    ----------
    partition_ : ndarray, shape (K, m)
    n_samples_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_t(3, size=(1000, 2))
    >>> est = UniformMoM(K=10, random_state=0).fit(X)
    >>> est.estimate(lambda X: X).shape
    (2,)
    """

    def __init__(self, K: int, random_state: Any = None) -> None:
        self.K = K
        self.random_state = random_state

    def fit(self, X: Any) -> UniformMoM:
        """Store the sample ``X`` (shape ``(n, ...)``) and draw the common partition."""
        X = np.asarray(X, dtype=float)
        if X.ndim == 0:
            raise ValueError("X must be a sample with n rows")
        _check_finite(X, "X")
        self.X_ = X
        self.n_samples_ = X.shape[0]
        self.partition_ = make_partition(self.n_samples_, self.K, self.random_state)
        return self

    def estimate(self, funcs: Callable[[np.ndarray], np.ndarray] | Sequence[Callable[[np.ndarray], Any]]
                 ) -> np.ndarray:
        """MoM estimates of ``E f`` for every ``f`` in the class, all with the stored partition.

        Parameters
        ----------
        funcs : callable or list of callables
            A callable mapping ``X`` to an ``(n,)`` or ``(n, n_functions)`` array of values, or a list of
            callables each mapping ``X`` to ``(n,)``.

        Returns
        -------
        ndarray, shape (n_functions,)
        """
        if not hasattr(self, "partition_"):
            raise RuntimeError("call fit(X) before estimate(funcs)")
        n = self.n_samples_
        if callable(funcs):
            V = np.asarray(funcs(self.X_), dtype=float)
            if V.ndim == 1:
                V = V[:, None]
        else:
            cols = [np.asarray(f(self.X_), dtype=float) for f in funcs]
            bad = [i for i, c in enumerate(cols) if c.shape != (n,)]
            if bad:
                raise ValueError(f"function {bad[0]} returned shape {cols[bad[0]].shape}, expected ({n},)")
            V = np.stack(cols, axis=1)
        if V.ndim != 2 or V.shape[0] != n:
            raise ValueError(f"the function class must return an array of shape ({n},) or ({n}, n_functions), "
                             f"got {V.shape}")
        _check_finite(V, "function values")
        return lower_median(block_means(V, self.partition_), axis=0)


def choose_K(delta: float, n_functions: int | None = None, complexity: float | None = None) -> int:
    """Number of blocks for confidence ``1 - delta`` (spec §2.1).

    ``K = ceil(8 ln(N/delta))`` for a finite class of size ``N`` (``N = 1`` for one function); with a
    ``complexity`` term for an infinite class, ``K = ceil(8 (complexity + ln(1/delta)))``.
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if complexity is not None:
        if complexity < 0:
            raise ValueError(f"complexity must be >= 0, got {complexity}")
        return int(math.ceil(8 * (complexity + math.log(1 / delta))))
    N = 1 if n_functions is None else int(n_functions)
    if N < 1:
        raise ValueError(f"n_functions must be >= 1, got {n_functions}")
    return int(math.ceil(8 * math.log(N / delta)))
