"""Seeded heavy-tailed samplers with closed-form moments (spec §5)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import gammaln

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_array, check_int, check_positive, check_probability, check_real


def _check_size(size: Any) -> int | tuple[int, ...]:
    if isinstance(size, (tuple, list)):
        if not size:
            raise ValueError("size must be a positive integer or a non-empty tuple of them, got ()")
        return tuple(check_int(v, "size", low=1) for v in size)
    return check_int(size, "size", low=1)

__all__ = ["symmetric_lomax", "lomax_abs_moment", "student_t", "classical_mom_bound", "contaminate"]


def symmetric_lomax(alpha: float, size: Any, scale: float = 1.0, random_state: Any = None) -> np.ndarray:
    """Symmetrised Lomax (Pareto II) sample ``s * scale * ((1-U)^(-1/alpha) - 1)``, ``s = ±1``; mean 0.

    Moments of order ``< alpha`` exist. ``alpha`` is the tail index.

    Examples
    --------
    >>> symmetric_lomax(1.5, (2, 3), random_state=0).shape
    (2, 3)
    """
    alpha = check_positive(alpha, "alpha")
    size = _check_size(size)
    scale = check_positive(scale, "scale")
    rng = check_random_state(random_state)
    u = rng.random(size)
    s = rng.choice(np.array([-1.0, 1.0]), size=size)
    return s * scale * ((1.0 - u) ** (-1.0 / alpha) - 1.0)


def lomax_abs_moment(alpha: float, p: float, scale: float = 1.0) -> float:
    """``E|X|^p = scale^p Γ(p+1) Γ(alpha-p) / Γ(alpha)`` for (symmetrised) Lomax, finite iff ``p < alpha``.

    Examples
    --------
    >>> lomax_abs_moment(3.0, 1.0)  # E|X| = scale / (alpha - 1)
    0.5
    """
    alpha = check_positive(alpha, "alpha")
    p = check_positive(p, "p")
    scale = check_positive(scale, "scale")
    if not 0 < p < alpha:
        raise ValueError(f"the p-th moment exists only for 0 < p < alpha, got p={p}, alpha={alpha}")
    return float(scale**p * np.exp(gammaln(p + 1) + gammaln(alpha - p) - gammaln(alpha)))


def student_t(df: float, size: Any, random_state: Any = None) -> np.ndarray:
    """Student-t sample with ``df`` degrees of freedom (moments of order ``< df`` exist)."""
    df = check_positive(df, "df")
    size = _check_size(size)
    return check_random_state(random_state).standard_t(df, size=size)


def classical_mom_bound(v_p: float, p: float, n: int, delta: float) -> float:
    """Deviation bound of MoM with ``K = ceil(8 ln(1/delta))`` blocks (spec §2.2):

    ``|MoM_K - mu| <= (8 v_p)^(1/p) (8 ln(1/delta) / n)^((p-1)/p)`` with probability ``>= 1 - delta``.

    Examples
    --------
    >>> round(classical_mom_bound(1.0, 2.0, 10000, 0.05), 4)  # (8)^(1/2) (8 ln 20 / 10^4)^(1/2)
    0.1385
    """
    v_p = check_positive(v_p, "v_p")
    p = check_real(p, "p")
    n = check_int(n, "n", low=1)
    delta = check_probability(delta, "delta", open_low=True, open_high=True)
    if not 1 < p <= 2:
        raise ValueError(f"p must be in (1, 2], got {p}")
    return float((8 * v_p) ** (1 / p) * (8 * np.log(1 / delta) / n) ** ((p - 1) / p))


def contaminate(X: np.ndarray, fraction: float, location: Any, random_state: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Move a ``fraction`` of the rows of ``X`` to ``location``; returns ``(X_new, outlier_mask)``."""
    X = np.array(check_array(X, "X", ndim=(1, 2)), copy=True)
    fraction = check_probability(fraction, "fraction")
    if fraction >= 0.5:
        raise ValueError(f"fraction must be in [0, 0.5), got {fraction}")
    location = check_array(location, "location", ndim=(0, 1))
    if location.ndim == 1 and (X.ndim != 2 or location.shape[0] != X.shape[1]):
        raise ValueError(f"location must be a scalar or have one entry per column of X ({X.shape[1:]}), "
                         f"got shape {location.shape}")
    rng = check_random_state(random_state)
    n_out = int(round(fraction * X.shape[0]))
    idx = rng.choice(X.shape[0], size=n_out, replace=False)
    X[idx] = location
    mask = np.zeros(X.shape[0], dtype=bool)
    mask[idx] = True
    return X, mask
