"""Entropic risk, its OCE representation and the budget grid (spec §2.1-2.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["utility", "erm", "oce", "BudgetGrid", "check_alpha"]


def check_alpha(alpha: float) -> float:
    """Validate a risk-averse coefficient: ``alpha < 0`` and ``|alpha|`` moderate (exp overflow)."""
    if not np.isfinite(alpha) or alpha >= 0:
        raise ValueError(f"alpha must be < 0 (risk-averse entropic risk), got {alpha}")
    return float(alpha)


def utility(t: Any, alpha: float) -> np.ndarray:
    """OCE utility ``u(t) = (e^{alpha t} - 1) / alpha`` (concave, increasing, ``u(0) = 0``, ``u'(0) = 1``)."""
    return np.expm1(alpha * np.asarray(t, dtype=float)) / alpha


def erm(values: Any, probs: Any, alpha: float) -> float:
    """Entropic risk ``(1/alpha) log E[e^{alpha G}]`` of a discrete distribution (``values``, ``probs``)."""
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    if values.shape != probs.shape:
        raise ValueError(f"values and probs must have the same shape, got {values.shape} and {probs.shape}")
    if np.any(probs < 0) or abs(probs.sum() - 1) > 1e-8:
        raise ValueError("probs must be non-negative and sum to one")
    m = values[probs > 0].min()  # log-sum-exp around the minimum (alpha < 0: largest exponent)
    return float(m + np.log(np.sum(probs * np.exp(alpha * (values - m)))) / alpha)


def oce(values: Any, probs: Any, lam: float, alpha: float) -> float:
    """``lam + E[u(G - lam)]``: a lower bound of the ERM for every ``lam``, equal at ``lam = ERM`` (spec §2.1)."""
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    return float(lam + np.sum(probs * utility(values - lam, alpha)))


@dataclass(frozen=True)
class BudgetGrid:
    """Budget grid ``B = {-H, -H + eps, ..., H}`` and initial budgets ``Lambda = {0, eps, ..., H}`` (spec §2.2).

    Index ``i`` stands for ``b = (i - H/eps) * eps``; spending utility ``g`` shifts the index by ``g/eps``.
    """

    H: int
    eps: float

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
        steps = np.rint(np.asarray(g) / self.eps)
        if np.max(np.abs(steps * self.eps - g)) > 1e-9:
            raise ValueError(f"utilities must lie on the budget grid (multiples of eps={self.eps}); round g first")
        return steps.astype(int)
