"""Binary randomized-response channels and their label-DP guarantee (spec §2.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_array, check_positive, check_probability, check_real

__all__ = ["RRChannel", "randomized_response", "check_binary_labels", "privacy_slack"]


def check_binary_labels(y: Any, name: str = "y") -> np.ndarray:
    """Return ``y`` as an int array of 0/1 labels, or raise a ValueError naming the argument and the bad values.

    Examples
    --------
    >>> check_binary_labels([0, 1, 1]).tolist()
    [0, 1, 1]
    >>> check_binary_labels([0, 2])
    Traceback (most recent call last):
    ...
    ValueError: y must contain only 0/1 labels, found [2]
    """
    arr = check_array(y, name, ndim=1, dtype=None)
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only 0/1 labels, found NaN or inf")
    bad = np.setdiff1d(np.unique(arr), [0, 1])
    if bad.size:
        raise ValueError(f"{name} must contain only 0/1 labels, found {bad[:5].tolist()}")
    return arr.astype(int)


def check_channel_array(x: Any, name: str, n: int | None = None) -> np.ndarray:
    """A channel probability: a scalar or (with ``n``) an array of shape ``(n,)``, finite and in [0, 1]."""
    arr = check_array(x, name, ndim=(0, 1), low=0.0, high=1.0)
    if arr.ndim == 1 and n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} must be a scalar or have one entry per record (shape ({n},)), "
                         f"got shape {arr.shape}")
    if arr.ndim == 1 and n is None:
        raise ValueError(f"{name} must be a scalar here, got shape {arr.shape}")
    return arr


def _slack(p: Any, q: Any, eps: float, delta: float) -> np.ndarray:
    e = math.exp(eps)
    return np.array([e * (1 - q) + delta - p, e * p + delta - (1 - q), e * (1 - p) + delta - q,
                     e * q + delta - (1 - p)])


def privacy_slack(p: float, q: float, eps: float, delta: float = 0.0) -> np.ndarray:
    """The four label-DP inequalities of spec §2.1 as slacks ``rhs - lhs`` (all ``>= 0`` iff private):

    ``p <= e^eps (1-q) + delta``, ``1-q <= e^eps p + delta``, ``q <= e^eps (1-p) + delta``,
    ``1-p <= e^eps q + delta``.

    Parameters
    ----------
    p, q : float in [0, 1]
    eps : float >= 0
    delta : float in [0, 1)

    Returns
    -------
    ndarray, shape (4,)

    Examples
    --------
    >>> bool(np.all(privacy_slack(0.7, 0.7, 1.0) >= 0))
    True
    """
    p = check_probability(p, "p")
    q = check_probability(q, "q")
    eps = check_real(eps, "eps", low=0.0)
    delta = check_real(delta, "delta", low=0.0, high=1.0, high_open=True)
    e = math.exp(eps)
    return np.array([e * (1 - q) + delta - p, e * p + delta - (1 - q), e * (1 - p) + delta - q,
                     e * q + delta - (1 - p)])


@dataclass(frozen=True)
class RRChannel:
    """A binary randomized-response channel ``P(y~=1 | y=1) = p``, ``P(y~=0 | y=0) = q``.

    The mechanism of the 'Differentially Private Analysis for Binary Response Models' (ICML 2025) paper: each
    record's label passes once through the channel; with the four inequalities of :func:`privacy_slack` it is
    (eps, delta)-label-DP (spec §2.1). ``s = p + q - 1`` must be non-zero for the labels to carry information.

    Parameters
    ----------
    p, q : float in [0, 1]
    """

    p: float
    q: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability(self.p, "p"))
        object.__setattr__(self, "q", check_probability(self.q, "q"))

    @property
    def s(self) -> float:
        """Signal strength ``p + q - 1``."""
        return self.p + self.q - 1.0

    @classmethod
    def symmetric(cls, eps: float, delta: float = 0.0) -> RRChannel:
        """Warner's symmetric RR calibrated to (eps, delta): ``p = q = (e^eps + delta) / (1 + e^eps)``.

        Examples
        --------
        >>> round(RRChannel.symmetric(1.0).p, 4)
        0.7311
        """
        eps = check_positive(eps, "eps")
        delta = check_real(delta, "delta", low=0.0, high=1.0, high_open=True)
        keep = min(1.0, (math.exp(eps) + delta) / (1.0 + math.exp(eps)))
        return cls(keep, keep)

    def epsilon(self, delta: float = 0.0) -> float:
        """The smallest ``eps >= 0`` for which the channel is (eps, delta)-label-DP (``inf`` if none)."""
        delta = check_real(delta, "delta", low=0.0, high=1.0, high_open=True)
        p, q = self.p, self.q
        worst = 0.0
        for a, b in ((p, 1 - q), (1 - q, p), (q, 1 - p), (1 - p, q)):
            if a - delta <= 0:
                continue
            if b <= 0:
                return math.inf
            worst = max(worst, math.log((a - delta) / b))
        return worst

    def is_private(self, eps: float, delta: float = 0.0, tol: float = 1e-12) -> bool:
        """Whether the four inequalities of spec §2.1 hold at (eps, delta) up to ``tol``."""
        tol = check_real(tol, "tol", low=0.0)
        return bool(np.all(privacy_slack(self.p, self.q, eps, delta) >= -tol))


def randomized_response(y: Any, p: Any, q: Any, rng: Any = None) -> np.ndarray:
    """Privatise binary labels: keep a 1 with probability ``p``, keep a 0 with probability ``q``.

    Parameters
    ----------
    y : array of 0/1, shape (n,)
    p, q : float or array of shape (n,)
        Per-record channel parameters (scalars broadcast).
    rng : None, int or Generator

    Returns
    -------
    ndarray of int, shape (n,)
        The released labels; this is the only function that reads raw labels.
    """
    y = check_binary_labels(y)
    p = check_channel_array(p, "p", y.shape[0])
    q = check_channel_array(q, "q", y.shape[0])
    u = check_random_state(rng).random(y.shape[0])
    keep = np.where(y == 1, u < p, u < q)
    return np.where(keep, y, 1 - y).astype(int)
