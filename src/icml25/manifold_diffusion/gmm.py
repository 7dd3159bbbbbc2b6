"""Online Gaussian-mixture inference on SPD(d+1)^G × R^(G−1) (Hosseini & Sra reparameterisation, spec §2.5).

A mixture with means μ_j, covariances Σ_j and weights π_j becomes ``S_j = [[Σ_j + μ_jμ_jᵀ, μ_j], [μ_jᵀ, 1]]``
and ``v_j = log(π_j / π_G)`` (``v_G = 0``). With ``y = [x; 1]`` the per-sample loss is
``Q((S, v); x) = −log Σ_j π_j exp(−½ yᵀS_j⁻¹y − ½ log det S_j)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int

from .manifold_base import Euclidean, Product
from .spd import SPD

__all__ = ["gmm_manifold", "gmm_params_to_manifold", "manifold_to_gmm_params", "gmm_loss_grad",
           "average_log_likelihood"]


def gmm_manifold(d: int, n_components: int) -> Product:
    """``Product([SPD(d+1, k=G), Euclidean(G−1)])`` for a G-component mixture in R^d (G >= 2)."""
    d = check_int(d, "d", low=1)
    n_components = check_int(n_components, "n_components", low=2)
    return Product([SPD(int(d) + 1, k=int(n_components)), Euclidean(int(n_components) - 1)])


def gmm_params_to_manifold(means: Any, covariances: Any, weights: Any) -> tuple[np.ndarray, np.ndarray]:
    """Map mixture parameters to the product-manifold point ``(S, v)``.

    Parameters
    ----------
    means : (G, d)
    covariances : (G, d, d) SPD
    weights : (G,) positive, summing to one

    Returns
    -------
    S : (G, d+1, d+1), v : (G−1,)
    """
    mu = check_array(means, "means", ndim=2)
    cov = check_array(covariances, "covariances", ndim=3)
    pi = check_array(weights, "weights", ndim=1)
    if mu.ndim != 2 or cov.shape != (mu.shape[0], mu.shape[1], mu.shape[1]) or pi.shape != (mu.shape[0],):
        raise ValueError(f"expected means (G, d), covariances (G, d, d), weights (G,), got {mu.shape}, "
                         f"{cov.shape}, {pi.shape}")
    if np.any(pi <= 0):
        raise ValueError("weights must be positive")
    g, d = mu.shape
    s = np.zeros((g, d + 1, d + 1))
    s[:, :d, :d] = cov + mu[:, :, None] * mu[:, None, :]
    s[:, :d, d] = mu
    s[:, d, :d] = mu
    s[:, d, d] = 1.0
    v = np.log(pi[:-1] / pi[-1])
    return s, v


def manifold_to_gmm_params(point: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inverse of :func:`gmm_params_to_manifold` for one point ``(S, v)``.

    With ``S = [[B, b], [bᵀ, c]]``: ``μ = b / c``, ``Σ = (B − b bᵀ / c) / c``, which is exact when ``c = 1``
    and otherwise gives the mixture whose augmented density matches ``N(y; 0, S/c)``.

    Returns
    -------
    means (G, d), covariances (G, d, d), weights (G,)
    """
    if not isinstance(point, (tuple, list)) or len(point) != 2:
        raise TypeError(f"point must be a tuple (S, v) of a GMM manifold point, got {type(point).__name__}")
    s, v = check_array(point[0], "point", ndim=(3, 4)), check_array(point[1], "point", ndim=(1, 2))
    d = s.shape[-1] - 1
    c = s[..., d, d]
    b = s[..., :d, d]
    mu = b / c[..., None]
    cov = (s[..., :d, :d] - b[..., :, None] * b[..., None, :] / c[..., None, None]) / c[..., None, None]
    logits = np.concatenate([v, np.zeros(v.shape[:-1] + (1,))], axis=-1)
    pi = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return mu, cov, pi / pi.sum(axis=-1, keepdims=True)


def _log_components(s: np.ndarray, v: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-component ``log π_j − ½ yᵀS_j⁻¹y − ½ log det S_j`` and S⁻¹y, for batched points and samples.

    s: (K, G, n, n), v: (K, G−1), y: (K, N, n) -> logp (K, N, G), sinv_y (K, G, N, n), log π (K, G)
    """
    chol = np.linalg.cholesky(s)  # (K, G, n, n)
    logdet = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)  # (K, G)
    yt = np.broadcast_to(np.swapaxes(y, -1, -2)[:, None], s.shape[:-1] + (y.shape[1],))  # (K, G, n, N)
    sinv_y = np.swapaxes(np.linalg.solve(s, yt), -1, -2)  # (K, G, N, n)
    quad = np.einsum("kgin,kin->kig", sinv_y, y)  # (K, N, G)
    logits = np.concatenate([v, np.zeros(v.shape[:-1] + (1,))], axis=-1)
    log_pi = logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True)
    logp = log_pi[:, None, :] - 0.5 * quad - 0.5 * logdet[:, None, :]
    return logp, sinv_y, log_pi


def _augment(x: np.ndarray) -> np.ndarray:
    return np.concatenate([x, np.ones(x.shape[:-1] + (1,))], axis=-1)


def gmm_loss_grad(points: Any, samples: Any) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean gradient of the per-sample loss ``Q((S, v); x)`` for every agent (analytic).

    ``∂Q/∂S_j = ½ γ_j (S_j⁻¹ − S_j⁻¹ y yᵀ S_j⁻¹)`` and ``∂Q/∂v_j = π_j − γ_j`` with the responsibilities
    ``γ_j = π_j N_j / Σ_l π_l N_l``.

    Parameters
    ----------
    points : tuple (S (K, G, d+1, d+1), v (K, G−1))
    samples : (K, d) one sample per agent

    Returns
    -------
    tuple (egrad_S (K, G, d+1, d+1), egrad_v (K, G−1))
    """
    if not isinstance(points, (tuple, list)) or len(points) != 2:
        raise TypeError(f"points must be a tuple (S, v) of stacked GMM manifold points, got {type(points).__name__}")
    s, v = check_array(points[0], "points", ndim=4), check_array(points[1], "points", ndim=2)
    x = check_array(samples, "samples", ndim=2)
    if s.ndim != 4 or x.ndim != 2 or x.shape[0] != s.shape[0] or x.shape[1] + 1 != s.shape[-1]:
        raise ValueError(f"expected S (K, G, d+1, d+1) and samples (K, d) with matching K and d; got S {s.shape}, "
                         f"samples {x.shape}")
    y = _augment(x)[:, None, :]  # (K, 1, n)
    logp, sinv_y, log_pi = _log_components(s, v, y)
    gamma = np.exp(logp[:, 0] - np.logaddexp.reduce(logp[:, 0], axis=-1, keepdims=True))  # (K, G)
    sinv = np.linalg.inv(s)
    sy = sinv_y[:, :, 0, :]  # (K, G, n)
    g_s = 0.5 * gamma[..., None, None] * (sinv - sy[..., :, None] * sy[..., None, :])
    g_v = np.exp(log_pi[:, :-1]) - gamma[:, :-1]
    return g_s, g_v


def average_log_likelihood(points: Any, data: Any, chunk: int = 4096) -> np.ndarray:
    """Average log-likelihood of ``data`` under each agent's mixture, in the augmented space (spec §2.5).

    ``ALL = mean_n log Σ_j π_j N(y_n; 0, S_j)`` with ``y = [x; 1]`` and the (d+1)-dimensional Gaussian
    density, as in the official code.

    Parameters
    ----------
    points : tuple (S (K, G, d+1, d+1), v (K, G−1)), or one unbatched point
    data : (N, d)

    Returns
    -------
    (K,) array (a 0-d array for an unbatched point)
    """
    s, v = (np.asarray(p, dtype=float) for p in points)
    single = s.ndim == 3
    if single:
        s, v = s[None], v[None]
    x = check_array(data, "data", ndim=2)
    chunk = check_int(chunk, "chunk", low=1)
    if x.ndim != 2 or x.shape[1] + 1 != s.shape[-1]:
        raise ValueError(f"data must have shape (N, {s.shape[-1] - 1}), got {x.shape}")
    n = s.shape[-1]
    total = np.zeros(s.shape[0])
    for start in range(0, x.shape[0], int(chunk)):
        block = _augment(x[start:start + int(chunk)])
        y = np.broadcast_to(block[None], (s.shape[0],) + block.shape)
        logp, _, _ = _log_components(s, v, y)
        total += np.logaddexp.reduce(logp, axis=-1).sum(axis=-1)
    out = total / x.shape[0] - 0.5 * n * np.log(2.0 * np.pi)
    return out[0] if single else out
