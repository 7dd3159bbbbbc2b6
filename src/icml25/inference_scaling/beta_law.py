"""The Beta coverage law of 'A Simple Model of Inference Scaling Laws' (Levi, ICML 2025).

Problem ``i`` fails a single attempt with probability ``p_i ~ Beta(alpha, beta)``; a fraction ``1 - A`` of the
problems is never solved. With iid attempts

    pass@k = A [1 - B(alpha + k, beta) / B(alpha, beta)]                      (Eq. 7)
    L_inf(k) = B(alpha + k, beta) / B(alpha, beta) ~ Gamma(alpha+beta)/Gamma(alpha) k^(-beta)   (Eq. 8)

so the inference loss decays as a power law in ``k`` with exponent ``beta``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_array, check_positive, check_probability

from .correlation import IID, TrialCorrelation

__all__ = ["BetaCoverageLaw", "sample_counts"]


def _check_positive(x: Any, name: str) -> float:
    return check_positive(x, name)


def _k_array(k: Any) -> np.ndarray:
    """Numbers of attempts (any shape, elementwise): finite and >= 0."""
    return check_array(k, "k", min_size=0, low=0.0)


class BetaCoverageLaw:
    """The Beta coverage law from the 'A Simple Model of Inference Scaling Laws' (ICML 2025) paper.

    ``pass@k = A [1 - E_p[P(all k fail | p)]]`` with failure probabilities ``p ~ Beta(alpha, beta)``; for iid
    attempts ``E_p[p^k] = B(alpha + k, beta) / B(alpha, beta)`` (Eq. 7). ``beta`` is the shape parameter on the
    success side of the failure probability and sets the large-k power law ``k^(-beta)``; ``alpha`` sets where it
    begins and, with ``beta``, the single-attempt coverage ``A beta / (alpha + beta)``.

    Parameters
    ----------
    alpha : float
        Beta shape on the failure side (> 0).
    beta : float
        Beta shape on the success side (> 0): the inference-loss exponent.
    A : float
        Ceiling in (0, 1]: the fraction of problems that are solvable at all.
    correlation : TrialCorrelation
        Joint law of the attempts; :class:`~icml25.inference_scaling.IID` by default.

    Attributes
    ----------
    exponent : float
        Large-k decay exponent of the inference loss (``beta``, or ``gamma * beta`` for the power family).

    References
    ----------
    N. Levi, "A Simple Model of Inference Scaling Laws", ICML 2025, arXiv:2410.16377.

    Examples
    --------
    >>> law = BetaCoverageLaw(alpha=2.0, beta=0.5)
    >>> round(float(law.pass_at_k(1)), 6)
    0.2
    >>> bool(law.pass_at_k(10_000) < 1.0)
    True
    """

    def __init__(self, alpha: float, beta: float, A: float = 1.0, correlation: TrialCorrelation | None = None):
        self.alpha = _check_positive(alpha, "alpha")
        self.beta = _check_positive(beta, "beta")
        A = _check_positive(A, "A")
        if A > 1.0:
            raise ValueError(f"A must be in (0, 1], got {A!r}")
        self.A = A
        corr = IID() if correlation is None else correlation
        if not isinstance(corr, TrialCorrelation):
            raise TypeError(f"correlation must implement TrialCorrelation (log_p_all_fail, log_expected_all_fail),"
                            f" got {type(corr).__name__}")
        self.correlation = corr

    # ------------------------------------------------------------------ closed forms
    def log_inference_loss(self, k: Any) -> np.ndarray:
        """``log L_inf(k) = log E_p[P(all k fail | p)]`` (log space; stable for k up to 10^9)."""
        return np.asarray(self.correlation.log_expected_all_fail(self.alpha, self.beta, _k_array(k)))

    def inference_loss(self, k: Any) -> np.ndarray:
        """Inference loss ``L_inf(k) = E_p[P(all k fail | p)] = 1 - pass@k / A`` (Eq. 8, spec 2.2).

        Parameters
        ----------
        k : float or array-like
            Number(s) of attempts (>= 0).

        Returns
        -------
        ndarray, shape of ``k``
            Expected failure probability of a solvable problem after ``k`` attempts.
        """
        return np.exp(self.log_inference_loss(k))

    def pass_at_k(self, k: Any) -> np.ndarray:
        """Coverage ``pass@k = A (1 - L_inf(k))`` (Eq. 7), shape of ``k``."""
        return self.A * -np.expm1(self.log_inference_loss(k))

    def neg_log_coverage(self, k: Any) -> np.ndarray:
        """Brown/Schaeffer convention ``-log pass@k`` (shape of ``k``)."""
        return -np.log(self.pass_at_k(k))

    def asymptotic_loss(self, k: Any, uniform: bool = False) -> np.ndarray:
        """Large-k power law ``Gamma(alpha+beta)/Gamma(alpha) k^(-beta)`` of the iid inference loss (spec 2.1).

        Parameters
        ----------
        k : float or array-like
            Attempts (> 0).
        uniform : bool
            Use the more accurate ``(k + alpha + (beta - 1)/2)^(-beta)`` in place of ``k^(-beta)``.

        Returns
        -------
        ndarray, shape of ``k``
            Approximation of :meth:`inference_loss` for ``k >> alpha`` (exponent :attr:`exponent`).
        """
        k = _k_array(k)
        g = self.correlation.exponent_factor()
        keff = k**g
        if uniform:
            keff = keff + self.alpha + (self.beta - 1.0) / 2.0
        return np.exp(gammaln(self.alpha + self.beta) - gammaln(self.alpha) - self.beta * np.log(keff))

    @property
    def exponent(self) -> float:
        """Tail exponent of the inference loss: ``beta`` times the correlation's factor (``gamma`` or 1)."""
        return self.beta * self.correlation.exponent_factor()

    @property
    def pass_at_1(self) -> float:
        """Single-attempt coverage ``A beta / (alpha + beta)``."""
        return self.A * self.beta / (self.alpha + self.beta)

    # ------------------------------------------------------------------ inverses
    def k_for_loss(self, eps: float) -> float:
        """Attempts ``k`` at which the inference loss falls to ``eps`` (real-valued; spec 2.2).

        Raises
        ------
        ValueError
            Unless ``0 < eps < 1``.
        """
        eps = check_probability(eps, "eps", open_low=True, open_high=True)
        target = np.log(eps)

        def f(logk: float) -> float:
            return float(self.log_inference_loss(np.exp(logk))) - target

        hi = 1.0
        while f(hi) > 0:
            hi *= 2.0
            if hi > 700:
                raise ValueError(f"loss {eps!r} is not reached below k = exp(700)")
        if f(-30.0) <= 0:
            return float(np.exp(-30.0))
        return float(np.exp(brentq(f, -30.0, hi, xtol=1e-12)))

    def k_for_coverage(self, target: float) -> float:
        """Attempts ``k`` at which ``pass@k`` reaches ``target`` (``0 < target < A``)."""
        target = check_probability(target, "target", open_low=True)
        if not target < self.A:
            raise ValueError(f"target coverage must be in (0, A={self.A:g}), got {target!r}")
        return self.k_for_loss(1.0 - target / self.A)

    # ------------------------------------------------------------------ sampling
    def sample(self, n_problems: int, n_attempts: int, random_state: Any = None,
               return_outcomes: bool = False) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
        """Draw synthetic per-problem counts from the law (spec 5, ``sample_counts``).

        Parameters
        ----------
        n_problems, n_attempts : int
            Number of problems and attempts per problem.
        random_state : None, int or numpy Generator
            Seed.
        return_outcomes : bool
            Return the boolean success matrix ``(n_problems, n_attempts)`` instead of counts.

        Returns
        -------
        (n, c) : tuple of ndarray of int, shape (n_problems,)
            Attempts and successes per problem (or the outcome matrix when ``return_outcomes``).
        """
        for v, name in ((n_problems, "n_problems"), (n_attempts, "n_attempts")):
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        rng = check_random_state(random_state)
        p = rng.beta(self.alpha, self.beta, size=int(n_problems))
        p[rng.random(int(n_problems)) >= self.A] = 1.0  # unsolvable problems
        if isinstance(self.correlation, IID) and not return_outcomes:
            c = rng.binomial(int(n_attempts), 1.0 - p)
            return np.full(int(n_problems), int(n_attempts), dtype=np.int64), c.astype(np.int64)
        outcomes = self.correlation.sample_outcomes(p, int(n_attempts), rng)  # type: ignore[attr-defined]
        if return_outcomes:
            return outcomes
        return np.full(int(n_problems), int(n_attempts), dtype=np.int64), outcomes.sum(axis=1).astype(np.int64)

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit_counts(cls, n: Any, c: Any, fit_A: bool = False, correlation: TrialCorrelation | None = None) -> Any:
        """Beta-binomial (``fit_A=True``: zero-inflated) maximum likelihood; see :func:`fit_counts`."""
        from .fitting import fit_counts

        return fit_counts(n, c, fit_A=fit_A, correlation=correlation)

    @classmethod
    def fit_curve(cls, ks: Any, coverage: Any, fit_A: bool = True, weights: Any = None) -> Any:
        """Least squares on an aggregate coverage curve; see :func:`fit_curve`."""
        from .fitting import fit_curve

        return fit_curve(ks, coverage, fit_A=fit_A, weights=weights)

    def get_params(self) -> dict[str, Any]:
        """Parameters as a dict (``alpha``, ``beta``, ``A``, ``correlation``)."""
        return {"alpha": self.alpha, "beta": self.beta, "A": self.A, "correlation": self.correlation}

    def __repr__(self) -> str:
        corr = "" if isinstance(self.correlation, IID) else f", correlation={self.correlation!r}"
        return f"BetaCoverageLaw(alpha={self.alpha:.4g}, beta={self.beta:.4g}, A={self.A:.4g}{corr})"


def sample_counts(alpha: float, beta: float, A: float, n_problems: int, n_attempts: int, random_state: Any = None,
                  correlation: TrialCorrelation | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic per-problem counts ``(n, c)`` from ``BetaCoverageLaw(alpha, beta, A, correlation)`` (spec 5).

    Parameters
    ----------
    alpha, beta, A : float
        Law parameters (see :class:`BetaCoverageLaw`).
    n_problems, n_attempts : int
        Problems and attempts per problem.
    random_state : None, int or numpy Generator
        Seed.
    correlation : TrialCorrelation, optional
        Joint law of the attempts (iid by default; the power family cannot be sampled attempt by attempt).

    Returns
    -------
    n, c : ndarray of int64, shape (n_problems,)
    """
    law = BetaCoverageLaw(alpha, beta, A, correlation)
    out = law.sample(n_problems, n_attempts, random_state)
    assert isinstance(out, tuple)
    return out
