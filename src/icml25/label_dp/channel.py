"""Binary randomized-response channels and their label-DP guarantee (spec §2.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.seeding import check_random_state

__all__ = ["RRChannel", "randomized_response", "check_binary_labels", "privacy_slack"]


def check_binary_labels(y: Any, name: str = "y") -> np.ndarray:
    """Return ``y`` as an int array of 0/1 labels, or raise a ValueError naming the bad values."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of 0/1 labels, got shape {arr.shape}")
    bad = np.setdiff1d(np.unique(arr), [0, 1])
    if bad.size:
        raise ValueError(f"{name} must contain only 0/1 labels, found {bad[:5].tolist()}")
    return arr.astype(int)


def _check_pq(p: Any, q: Any) -> tuple[np.ndarray, np.ndarray]:
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if np.any((p < 0) | (p > 1)) or np.any((q < 0) | (q > 1)):
        raise ValueError("p and q are probabilities and must lie in [0, 1]")
    return p, q


def privacy_slack(p: float, q: float, eps: float, delta: float = 0.0) -> np.ndarray:
    """The four label-DP inequalities of spec §2.1 as slacks ``rhs - lhs`` (all ``>= 0`` iff private):

    ``p <= e^eps (1-q) + delta``, ``1-q <= e^eps p + delta``, ``q <= e^eps (1-p) + delta``,
    ``1-p <= e^eps q + delta``.
    """
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
        _check_pq(self.p, self.q)

    @property
    def s(self) -> float:
        """Signal strength ``p + q - 1``."""
        return self.p + self.q - 1.0

    @classmethod
    def symmetric(cls, eps: float, delta: float = 0.0) -> RRChannel:
        """Warner's symmetric RR calibrated to (eps, delta): ``p = q = (e^eps + delta) / (1 + e^eps)``."""
        if eps <= 0:
            raise ValueError(f"eps must be > 0, got {eps}")
        keep = min(1.0, (math.exp(eps) + delta) / (1.0 + math.exp(eps)))
        return cls(keep, keep)

    def epsilon(self, delta: float = 0.0) -> float:
        """The smallest ``eps >= 0`` for which the channel is (eps, delta)-label-DP (``inf`` if none)."""
        if not 0 <= delta < 1:
            raise ValueError(f"delta must be in [0, 1), got {delta}")
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
    p, q = _check_pq(p, q)
    u = check_random_state(rng).random(y.shape[0])
    keep = np.where(y == 1, u < p, u < q)
    return np.where(keep, y, 1 - y).astype(int)
