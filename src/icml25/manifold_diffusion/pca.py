"""Online distributed PCA on the Grassmann manifold (spec §2.4): loss, gradient, solution, synthetic data."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["pca_loss", "pca_loss_grad", "principal_subspace", "synthetic_pca_stream"]


def _check(points: Any, samples: Any) -> tuple[np.ndarray, np.ndarray]:
    from icml25.core.validation import check_array

    w = check_array(points, "points", ndim=tuple(range(2, 8)))
    x = check_array(samples, "samples", ndim=tuple(range(1, 7)))
    if w.ndim < 2:
        raise ValueError(f"points must have shape (..., d, r), got {w.shape}")
    if x.shape[-1] != w.shape[-2]:
        raise ValueError(f"samples have dimension {x.shape[-1]} but the Grassmann points are "
                         f"{w.shape[-2]}×{w.shape[-1]} (d must match)")
    if x.shape[:-1] != w.shape[:-2]:
        raise ValueError(f"samples must have one row per point: points {w.shape[:-2]}, samples {x.shape[:-1]}")
    return w, x


def pca_loss(points: Any, samples: Any) -> np.ndarray:
    """Instantaneous PCA loss ``Q(W; x) = −‖Wᵀx‖²`` for every agent.

    Parameters
    ----------
    points : (K, d, r) stacked orthonormal frames
    samples : (K, d) one sample per agent

    Returns
    -------
    (K,) losses
    """
    w, x = _check(points, samples)
    proj = np.einsum("...dr,...d->...r", w, x)
    return -np.sum(proj ** 2, axis=-1)


def pca_loss_grad(points: Any, samples: Any) -> np.ndarray:
    """Euclidean gradient ``∇_W Q = −2 x xᵀ W`` of :func:`pca_loss` for every agent.

    Parameters
    ----------
    points : (K, d, r)
    samples : (K, d)

    Returns
    -------
    (K, d, r) Euclidean gradients (the Riemannian one is ``−2 (I − WWᵀ) x xᵀ W``).
    """
    w, x = _check(points, samples)
    proj = np.einsum("...dr,...d->...r", w, x)
    return -2.0 * x[..., :, None] * proj[..., None, :]


def principal_subspace(data: Any, r: int, center: bool = False) -> np.ndarray:
    """Orthonormal basis (d, r) of the top-r eigenvectors of the second-moment matrix of ``data`` (N, d)."""
    from icml25.core.validation import check_array, check_int

    x = check_array(data, "data", ndim=2)
    r = check_int(r, "r", low=1, high=x.shape[1])
    if center:
        x = x - x.mean(axis=0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    return vt[: int(r)].T.copy()


def synthetic_pca_stream(n_agents: int, n_samples: int, d: int = 10, r: int = 5, decay: float = 0.8,
                         rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The synthetic PCA data of the paper's Fig. 2 (spec §2.6).

    Draws ``N = K·T`` Gaussian samples in R^d, replaces their singular values by ``decay^j`` rescaled by
    ``sqrt(N − 1)`` (so the empirical covariance has eigenvalues ``decay^{2j}``), shuffles the rows and splits
    them into K streams of T samples. The solution is the span of the first r right singular vectors.

    Returns
    -------
    stream : (K, T, d) array
    target : (d, r) orthonormal basis of the true principal subspace
    """
    from icml25.core.validation import check_int, check_real

    n_agents = check_int(n_agents, "n_agents", low=1)
    n_samples = check_int(n_samples, "n_samples", low=1)
    d = check_int(d, "d", low=2)
    r = check_int(r, "r", low=1, high=d - 1)
    decay = check_real(decay, "decay", low=0.0, low_open=True, high=1.0)
    rng = np.random.default_rng() if rng is None else rng
    n = int(n_agents) * int(n_samples)
    if n < d:
        raise ValueError(f"need n_agents*n_samples >= d, got {n} < {d}")
    x = rng.standard_normal((n, d))
    u, _, vt = np.linalg.svd(x, full_matrices=False)
    s = decay ** np.arange(d) * np.sqrt(n - 1)
    x = (u * s) @ vt
    rng.shuffle(x, axis=0)
    return x.reshape(int(n_agents), int(n_samples), d), vt[:r].T.copy()
