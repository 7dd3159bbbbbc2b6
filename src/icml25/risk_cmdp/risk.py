"""Entropic risk, its OCE representation and the budget grid (spec §2.1-2.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int, check_positive, check_real

__all__ = ["utility", "erm", "oce", "BudgetGrid", "check_alpha"]


def check_alpha(alpha: Any) -> float:
    """Validate a risk-averse coefficient: a finite real ``alpha < 0`` (``alpha = 0`` is the risk-neutral limit,
    which the entropic formulas divide by).

    Examples
    --------
    >>> check_alpha(-1)
    -1.0
    >>> check_alpha(0.0)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be < 0 (risk-averse entropic risk), got 0.0
    """
    alpha = check_real(alpha, "alpha")
    if alpha >= 0:
        raise ValueError(f"alpha must be < 0 (risk-averse entropic risk), got {alpha}")
    return alpha


def utility(t: Any, alpha: float) -> np.ndarray:
    """OCE utility ``u(t) = (e^{alpha t} - 1) / alpha`` (concave, increasing, ``u(0) = 0``, ``u'(0) = 1``).

    Examples
    --------
    >>> float(utility(0.0, -1.0)), round(float(utility(1.0, -1.0)), 4)
    (0.0, 0.6321)
    """
    alpha = check_alpha(alpha)
    return _utility(check_array(t, "t", min_size=0), alpha)


def _utility(t: Any, alpha: float) -> np.ndarray:
    return np.expm1(alpha * np.asarray(t, dtype=float)) / alpha


def _distribution(values: Any, probs: Any) -> tuple[np.ndarray, np.ndarray]:
    values = check_array(values, "values", ndim=1)
    probs = check_array(probs, "probs", ndim=1, low=0.0)
    if values.shape != probs.shape:
        raise ValueError(f"values and probs must have the same shape, got {values.shape} and {probs.shape}")
    if abs(probs.sum() - 1) > 1e-8:
        raise ValueError(f"probs must sum to one, got sum {probs.sum():.6g}")
    return values, probs


def erm(values: Any, probs: Any, alpha: float) -> float:
    """Entropic risk ``(1/alpha) log E[e^{alpha G}]`` of a discrete distribution (``values``, ``probs``), spec §2.1.

    Examples
    --------
    >>> round(erm([0.0, 2.0], [0.5, 0.5], -1.0), 4)
    0.5662
    """
    alpha = check_alpha(alpha)
    values, probs = _distribution(values, probs)
    m = values[probs > 0].min()  # log-sum-exp around the minimum (alpha < 0: largest exponent)
    return float(m + np.log(np.sum(probs * np.exp(alpha * (values - m)))) / alpha)


def oce(values: Any, probs: Any, lam: float, alpha: float) -> float:
    """``lam + E[u(G - lam)]``: a lower bound of the ERM for every ``lam``, equal at ``lam = ERM`` (spec §2.1).

    Examples
    --------
    >>> v, p = [0.0, 2.0], [0.5, 0.5]
    >>> oce(v, p, 1.0, -1.0) <= erm(v, p, -1.0)
    True
    """
    alpha = check_alpha(alpha)
    values, probs = _distribution(values, probs)
    lam = check_real(lam, "lam")
    return float(lam + np.sum(probs * _utility(values - lam, alpha)))


@dataclass(frozen=True)
class BudgetGrid:
    """Budget grid ``B = {-H, -H + eps, ..., H}`` and initial budgets ``Lambda = {0, eps, ..., H}`` (spec §2.2).

    Index ``i`` stands for ``b = (i - H/eps) * eps``; spending utility ``g`` shifts the index by ``g/eps``.
    """

    H: int
    eps: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "H", check_int(self.H, "H", low=1))
        object.__setattr__(self, "eps", check_positive(self.eps, "eps"))
        if self.eps > self.H:
            raise ValueError(f"eps must be <= H = {self.H} (the grid step of budgets in [-H, H]), got {self.eps}")

    @property
    def offset(self) -> int:
        """Index of budget 0."""
        return int(round(self.H / self.eps))

    @property
    def n(self) -> int:
        """Number of budget cells ``2H/eps + 1``."""
        return 2 * self.offset + 1

    @property
    def budgets(self) -> np.ndarray:
        """Budget value of every index, shape (n,)."""
        return (np.arange(self.n) - self.offset) * self.eps

    @property
    def lambda_indices(self) -> np.ndarray:
        """Indices of the initial budgets ``0, eps, ..., H``."""
        return np.arange(self.offset, self.n)

    def utility_steps(self, g: np.ndarray) -> np.ndarray:
        """Utilities as integer grid steps; raises if ``g`` is not on the grid (round it first)."""
        g = check_array(g, "g")
        steps = np.rint(g / self.eps)
        if np.max(np.abs(steps * self.eps - g)) > 1e-9:
            raise ValueError(f"utilities must lie on the budget grid (multiples of eps={self.eps}); round g first")
        return steps.astype(int)
