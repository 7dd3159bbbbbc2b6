"""Median-of-means estimators: scalar/vector MoM, uniform MoM over a function class, the choice of K."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_array, check_int, check_probability, check_real

__all__ = ["make_partition", "median_of_means", "block_means", "UniformMoM", "choose_K", "lower_median"]


def _check_K(K: Any, n: int, sample: str = "the sample") -> int:
    """``K`` (number of blocks) an integer in ``[1, n]``, ``n`` the length of ``sample``."""
    K = check_int(K, "K", low=1)
    if K > n:
        raise ValueError(f"K (number of blocks) must be in [1, n] = [1, {n}], where n = {n} is the length of "
                         f"{sample}; got {K}")
    return K


def make_partition(n: int, K: int, random_state: Any = None) -> np.ndarray:
    """A random partition of ``range(n)`` into ``K`` blocks of size ``m = n // K``.

    The ``n - K*m`` leftover indices (fewer than ``K``) are dropped, as in the paper's definition (spec §2.1).

    Returns
    -------
    ndarray of int, shape (K, m)

    Examples
    --------
    >>> make_partition(10, 3, random_state=0).shape
    (3, 3)
    """
    n = check_int(n, "n", low=1)
    K = _check_K(K, n)
    rng = check_random_state(random_state)
    m = n // K
    return rng.permutation(n)[: K * m].reshape(K, m)


def lower_median(values: np.ndarray, axis: int = 0) -> np.ndarray:
    """The lower median along ``axis``: the ``ceil(K/2)``-th order statistic (one of the values for even K).

    Examples
    --------
    >>> float(lower_median(np.array([4.0, 1.0, 3.0, 2.0])))
    2.0
    """
    values = check_array(values, "values", ndim=tuple(range(1, 33)))
    axis = check_int(axis, "axis", low=-values.ndim, high=values.ndim - 1)
    return _lower_median(values, axis)


def _lower_median(values: np.ndarray, axis: int = 0) -> np.ndarray:
    """:func:`lower_median` without input checks (inner loops)."""
    K = values.shape[axis]
    k = (K - 1) // 2
    return np.take(np.partition(values, k, axis=axis), k, axis=axis)


def block_means(values: np.ndarray, partition: np.ndarray) -> np.ndarray:
    """Block means ``mu_k = (1/m) sum_{i in B_k} values_i`` (spec §2.1), shape ``(K,) + values.shape[1:]``.

    Examples
    --------
    >>> block_means(np.arange(6.0), np.array([[0, 1], [2, 3], [4, 5]])).tolist()
    [0.5, 2.5, 4.5]
    """
    values = check_array(values, "values", ndim=tuple(range(1, 33)))
    partition = _validate_partition(partition, values.shape[0])
    return _block_means(values, partition)


def _block_means(values: np.ndarray, partition: np.ndarray) -> np.ndarray:
    """:func:`block_means` without input checks (inner loops)."""
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
    part = check_array(partition, "partition", ndim=2, dtype=int)
    if part.size and (part.min() < 0 or part.max() >= n):
        raise ValueError(f"partition indices must lie in [0, {n}), got range [{part.min()}, {part.max()}]")
    if np.unique(part).size != part.size:
        raise ValueError("partition blocks must be disjoint (an index appears twice)")
    return part


def _check_finite(x: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite: it contains NaN or inf; remove or impute them before "
                         "estimating means")


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

    Examples
    --------
    >>> x = np.r_[np.zeros(99), 1e6]  # one gross outlier
    >>> median_of_means(x, K=9, rng=0)
    0.0
    """
    arr = check_array(x, "x", ndim=tuple(range(1, 33)))
    axis = check_int(axis, "axis", low=-arr.ndim, high=arr.ndim - 1)
    arr = np.moveaxis(arr, axis, 0)
    n = arr.shape[0]
    K = _check_K(K, n, f"x along axis {axis}")
    if partition is None:
        partition = make_partition(n, K, rng)
    else:
        partition = _validate_partition(partition, n)
        if partition.shape[0] != K:
            raise ValueError(f"partition has {partition.shape[0]} blocks but K={K}")
    est = _lower_median(_block_means(arr, partition), axis=0)
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
        self.K = check_int(K, "K", low=1)
        self.random_state = random_state

    def fit(self, X: Any) -> UniformMoM:
        """Store the sample ``X`` (shape ``(n, ...)``) and draw the common partition."""
        X = check_array(X, "X", ndim=tuple(range(1, 33)))
        self.X_ = X
        self.n_samples_ = X.shape[0]
        _check_K(self.K, self.n_samples_, "X (its rows)")
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
        if not callable(funcs) and (isinstance(funcs, (str, bytes)) or not isinstance(funcs, Sequence)
                                    or not funcs or not all(callable(f) for f in funcs)):
            raise TypeError(f"funcs must be a callable or a non-empty list of callables, got {funcs!r}")
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
        _check_finite(V, "funcs values")
        return _lower_median(_block_means(V, self.partition_), axis=0)


def choose_K(delta: float, n_functions: int | None = None, complexity: float | None = None) -> int:
    """Number of blocks for confidence ``1 - delta`` (spec §2.1).

    ``K = ceil(8 ln(N/delta))`` for a finite class of size ``N`` (``N = 1`` for one function); with a
    ``complexity`` term for an infinite class, ``K = ceil(8 (complexity + ln(1/delta)))``.

    Examples
    --------
    >>> choose_K(0.05), choose_K(0.01, n_functions=1000)
    (24, 93)
    """
    delta = check_probability(delta, "delta", open_low=True, open_high=True)
    if complexity is not None:
        complexity = check_real(complexity, "complexity", low=0.0)
        return int(math.ceil(8 * (complexity + math.log(1 / delta))))
    N = 1 if n_functions is None else check_int(n_functions, "n_functions", low=1)
    return int(math.ceil(8 * math.log(N / delta)))
