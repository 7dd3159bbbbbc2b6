"""Fitting the Beta coverage law: beta-binomial MLE on raw counts, least squares on aggregate curves (spec 2.4).

- :func:`fit_counts` maximises ``sum_i [ln C(n_i, c_i) + ln B(f_i + alpha, c_i + beta) - ln B(alpha, beta)]``
  over ``(ln alpha, ln beta)`` with analytic (digamma) gradients; ``fit_A=True`` adds a zero-inflation weight
  (a problem is unsolvable with probability ``1 - A``). Standard errors from the observed information.
- :func:`fit_curve` fits ``(alpha, beta[, A])`` to ``{(k_j, coverage_j)}`` by least squares (paper-style).
- :func:`fit_correlation` fits the parameter of a correlated-attempts family with the marginal law held fixed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import least_squares, minimize, minimize_scalar
from scipy.special import betaln, digamma, expit, gammaln, logit

from icml25.core.validation import check_array, check_positive, check_probability

from .beta_law import BetaCoverageLaw
from .correlation import TrialCorrelation
from .estimators import validate_counts

__all__ = ["FitError", "CountFit", "CurveFit", "fit_counts", "fit_curve", "fit_correlation",
           "betabinom_loglik", "validate_curve"]

_LOG_BOUND = 15.0  # |ln alpha|, |ln beta| beyond this is treated as a degenerate (non-converged) fit


class FitError(RuntimeError):
    """A fit did not converge or ran to a degenerate boundary; the message carries the optimiser's reason."""


@dataclass
class CountFit:
    """Result of :func:`fit_counts`.

    Attributes
    ----------
    law : BetaCoverageLaw
        The fitted law.
    loglik : float
        Maximised log-likelihood (including the binomial coefficients).
    aic : float
        ``2 n_params - 2 loglik``.
    se : dict
        Standard errors of ``alpha``, ``beta`` (and ``A``) from the inverse observed information.
    n_params : int
    n_problems : int
    zero_fraction : float
        Fraction of problems with no success (resolution limit ``1 / n_i``).
    message : str
        The optimiser's message.
    """

    law: BetaCoverageLaw
    loglik: float
    aic: float
    se: dict[str, float]
    n_params: int
    n_problems: int
    zero_fraction: float
    message: str = ""

    @property
    def alpha(self) -> float:
        """Fitted ``alpha``."""
        return self.law.alpha

    @property
    def beta(self) -> float:
        """Fitted ``beta``."""
        return self.law.beta

    @property
    def A(self) -> float:
        """Fitted (or fixed) ceiling ``A``."""
        return self.law.A


@dataclass
class CurveFit:
    """Result of :func:`fit_curve` / :func:`fit_correlation`: the law, its RMSE on the curve and the message."""

    law: BetaCoverageLaw
    rmse: float
    message: str = ""
    residuals: np.ndarray = field(default_factory=lambda: np.zeros(0))


def betabinom_loglik(alpha: float, beta: float, n: Any, c: Any, A: float = 1.0) -> float:
    """Log-likelihood of counts under the (zero-inflated) beta-binomial of failures (spec 2.4-2).

    Parameters
    ----------
    alpha, beta : float
        Beta law of the failure probability.
    n, c : array-like of int, shape (n_problems,)
        Attempts and successes.
    A : float
        Solvable fraction; unsolvable problems have ``c = 0``.

    Returns
    -------
    float
    """
    alpha, beta = check_positive(alpha, "alpha"), check_positive(beta, "beta")
    A = check_probability(A, "A", open_low=True)
    n_arr, c_arr = validate_counts(n, c)
    return float(np.sum(_per_problem_loglik(np.log(alpha), np.log(beta), n_arr, c_arr, A)[0]))


def _log_binom(n: np.ndarray, c: np.ndarray) -> np.ndarray:
    return gammaln(n + 1.0) - gammaln(c + 1.0) - gammaln(n - c + 1.0)


def _per_problem_loglik(la: float, lb: float, n: np.ndarray, c: np.ndarray, A: float = 1.0,
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Per-problem log-likelihood and its gradient wrt (ln alpha, ln beta, logit A), shape (m,) and (m, 3)."""
    a, b = np.exp(la), np.exp(lb)
    f = n - c
    log_bb = _log_binom(n, c) + betaln(f + a, c + b) - betaln(a, b)
    common = digamma(a + b) - digamma(n + a + b)
    g_la = a * (digamma(f + a) - digamma(a) + common)
    g_lb = b * (digamma(c + b) - digamma(b) + common)
    grad = np.zeros((n.size, 3))
    if A >= 1.0:
        grad[:, 0], grad[:, 1] = g_la, g_lb
        return log_bb, grad
    zero = c == 0
    ll = np.log(A) + log_bb
    # zero-success problems: log(A L + 1 - A)
    lz = np.logaddexp(np.log(A) + log_bb[zero], np.log1p(-A))
    ll[zero] = lz
    w = np.ones(n.size)  # d ll / d log_bb
    w[zero] = np.exp(np.log(A) + log_bb[zero] - lz)
    grad[:, 0], grad[:, 1] = w * g_la, w * g_lb
    dA = np.full(n.size, 1.0 - A)  # d/d logit(A) of log A = 1 - A
    dA[zero] = (np.exp(log_bb[zero]) - 1.0) * A * (1.0 - A) / np.exp(lz)
    grad[:, 2] = dA
    return ll, grad


def _moment_start(n: np.ndarray, c: np.ndarray) -> tuple[float, float]:
    """Method-of-moments start for (alpha, beta) from the success fractions (clipped to sane values)."""
    s = c / n
    m = float(np.clip(s.mean(), 1e-4, 1 - 1e-4))  # mean success = beta / (alpha + beta)
    v = float(s.var())
    conc = m * (1 - m) / v - 1.0 if v > 0 else 10.0
    conc = float(np.clip(conc, 0.05, 1e4))
    return (1 - m) * conc, m * conc


def fit_counts(n: Any, c: Any, fit_A: bool = False, correlation: TrialCorrelation | None = None) -> CountFit:
    """Fit ``BetaCoverageLaw`` to per-problem counts by (zero-inflated) beta-binomial maximum likelihood.

    Parameters
    ----------
    n : int or array-like of int, shape (n_problems,)
        Attempts per problem (may differ between problems).
    c : array-like of int, shape (n_problems,)
        Successes per problem. Keep the ``c_i = 0`` problems: they carry the power-law tail.
    fit_A : bool
        Also fit the ceiling ``A`` (zero-inflated beta-binomial: unsolvable with probability ``1 - A``).
    correlation : TrialCorrelation, optional
        Attached to the returned law. Single-attempt counts identify only the marginal law; fit the correlation
        parameter on multi-attempt data with :func:`fit_correlation`.

    Returns
    -------
    CountFit

    Raises
    ------
    ValueError
        Invalid counts, or no problem was ever solved (the law is not identifiable).
    FitError
        The optimiser failed or a parameter ran to its boundary (degenerate data); the message says which.
    """
    n_arr, c_arr = validate_counts(n, c)
    if not np.any(c_arr > 0):
        raise ValueError("c has no successes at all: the Beta law is not identifiable from all-zero counts")
    if np.all(c_arr == n_arr):
        raise ValueError("c equals n for every problem (no failures at all): the Beta law is not identifiable")
    nf, cf = n_arr.astype(float), c_arr.astype(float)
    a0, b0 = _moment_start(nf, cf)
    zero_frac = float(np.mean(c_arr == 0))

    def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
        if np.any(np.abs(theta[:2]) > _LOG_BOUND + 2.0) or not np.all(np.isfinite(theta)):
            return np.inf, np.zeros_like(theta)  # outside the admissible region: the line search backs off
        A = float(expit(theta[2])) if fit_A else 1.0
        ll, g = _per_problem_loglik(theta[0], theta[1], nf, cf, A)
        grad = -g.sum(axis=0)
        return -float(ll.sum()), (grad if fit_A else grad[:2])

    best = None
    starts = [(np.log(a0), np.log(b0)), (np.log(a0 + 1.0), np.log(max(b0, 0.1))), (np.log(5.0), np.log(0.5))]
    for la, lb in starts:
        x0 = np.array([la, lb] + ([logit(min(max(1.0 - 0.5 * zero_frac, 0.5), 0.99))] if fit_A else []))
        with np.errstate(over="ignore", invalid="ignore"):
            res = minimize(nll, x0, jac=True, method="BFGS", options={"maxiter": 2000, "gtol": 1e-7})
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
        converged = best is not None and np.linalg.norm(best.jac) <= 1e-4 * max(1.0, abs(best.fun))
        if converged and not fit_A:  # the 2-parameter likelihood is unimodal in practice: one good start suffices
            break
    assert best is not None
    if not np.all(np.isfinite(best.x)) or not np.isfinite(best.fun):
        raise FitError(f"beta-binomial fit did not converge: {best.message}")
    if np.any(np.abs(best.x[:2]) >= _LOG_BOUND - 1e-3):
        raise FitError(f"beta-binomial fit is degenerate: ln(alpha), ln(beta) = {best.x[:2]} reached the bound "
                       f"+-{_LOG_BOUND} (optimiser: {best.message})")
    if not best.success and np.linalg.norm(best.jac) > 1e-3 * max(1.0, abs(best.fun)):
        raise FitError(f"beta-binomial fit did not converge: {best.message}")
    theta = best.x
    alpha, beta = float(np.exp(theta[0])), float(np.exp(theta[1]))
    A = float(expit(theta[2])) if fit_A else 1.0
    se = _standard_errors(nll, theta, fit_A)
    law = BetaCoverageLaw(alpha, beta, A, correlation)
    k = 3 if fit_A else 2
    loglik = -float(best.fun)
    return CountFit(law=law, loglik=loglik, aic=2 * k - 2 * loglik, se=se, n_params=k, n_problems=int(n_arr.size),
                    zero_fraction=zero_frac, message=str(best.message))


def _standard_errors(nll: Any, theta: np.ndarray, fit_A: bool) -> dict[str, float]:
    """SEs of (alpha, beta, A) from a central-difference Hessian of the analytic gradient (delta method)."""
    d = theta.size
    H = np.zeros((d, d))
    for j in range(d):
        h = 1e-5 * max(1.0, abs(theta[j]))
        e = np.zeros(d)
        e[j] = h
        H[:, j] = (nll(theta + e)[1] - nll(theta - e)[1]) / (2 * h)
    H = 0.5 * (H + H.T)
    try:
        cov = np.linalg.inv(H)
        var = np.diag(cov)
    except np.linalg.LinAlgError:
        var = np.full(d, np.nan)
    sd = np.sqrt(np.where(var > 0, var, np.nan))
    out = {"alpha": float(np.exp(theta[0]) * sd[0]), "beta": float(np.exp(theta[1]) * sd[1])}
    if fit_A:
        A = expit(theta[2])
        out["A"] = float(A * (1 - A) * sd[2])
    return out


def validate_curve(ks: Any, coverage: Any, name: str = "coverage") -> tuple[np.ndarray, np.ndarray]:
    """Check an aggregate curve: same length, ``k >= 0`` finite, coverage in [0, 1] and non-decreasing in k.

    Returns the curve sorted by ``k`` (duplicate ``k`` must have equal coverage; they are averaged).
    """
    k = check_array(ks, "ks", ndim=1, min_size=0)
    y = check_array(coverage, name, ndim=1, min_size=0)
    if k.size != y.size or k.size == 0:
        raise ValueError(f"ks and {name} must be non-empty and of equal length, got {k.size} and {y.size}")
    if not (np.all(np.isfinite(k)) and np.all(np.isfinite(y))):
        raise ValueError(f"ks and {name} must be finite")
    if np.any(k <= 0):
        raise ValueError(f"ks must be positive numbers of attempts, got min {k.min()!r}")
    if np.any((y < 0) | (y > 1)):
        raise ValueError(f"{name} must lie in [0, 1], got range [{y.min()!r}, {y.max()!r}]")
    order = np.argsort(k, kind="stable")
    k, y = k[order], y[order]
    uk, inv = np.unique(k, return_inverse=True)
    uy = np.bincount(inv, weights=y) / np.bincount(inv)
    if np.any(np.diff(uy) < -1e-12):
        i = int(np.argmax(np.diff(uy) < -1e-12))
        raise ValueError(f"{name} must be non-decreasing in k: it falls from {uy[i]:.4g} at k={uk[i]:g} to "
                         f"{uy[i + 1]:.4g} at k={uk[i + 1]:g}")
    return uk, uy


def fit_curve(ks: Any, coverage: Any, fit_A: bool = True, weights: Any = None) -> CurveFit:
    """Fit ``(alpha, beta[, A])`` of Eq. 7 to an aggregate coverage curve by least squares (spec 2.4-3).

    Parameters
    ----------
    ks : array-like of float, shape (m,)
        Numbers of attempts (real values allowed, e.g. digitised curves).
    coverage : array-like of float, shape (m,)
        Coverage in [0, 1], non-decreasing in ``k``.
    fit_A : bool
        Fit the ceiling ``A`` (parametrised as ``sigmoid(a)``); otherwise ``A = 1``.
    weights : array-like, shape (m,), optional
        Non-negative residual weights (e.g. ``1 / variance``).

    Returns
    -------
    CurveFit
        The law and its (unweighted) RMSE on the curve.

    Raises
    ------
    ValueError
        Invalid curve (see :func:`validate_curve`) or weights.
    FitError
        No start of the optimiser converged.
    """
    k, y = validate_curve(ks, coverage)
    if weights is None:
        w = np.ones_like(y)
    else:
        k_raw = np.asarray(ks, dtype=float).ravel()
        w = validate_curve_weights(np.asarray(weights, dtype=float).ravel(), k_raw.size)
        if k.size != k_raw.size:
            raise ValueError("weights cannot be used with duplicate ks; de-duplicate the curve first")
        w = w[np.argsort(k_raw, kind="stable")]
    sw = np.sqrt(w)

    def resid(theta: np.ndarray) -> np.ndarray:
        A = float(expit(theta[2])) if fit_A else 1.0
        law = BetaCoverageLaw(np.exp(theta[0]), np.exp(theta[1]), A)
        return sw * (law.pass_at_k(k) - y)

    best = None
    for la in (np.log(1.0), np.log(5.0), np.log(20.0)):
        for lb in (np.log(0.2), np.log(0.5)):
            x0 = np.array([la, lb] + ([logit(min(max(y.max() + 0.05, 0.5), 0.99))] if fit_A else []))
            lo = [-_LOG_BOUND, -_LOG_BOUND] + ([-12.0] if fit_A else [])
            hi = [_LOG_BOUND, _LOG_BOUND] + ([20.0] if fit_A else [])
            try:
                res = least_squares(resid, x0, bounds=(lo, hi), method="trf", x_scale=1.0, xtol=1e-12,
                                    ftol=1e-12, gtol=1e-12, max_nfev=5000)
            except ValueError:
                continue
            if res.status > 0 and (best is None or res.cost < best.cost):
                best = res
    if best is None:
        raise FitError("least-squares fit of the Beta coverage law did not converge from any start")
    A = float(expit(best.x[2])) if fit_A else 1.0
    law = BetaCoverageLaw(float(np.exp(best.x[0])), float(np.exp(best.x[1])), A)
    r = law.pass_at_k(k) - y
    return CurveFit(law=law, rmse=float(np.sqrt(np.mean(r**2))), message=str(best.message), residuals=r)


def validate_curve_weights(w: np.ndarray, size: int) -> np.ndarray:
    """Check residual weights: ``size`` finite non-negative numbers, not all zero."""
    if w.size != size:
        raise ValueError(f"weights must have one entry per curve point ({size}), got {w.size}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise ValueError("weights must be finite, non-negative and not all zero")
    return w


def fit_correlation(law: BetaCoverageLaw, ks: Any, coverage: Any, family: Any) -> CurveFit:
    """Fit the parameter of a correlated-attempts family with the marginal ``(alpha, beta, A)`` held fixed.

    Single-attempt counts identify the marginal law; the joint behaviour of ``k`` attempts is read from an
    empirical multi-attempt coverage curve (spec 2.3, VAE study of 2.5).

    Parameters
    ----------
    law : BetaCoverageLaw
        Marginal law (e.g. from :func:`fit_counts` on single attempts).
    ks : array-like of int, shape (m,)
        Attempts at which ``coverage`` was measured.
    coverage : array-like of float, shape (m,)
        Empirical coverage of correlated batches.
    family : RepeatCorrelation or PowerCorrelation
        Family to fit (its current value is ignored); its ``bounds`` bound the search.

    Returns
    -------
    CurveFit
        ``law`` carries the fitted correlation; ``rmse`` on the curve.
    """
    k, y = validate_curve(ks, coverage)
    if not hasattr(family, "replace") or not hasattr(family, "bounds"):
        raise TypeError(f"family must be a parametrised correlation (RepeatCorrelation or PowerCorrelation), got "
                        f"{type(family).__name__}")

    def sse(v: float) -> float:
        m = BetaCoverageLaw(law.alpha, law.beta, law.A, family.replace(v))
        return float(np.sum((m.pass_at_k(k) - y) ** 2))

    lo, hi = family.bounds
    grid = np.linspace(lo, hi, 41)
    vals = [sse(v) for v in grid]
    i = int(np.argmin(vals))
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(sse, bounds=(a, b), method="bounded", options={"xatol": 1e-6})
    v = float(res.x) if res.fun <= vals[i] else float(grid[i])
    fitted = BetaCoverageLaw(law.alpha, law.beta, law.A, family.replace(v))
    r = fitted.pass_at_k(k) - y
    return CurveFit(law=fitted, rmse=float(np.sqrt(np.mean(r**2))), message=str(res.message), residuals=r)
