"""Correlated attempts: how ``P(all k attempts fail | p)`` departs from the iid ``p^k`` (spec 2.3).

A :class:`TrialCorrelation` maps a per-problem failure probability ``p`` and a number of attempts ``k`` to the
log-probability that all ``k`` attempts fail, and gives its expectation under ``p ~ Beta(alpha, beta)``:

- :class:`IID` -- ``p^k`` (the paper's memorising ansatz), ``E = B(alpha + k, beta) / B(alpha, beta)``.
- :class:`RepeatCorrelation` -- each attempt after the first copies the previous outcome with probability
  ``rho``: ``p (rho + (1 - rho) p)^(k-1)``. Under the Beta law the number of fresh draws is
  ``1 + J`` with ``J ~ Binomial(k - 1, 1 - rho)``, so ``E = E_J[B(alpha + 1 + J, beta)] / B(alpha, beta)``
  (computed exactly as a log-sum-exp over ``J``).
- :class:`PowerCorrelation` -- ``p^(k^gamma)``: the iid law with ``k`` replaced by ``k^gamma``; tail exponent
  ``gamma * beta``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
from scipy.special import betaln, gammaln, logsumexp

from icml25.core.validation import check_array, check_real

__all__ = ["TrialCorrelation", "IID", "RepeatCorrelation", "PowerCorrelation", "correlation_from_name"]


@runtime_checkable
class TrialCorrelation(Protocol):
    """Protocol of a trial-correlation model (spec 2.3)."""

    name: str

    def log_p_all_fail(self, p: Any, k: Any) -> np.ndarray:
        """log P(all ``k`` attempts fail | failure probability ``p``); broadcasts ``p`` against ``k``."""
        ...

    def log_expected_all_fail(self, alpha: float, beta: float, k: Any) -> np.ndarray:
        """log E[P(all ``k`` fail | p)] for ``p ~ Beta(alpha, beta)``, shape of ``k``."""
        ...

    def exponent_factor(self) -> float:
        """Factor multiplying ``beta`` in the large-k power-law exponent."""
        ...


def _log(p: Any) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(p, dtype=float))


def _check_p_k(p: Any, k: Any) -> tuple[np.ndarray, np.ndarray]:
    """Failure probabilities in [0, 1] and attempt counts >= 0 (any broadcastable shapes)."""
    return (check_array(p, "p", min_size=0, low=0.0, high=1.0),
            check_array(k, "k", min_size=0, low=0.0))


class IID:
    """Independent attempts: ``P(all k fail | p) = p^k`` (the paper's Eq. for pass_i@k = 1 - p_i^k)."""

    name = "iid"
    param_name: str | None = None
    value: float | None = None

    def log_p_all_fail(self, p: Any, k: Any) -> np.ndarray:
        """``k log p`` (``-inf`` where ``p = 0``)."""
        p, k = _check_p_k(p, k)
        k = np.asarray(k, dtype=float)
        lp = _log(p)
        with np.errstate(invalid="ignore"):
            return np.where(k == 0, 0.0, k * lp)

    def log_expected_all_fail(self, alpha: float, beta: float, k: Any) -> np.ndarray:
        """``log B(alpha + k, beta) - log B(alpha, beta)`` (closed form, any real ``k >= 0``)."""
        k = np.asarray(k, dtype=float)
        return betaln(alpha + k, beta) - betaln(alpha, beta)

    def exponent_factor(self) -> float:
        """1: the tail exponent is ``beta``."""
        return 1.0

    def sample_outcomes(self, p: np.ndarray, n_attempts: int, rng: np.random.Generator) -> np.ndarray:
        """Boolean success matrix, shape ``(len(p), n_attempts)``, attempts iid given ``p``."""
        return rng.random((p.size, int(n_attempts))) >= p[:, None]

    def __repr__(self) -> str:
        return "IID()"


class RepeatCorrelation:
    """Repeat model: an attempt copies the previous outcome with probability ``rho`` (spec 2.3).

    ``P(all k fail | p) = p (rho + (1 - rho) p)^(k - 1)``; ``rho = 0`` is iid. The tail exponent stays ``beta``
    but the effective number of attempts is about ``1 + (1 - rho)(k - 1)``.

    Parameters
    ----------
    rho : float
        Copy probability in ``[0, 1)``.
    """

    name = "repeat"
    param_name = "rho"
    bounds = (0.0, 0.999)

    def __init__(self, rho: float = 0.0) -> None:
        rho = check_real(rho, "rho", low=0.0, high=1.0, high_open=True)
        self.rho = rho

    @property
    def value(self) -> float:
        """The correlation parameter ``rho``."""
        return self.rho

    def replace(self, value: float) -> RepeatCorrelation:
        """A copy with ``rho = value``."""
        return RepeatCorrelation(value)

    def log_p_all_fail(self, p: Any, k: Any) -> np.ndarray:
        """``log p + (k - 1) log(rho + (1 - rho) p)``."""
        p, k = _check_p_k(p, k)
        k = np.asarray(k, dtype=float)
        p = np.asarray(p, dtype=float)
        with np.errstate(invalid="ignore"):
            return np.where(k == 0, 0.0, _log(p) + (k - 1) * _log(self.rho + (1 - self.rho) * p))

    def log_expected_all_fail(self, alpha: float, beta: float, k: Any) -> np.ndarray:
        """Exact ``log E_J[B(alpha + 1 + J, beta)] - log B(alpha, beta)``, ``J ~ Bin(k - 1, 1 - rho)``."""
        ks = np.asarray(k, dtype=float)
        flat = np.atleast_1d(ks).ravel()
        if np.any(flat != np.round(flat)) or np.any(flat < 0):
            raise ValueError(f"RepeatCorrelation needs integer k >= 0, got {flat[flat != np.round(flat)][:1]}")
        out = np.empty(flat.size)
        base = betaln(alpha, beta)
        q = 1.0 - self.rho
        for i, kk in enumerate(flat.astype(np.int64)):
            if kk == 0:
                out[i] = 0.0
                continue
            m = kk - 1
            if self.rho == 0.0:
                out[i] = betaln(alpha + kk, beta) - base
                continue
            j = np.arange(m + 1, dtype=float)
            log_pmf = (gammaln(m + 1) - gammaln(j + 1) - gammaln(m - j + 1) + j * np.log(q)
                       + (m - j) * np.log(self.rho))
            out[i] = logsumexp(log_pmf + betaln(alpha + 1 + j, beta)) - base
        return out.reshape(ks.shape)

    def exponent_factor(self) -> float:
        """1: copying shifts the curve (fewer effective attempts) but keeps the exponent ``beta``."""
        return 1.0

    def sample_outcomes(self, p: np.ndarray, n_attempts: int, rng: np.random.Generator) -> np.ndarray:
        """Boolean success matrix ``(len(p), n_attempts)``: a Markov chain that repeats with prob ``rho``."""
        n_attempts = int(n_attempts)
        out = np.empty((p.size, n_attempts), dtype=bool)
        out[:, 0] = rng.random(p.size) >= p
        for t in range(1, n_attempts):
            copy = rng.random(p.size) < self.rho
            fresh = rng.random(p.size) >= p
            out[:, t] = np.where(copy, out[:, t - 1], fresh)
        return out

    def __repr__(self) -> str:
        return f"RepeatCorrelation(rho={self.rho:g})"


class PowerCorrelation:
    """Power model: ``P(all k fail | p) = p^(k^gamma)`` (spec 2.3); ``gamma = 1`` is iid.

    Parameters
    ----------
    gamma : float
        Effective-attempt exponent in ``(0, 1]``; the coverage tail decays as ``k^(-gamma * beta)``.
    """

    name = "power"
    param_name = "gamma"
    bounds = (1e-3, 1.0)

    def __init__(self, gamma: float = 1.0) -> None:
        gamma = check_real(gamma, "gamma", low=0.0, low_open=True, high=1.0)
        self.gamma = gamma

    @property
    def value(self) -> float:
        """The correlation parameter ``gamma``."""
        return self.gamma

    def replace(self, value: float) -> PowerCorrelation:
        """A copy with ``gamma = value``."""
        return PowerCorrelation(value)

    def log_p_all_fail(self, p: Any, k: Any) -> np.ndarray:
        """``k^gamma log p``."""
        p, k = _check_p_k(p, k)
        k = np.asarray(k, dtype=float)
        with np.errstate(invalid="ignore"):
            return np.where(k == 0, 0.0, k**self.gamma * _log(p))

    def log_expected_all_fail(self, alpha: float, beta: float, k: Any) -> np.ndarray:
        """``log B(alpha + k^gamma, beta) - log B(alpha, beta)``."""
        k = np.asarray(k, dtype=float)
        return betaln(alpha + k**self.gamma, beta) - betaln(alpha, beta)

    def exponent_factor(self) -> float:
        """``gamma``: the tail exponent is ``gamma * beta``."""
        return self.gamma

    def sample_outcomes(self, p: np.ndarray, n_attempts: int, rng: np.random.Generator) -> np.ndarray:
        """Not available: the power family specifies only ``P(all k fail)``, not a joint law of the attempts."""
        raise ValueError("PowerCorrelation defines only P(all k attempts fail | p), not a joint law of individual "
                         "attempts; sample with IID() or RepeatCorrelation(rho) instead")

    def __repr__(self) -> str:
        return f"PowerCorrelation(gamma={self.gamma:g})"


def correlation_from_name(name: str, value: float | None = None) -> Any:
    """Build a correlation model from ``"iid"``, ``"repeat"`` or ``"power"`` (with its parameter value)."""
    if name == "iid":
        return IID()
    if name == "repeat":
        return RepeatCorrelation(0.0 if value is None else value)
    if name == "power":
        return PowerCorrelation(1.0 if value is None else value)
    raise ValueError(f"correlation family must be 'iid', 'repeat' or 'power', got {name!r}")
