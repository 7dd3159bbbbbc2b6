"""Seeded heavy-tailed samplers with closed-form moments (spec §5)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import gammaln

from icml25.core.seeding import check_random_state

__all__ = ["symmetric_lomax", "lomax_abs_moment", "student_t", "classical_mom_bound", "contaminate"]


def symmetric_lomax(alpha: float, size: Any, scale: float = 1.0, random_state: Any = None) -> np.ndarray:
    """Symmetrised Lomax (Pareto II) sample ``s * scale * ((1-U)^(-1/alpha) - 1)``, ``s = ±1``; mean 0.

    Moments of order ``< alpha`` exist. ``alpha`` is the tail index.
    """
    if alpha <= 0:
        raise ValueError(f"alpha (tail index) must be > 0, got {alpha}")
    rng = check_random_state(random_state)
    u = rng.random(size)
    s = rng.choice(np.array([-1.0, 1.0]), size=size)
    return s * scale * ((1.0 - u) ** (-1.0 / alpha) - 1.0)


def lomax_abs_moment(alpha: float, p: float, scale: float = 1.0) -> float:
    """``E|X|^p = scale^p Γ(p+1) Γ(alpha-p) / Γ(alpha)`` for (symmetrised) Lomax, finite iff ``p < alpha``."""
    if not 0 < p < alpha:
        raise ValueError(f"the p-th moment exists only for 0 < p < alpha, got p={p}, alpha={alpha}")
    return float(scale**p * np.exp(gammaln(p + 1) + gammaln(alpha - p) - gammaln(alpha)))


def student_t(df: float, size: Any, random_state: Any = None) -> np.ndarray:
    """Student-t sample with ``df`` degrees of freedom (moments of order ``< df`` exist)."""
    if df <= 0:
        raise ValueError(f"df must be > 0, got {df}")
    return check_random_state(random_state).standard_t(df, size=size)


def classical_mom_bound(v_p: float, p: float, n: int, delta: float) -> float:
    """Deviation bound of MoM with ``K = ceil(8 ln(1/delta))`` blocks (spec §2.2):

    ``|MoM_K - mu| <= (8 v_p)^(1/p) (8 ln(1/delta) / n)^((p-1)/p)`` with probability ``>= 1 - delta``.
    """
    if not 1 < p <= 2:
        raise ValueError(f"p must be in (1, 2], got {p}")
    return float((8 * v_p) ** (1 / p) * (8 * np.log(1 / delta) / n) ** ((p - 1) / p))


def contaminate(X: np.ndarray, fraction: float, location: Any, random_state: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Move a ``fraction`` of the rows of ``X`` to ``location``; returns ``(X_new, outlier_mask)``."""
    if not 0 <= fraction < 0.5:
        raise ValueError(f"fraction must be in [0, 0.5), got {fraction}")
    rng = check_random_state(random_state)
    X = np.array(X, dtype=float, copy=True)
    n_out = int(round(fraction * X.shape[0]))
    idx = rng.choice(X.shape[0], size=n_out, replace=False)
    X[idx] = location
    mask = np.zeros(X.shape[0], dtype=bool)
    mask[idx] = True
    return X, mask
