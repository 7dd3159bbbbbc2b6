"""MoM k-means: centres minimising the median-of-means estimate of the k-means risk (spec §2.3)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_array, check_int, check_option, precheck_sklearn_X

from .estimators import _block_means, _lower_median, _validate_partition, make_partition

__all__ = ["MoMKMeans", "kmeans_losses", "mom_kmeans_risk"]

_ALGORITHMS = ("mom-lloyd", "block-median", "candidates")


def _sq_dists(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    if len(C) <= 32:
        # few centres: one pass per centre beats a thin GEMM (and is exact, no cancellation)
        D = np.empty((len(X), len(C)))
        for j, c in enumerate(C):
            diff = X - c
            D[:, j] = np.einsum("ij,ij->i", diff, diff)
        return D
    d = (X * X).sum(1)[:, None] - 2.0 * X @ C.T + (C * C).sum(1)[None, :]
    return np.maximum(d, 0.0)


def _check_points(X: Any, centers: Any) -> tuple[np.ndarray, np.ndarray]:
    X = check_array(X, "X", ndim=2)
    centers = check_array(centers, "centers", ndim=2)
    if centers.shape[1] != X.shape[1]:
        raise ValueError(f"centers must have X's {X.shape[1]} columns, got shape {centers.shape}")
    return X, centers


def kmeans_losses(X: Any, centers: Any) -> np.ndarray:
    """Per-point k-means loss ``l_C(x) = min_j ||x - c_j||^2`` of ``X`` (n, d) for ``centers`` (k, d); shape ``(n,)``.

    Examples
    --------
    >>> kmeans_losses(np.array([[0.0, 0.0], [3.0, 4.0]]), np.array([[0.0, 0.0]])).tolist()
    [0.0, 25.0]
    """
    X, centers = _check_points(X, centers)
    return _kmeans_losses(X, centers)


def _kmeans_losses(X: np.ndarray, centers: np.ndarray) -> np.ndarray:
    return _sq_dists(X, centers).min(axis=1)


def mom_kmeans_risk(X: Any, centers: Any, partition: Any) -> float:
    """``MoM_K(l_C)`` with a given partition (K, m) of the rows of ``X`` (spec §2.3)."""
    X, centers = _check_points(X, centers)
    partition = _validate_partition(partition, X.shape[0])
    return _mom_kmeans_risk(X, centers, partition)


def _mom_kmeans_risk(X: np.ndarray, centers: np.ndarray, partition: np.ndarray) -> float:
    return float(_lower_median(_block_means(_kmeans_losses(X, centers), partition)))


def _kmeanspp(X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    centers = [X[rng.integers(len(X))]]
    d = _sq_dists(X, np.array(centers))[:, 0]
    for _ in range(1, k):
        total = d.sum()
        idx = rng.choice(len(X), p=d / total) if total > 0 else rng.integers(len(X))
        centers.append(X[idx])
        d = np.minimum(d, _sq_dists(X, X[idx][None])[:, 0])
    return np.array(centers)


def _mom_lloyd(X: np.ndarray, k: int, K: int, max_iter: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    n = len(X)
    seed_size = min(n, max(n // K, 5 * k))
    C = _kmeanspp(X[rng.choice(n, size=seed_size, replace=False)], k, rng)
    small = np.zeros(k, dtype=int)
    prev = None
    for it in range(max_iter):
        labels = _sq_dists(X, C).argmin(1)
        if prev is not None and np.array_equal(labels, prev):
            # same assignment: a new MoM draw would only jitter the centres
            return C, it
        prev = labels
        C_new = C.copy()
        for j in range(k):
            pts = X[labels == j]
            if len(pts) >= K:
                # coordinate-wise MoM of the points assigned to centre j
                C_new[j] = _lower_median(_block_means(pts, make_partition(len(pts), K, rng)), axis=0)
                small[j] = 0
            else:
                small[j] += 1
                if small[j] >= 3:  # re-seed a starving centre from the median block
                    part = make_partition(n, K, rng)
                    losses = _block_means(_kmeans_losses(X, C), part)
                    med_block = part[np.argsort(losses)[(K - 1) // 2]]
                    C_new[j] = X[rng.choice(med_block)]
                    small[j] = 0
        C = C_new
    return C, max_iter


def _block_median_lloyd(X: np.ndarray, k: int, K: int, max_iter: int, rng: np.random.Generator
                        ) -> tuple[np.ndarray, int]:
    n = len(X)
    seed_size = min(n, max(n // K, 5 * k))
    C = _kmeanspp(X[rng.choice(n, size=seed_size, replace=False)], k, rng)
    for _ in range(max_iter):
        part = make_partition(n, K, rng)
        losses = _block_means(_kmeans_losses(X, C), part)
        block = X[part[np.argsort(losses)[(K - 1) // 2]]]
        labels = _sq_dists(block, C).argmin(1)
        for j in range(k):
            if np.any(labels == j):
                C[j] = block[labels == j].mean(0)
    return C, max_iter


def _plain_lloyd(X: np.ndarray, k: int, max_iter: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    C = _kmeanspp(X, k, rng)
    for it in range(max_iter):
        labels = _sq_dists(X, C).argmin(1)
        C_new = np.array([X[labels == j].mean(0) if np.any(labels == j) else C[j] for j in range(k)])
        if np.allclose(C_new, C):
            return C_new, it + 1
        C = C_new
    return C, max_iter


class MoMKMeans(ClusterMixin, TransformerMixin, BaseEstimator):
    """MoM k-means from the 'Uniform Mean Estimation for Heavy-Tailed Distributions via Median-of-Means'
    (ICML 2025) paper: ``C_hat in argmin_C MoM_K(min_j ||X - c_j||^2)``, approximated by (spec §2.3)

    - ``"mom-lloyd"``: Lloyd iterations whose centre update is the coordinate-wise MoM of the assigned points,
      seeded by k-means++ on a random block;
    - ``"block-median"``: each iteration a Lloyd step on the median-risk block of a fresh partition;
    - ``"candidates"``: the MoM-risk argmin over the centres of both and of plain Lloyd restarts.

    Every restart is scored by ``MoM_K`` of the k-means loss on one common partition; the best is kept.
    Needs only ``p`` moments of the loss. With a fraction of gross outliers use ``n_blocks >= 2*#outliers + 1``.

    Parameters
    ----------
    n_clusters : int
    n_blocks : int
        Number of MoM blocks ``K``.
    algorithm : {"mom-lloyd", "block-median", "candidates"}
    n_init : int
        Restarts.
    max_iter : int
        Iterations per restart.
    random_state : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : ndarray, shape (n_clusters, n_features)
    labels_ : ndarray, shape (n_samples,)
    mom_risk_ : float
        ``MoM_K`` of the k-means loss of the returned centres on the training sample.
    n_iter_ : int
        Iterations run by the selected restart.
    inertia_ : float
        Plain sum of squared distances (for comparison with scikit-learn's KMeans).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.standard_t(3, (200, 2)), rng.standard_t(3, (200, 2)) + 8])
    >>> km = MoMKMeans(n_clusters=2, n_blocks=9, random_state=0).fit(X)
    >>> sorted(np.round(km.cluster_centers_[:, 0]).astype(int).tolist())
    [0, 8]

    In a ``Pipeline`` and a model search (``score`` is minus the plain k-means inertia, as in ``KMeans``):

    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> pipe = make_pipeline(StandardScaler(), MoMKMeans(n_clusters=2, n_init=2, random_state=0))
    >>> search = GridSearchCV(pipe, {"momkmeans__n_blocks": [5, 9]}, cv=2).fit(X)
    >>> search.best_estimator_.predict(X).shape
    (400,)
    """

    def __init__(self, n_clusters: int = 8, n_blocks: int = 15, algorithm: str = "mom-lloyd", n_init: int = 10,
                 max_iter: int = 30, random_state: Any = None) -> None:
        self.n_clusters = n_clusters
        self.n_blocks = n_blocks
        self.algorithm = algorithm
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> MoMKMeans:
        """Fit centres on ``X`` (shape ``(n_samples, n_features)``); ``y`` is ignored."""
        check_option(self.algorithm, "algorithm", _ALGORITHMS)
        check_int(self.n_clusters, "n_clusters", low=1)
        check_int(self.n_blocks, "n_blocks", low=1)
        check_int(self.n_init, "n_init", low=1)
        check_int(self.max_iter, "max_iter", low=1)
        X = validate_data(self, precheck_sklearn_X(X), dtype=np.float64)
        n = X.shape[0]
        if self.n_clusters > n:
            raise ValueError(f"n_clusters={self.n_clusters} must be <= n_samples={n}")
        # tiny samples cannot hold n_blocks blocks: fall back to one point per block
        K = int(min(self.n_blocks, n))
        k = int(self.n_clusters)
        rng = check_random_state(self.random_state)
        score_partition = make_partition(n, K, rng)
        candidates = []
        for _ in range(self.n_init):
            if self.algorithm in ("mom-lloyd", "candidates"):
                candidates.append(_mom_lloyd(X, k, K, self.max_iter, rng))
            if self.algorithm in ("block-median", "candidates"):
                candidates.append(_block_median_lloyd(X, k, K, self.max_iter, rng))
            if self.algorithm == "candidates":
                candidates.append(_plain_lloyd(X, k, self.max_iter, rng))
        risks = [_mom_kmeans_risk(X, C, score_partition) for C, _ in candidates]
        best = int(np.argmin(risks))
        self.cluster_centers_, self.n_iter_ = candidates[best]
        self.mom_risk_ = float(risks[best])
        self.n_blocks_ = K
        d = _sq_dists(X, self.cluster_centers_)
        self.labels_ = d.argmin(1)
        self.inertia_ = float(d.min(1).sum())
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Index of the nearest centre for each row of ``X``."""
        check_is_fitted(self)
        X = validate_data(self, precheck_sklearn_X(X), dtype=np.float64, reset=False)
        return _sq_dists(X, self.cluster_centers_).argmin(1)

    def transform(self, X: Any) -> np.ndarray:
        """Euclidean distances to every centre, shape ``(n_samples, n_clusters)``."""
        check_is_fitted(self)
        X = validate_data(self, precheck_sklearn_X(X), dtype=np.float64, reset=False)
        return np.sqrt(_sq_dists(X, self.cluster_centers_))

    def score(self, X: Any, y: Any = None) -> float:
        """Opposite of the k-means loss sum on ``X`` (scikit-learn's KMeans convention)."""
        check_is_fitted(self)
        X = validate_data(self, precheck_sklearn_X(X), dtype=np.float64, reset=False)
        return -float(_kmeans_losses(X, self.cluster_centers_).sum())
