"""Synthetic Gaussian mixtures as in the paper's Fig. 4 and the k-means++ initialisation (spec §2.5)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["random_gmm_parameters", "sample_gmm", "kmeans_plusplus_gmm"]


def random_gmm_parameters(d: int, n_components: int, rng: np.random.Generator,
                          max_tries: int = 1000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random well-separated mixture parameters (the official generator, spec §2.5).

    ``π ~ Gamma(10, 1/10)`` normalised; ``Σ_j = Q diag(χ²₃) Qᵀ`` with Haar ``Q``; ``μ_1 = 3 N(0, I)`` and each
    further ``μ_j = 3 N(0, I)`` accepted only when ``‖μ_j − μ_l‖ ≥ max(tr Σ_j, tr Σ_l)`` for every earlier l.
    After ``max_tries`` rejections the covariances and means are drawn again.

    Returns
    -------
    means (G, d), covariances (G, d, d), weights (G,)
    """
    from icml25.core.validation import check_int

    d, g = check_int(d, "d", low=1), check_int(n_components, "n_components", low=1)
    max_tries = check_int(max_tries, "max_tries", low=1)
    pi = rng.gamma(10.0, 0.1, size=g)
    pi = pi / pi.sum()
    while True:
        q, r = np.linalg.qr(rng.standard_normal((g, d, d)))
        q = q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]
        covs = (q * rng.chisquare(3, size=(g, d))[:, None, :]) @ np.swapaxes(q, 1, 2)
        traces = np.trace(covs, axis1=1, axis2=2)
        means = [3.0 * rng.standard_normal(d)]
        while len(means) < g:
            j = len(means)
            cand = 3.0 * rng.standard_normal((int(max_tries), d))
            ok = np.ones(len(cand), dtype=bool)
            for l_idx, m in enumerate(means):
                ok &= np.linalg.norm(cand - m, axis=1) >= max(traces[j], traces[l_idx])
            if not ok.any():
                break
            means.append(cand[np.argmax(ok)])
        if len(means) == g:
            return np.array(means), covs, pi


def sample_gmm(means: Any, covariances: Any, weights: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples (n, d) from the mixture."""
    from icml25.core.validation import check_array, check_int, check_prob_vector

    means = check_array(means, "means", ndim=2)
    g, d = means.shape
    covariances = check_array(covariances, "covariances", shape=(g, d, d))
    weights = check_prob_vector(weights, "weights", ndim=1)
    if weights.shape != (g,):
        raise ValueError(f"weights must have shape ({g},) (one per component), got {weights.shape}")
    n = check_int(n, "n", low=1)
    comp = rng.choice(len(weights), size=int(n), p=weights)
    out = np.empty((int(n), means.shape[1]))
    for j in range(len(weights)):
        idx = np.flatnonzero(comp == j)
        if idx.size:
            out[idx] = rng.multivariate_normal(means[j], covariances[j], size=idx.size)
    return out


def kmeans_plusplus_gmm(data: Any, n_components: int, random_state: int = 1,
                        min_points: int = 10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Initial mixture from k-means++ seeding (scikit-learn): centres, per-cluster covariances, sizes.

    Points are assigned to the nearest k-means++ centre; a cluster with fewer than ``min_points`` points gets
    the identity covariance (at most ``min_points`` points). Weights are the cluster proportions (at least one point each).

    Returns
    -------
    means (G, d), covariances (G, d, d), weights (G,)
    """
    from icml25.core.optional import require

    require("sklearn", extra="stats")
    from sklearn.cluster import kmeans_plusplus

    from icml25.core.validation import check_array, check_int

    x = check_array(data, "data", ndim=2)
    n_components = check_int(n_components, "n_components", low=1, high=x.shape[0])
    centers, _ = kmeans_plusplus(x, n_clusters=int(n_components), random_state=random_state)
    labels = np.argmin(((x[:, None, :] - centers[None]) ** 2).sum(-1), axis=1)
    d = x.shape[1]
    covs = np.empty((int(n_components), d, d))
    sizes = np.empty(int(n_components))
    for j in range(int(n_components)):
        pts = x[labels == j]
        sizes[j] = max(len(pts), 1)
        covs[j] = np.cov(pts, rowvar=False) + 1e-6 * np.eye(d) if len(pts) > min_points else np.eye(d)
    return centers, covs, sizes / sizes.sum()
