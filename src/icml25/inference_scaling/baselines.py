"""Baseline coverage laws with one fit/predict API, and :func:`compare_laws` (spec 2.4-5).

- :class:`ExpPowerLaw` -- Brown et al. (2024) Eq. 3: ``log pass@k = a k^b`` (``a, b < 0``), least squares on
  ``log`` coverage.
- :class:`NegLogPowerLaw` -- Schaeffer et al. (2025): ``-log pass@k = C k^(-b)``, ordinary least squares in
  log-log space.
- :class:`SingleDifficulty` -- every problem has the same success probability ``p_bar``:
  ``pass@k = 1 - (1 - p_bar)^k``.
- :class:`BetaCurveLaw` -- the Beta coverage law (Eq. 7) fitted by least squares on the curve, same API.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import least_squares, minimize_scalar

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_int

from .estimators import coverage_curve, subsample_counts, validate_counts, validate_ks
from .fitting import fit_counts, fit_curve, validate_curve

__all__ = ["ExpPowerLaw", "NegLogPowerLaw", "SingleDifficulty", "BetaCurveLaw", "BetaCoverageEstimator", "compare_laws"]


class _CurveLaw:
    """Shared fit/predict plumbing (scikit-learn style: ``fit`` returns self, fitted attributes end in ``_``)."""

    _param_names: tuple[str, ...] = ()

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor parameters (none for these laws)."""
        return {}

    def fitted_params(self) -> dict[str, float]:
        """Fitted parameters as a dict (raises if not fitted)."""
        self._check_fitted()
        return {p: float(getattr(self, p + "_")) for p in self._param_names}

    def _check_fitted(self) -> None:
        if not all(hasattr(self, p + "_") for p in self._param_names):
            raise ValueError(f"{type(self).__name__} is not fitted yet; call fit(ks, coverage) first")

    def fit_counts(self, n: Any, c: Any, ks: Any) -> _CurveLaw:
        """Fit on the empirical coverage curve of counts ``(n, c)`` at attempts ``ks`` (each ``<= min n``)."""
        return self.fit(ks, coverage_curve(n, c, ks))

    def fit(self, ks: Any, coverage: Any) -> _CurveLaw:  # pragma: no cover - overridden
        """Fit the law to a coverage curve."""
        raise TypeError("abstract")

    def predict(self, ks: Any) -> np.ndarray:  # pragma: no cover - overridden
        """Predicted coverage at ``ks``."""
        raise TypeError("abstract")


def _inner(k: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = (y > 0) & (y < 1)
    if keep.sum() < 2:
        raise ValueError("need at least two curve points with 0 < coverage < 1 to fit a power law")
    return k[keep], y[keep]


class ExpPowerLaw(_CurveLaw):
    """Brown et al. (2024) exponentiated power law ``pass@k = exp(a k^b)`` with ``a < 0``, ``b < 0`` (their Eq. 3).

    Fitted by least squares on ``log pass@k`` (started from the log-log regression).

    Attributes
    ----------
    a_, b_ : float
        Fitted parameters.
    """

    _param_names = ("a", "b")

    def fit(self, ks: Any, coverage: Any) -> ExpPowerLaw:
        """Fit ``a, b`` to a curve ``{(k_j, coverage_j)}`` (coverage in (0, 1), non-decreasing)."""
        k, y = _inner(*validate_curve(ks, coverage))
        slope, icpt = np.polyfit(np.log(k), np.log(-np.log(y)), 1)
        x0 = np.array([-np.exp(icpt), min(slope, -1e-3)])

        def resid(t: np.ndarray) -> np.ndarray:
            return t[0] * k ** t[1] - np.log(y)

        res = least_squares(resid, x0, bounds=([-np.inf, -10.0], [0.0, 0.0]), xtol=1e-12, ftol=1e-12)
        self.a_, self.b_ = float(res.x[0]), float(res.x[1])
        return self

    def predict(self, ks: Any) -> np.ndarray:
        """``exp(a k^b)`` at ``ks``."""
        self._check_fitted()
        k = validate_ks(ks, integer=False)
        return np.exp(self.a_ * k**self.b_)


class NegLogPowerLaw(_CurveLaw):
    """Schaeffer et al. (2025): ``-log pass@k = C k^(-b)``, fitted by OLS of ``log(-log pass@k)`` on ``log k``.

    Attributes
    ----------
    C_, b_ : float
        Fitted prefactor and exponent.
    """

    _param_names = ("C", "b")

    def fit(self, ks: Any, coverage: Any) -> NegLogPowerLaw:
        """Fit ``C, b`` by ordinary least squares in log-log space."""
        k, y = _inner(*validate_curve(ks, coverage))
        slope, icpt = np.polyfit(np.log(k), np.log(-np.log(y)), 1)
        self.C_, self.b_ = float(np.exp(icpt)), float(-slope)
        return self

    def predict(self, ks: Any) -> np.ndarray:
        """``exp(-C k^(-b))`` at ``ks``."""
        self._check_fitted()
        k = validate_ks(ks, integer=False)
        return np.exp(-self.C_ * k ** (-self.b_))


class SingleDifficulty(_CurveLaw):
    """Every problem equally hard: ``pass@k = 1 - (1 - p_bar)^k`` with ``p_bar`` the mean pass@1.

    Attributes
    ----------
    p_bar_ : float
        Single-attempt success probability.
    """

    _param_names = ("p_bar",)

    def fit(self, ks: Any, coverage: Any) -> SingleDifficulty:
        """``p_bar`` = coverage at ``k = 1`` when given, else the least-squares value on the curve."""
        k, y = validate_curve(ks, coverage)
        if k[0] == 1.0:
            self.p_bar_ = float(y[0])
            return self
        res = minimize_scalar(lambda p: float(np.sum((1 - (1 - p) ** k - y) ** 2)), bounds=(0.0, 1.0),
                              method="bounded")
        self.p_bar_ = float(res.x)
        return self

    def fit_counts(self, n: Any, c: Any, ks: Any = None) -> SingleDifficulty:
        """``p_bar = mean_i c_i / n_i`` (the mean pass@1; ``ks`` is ignored)."""
        n_arr, c_arr = validate_counts(n, c)
        self.p_bar_ = float(np.mean(c_arr / n_arr))
        return self

    def predict(self, ks: Any) -> np.ndarray:
        """``1 - (1 - p_bar)^k`` at ``ks``."""
        self._check_fitted()
        k = validate_ks(ks, integer=False)
        return -np.expm1(k * np.log1p(-min(self.p_bar_, 1 - 1e-300)))


class BetaCurveLaw(_CurveLaw):
    """The Beta coverage law (Eq. 7) fitted by least squares on a curve, with the baselines' fit/predict API.

    Parameters
    ----------
    fit_A : bool
        Fit the ceiling ``A`` as well (otherwise ``A = 1``).

    Attributes
    ----------
    law_ : BetaCoverageLaw
        The fitted law.
    """

    _param_names = ("alpha", "beta", "A")

    def __init__(self, fit_A: bool = True) -> None:
        self.fit_A = fit_A

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """``{'fit_A': ...}``."""
        return {"fit_A": self.fit_A}

    def fit(self, ks: Any, coverage: Any) -> BetaCurveLaw:
        """Least-squares fit of ``(alpha, beta[, A])`` (see :func:`~icml25.inference_scaling.fit_curve`)."""
        self.law_ = fit_curve(ks, coverage, fit_A=self.fit_A).law
        self.alpha_, self.beta_, self.A_ = self.law_.alpha, self.law_.beta, self.law_.A
        return self

    def predict(self, ks: Any) -> np.ndarray:
        """Eq. 7 at ``ks``."""
        self._check_fitted()
        return self.law_.pass_at_k(validate_ks(ks, integer=False))


class BetaCoverageEstimator(_CurveLaw):
    """scikit-learn-style wrapper of :func:`~icml25.inference_scaling.fit_counts`: ``fit(n, c).predict(ks)``.

    Parameters
    ----------
    fit_A : bool
        Fit the zero-inflation ceiling ``A`` (otherwise ``A = 1``).

    Attributes
    ----------
    law_ : BetaCoverageLaw
        The fitted law.
    result_ : CountFit
        Log-likelihood, AIC and standard errors of the fit.

    Examples
    --------
    >>> from icml25.inference_scaling import sample_counts
    >>> n, c = sample_counts(5.0, 0.3, 1.0, 300, 1000, random_state=0)
    >>> est = BetaCoverageEstimator().fit(n, c)
    >>> bool(abs(est.beta_ - 0.3) < 0.1)
    True
    """

    _param_names = ("alpha", "beta", "A")

    def __init__(self, fit_A: bool = False) -> None:
        self.fit_A = fit_A

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """``{'fit_A': ...}``."""
        return {"fit_A": self.fit_A}

    def set_params(self, **params: Any) -> BetaCoverageEstimator:
        """Set ``fit_A``; returns self."""
        for k, v in params.items():
            if k != "fit_A":
                raise ValueError(f"unknown parameter {k!r}; BetaCoverageEstimator has only 'fit_A'")
            self.fit_A = bool(v)
        return self

    def fit(self, n: Any, c: Any) -> BetaCoverageEstimator:  # type: ignore[override]
        """Beta-binomial (zero-inflated when ``fit_A``) maximum likelihood on per-problem counts ``(n, c)``."""
        self.result_ = fit_counts(n, c, fit_A=self.fit_A)
        self.law_ = self.result_.law
        self.alpha_, self.beta_, self.A_ = self.law_.alpha, self.law_.beta, self.law_.A
        return self

    def predict(self, ks: Any) -> np.ndarray:
        """Coverage (Eq. 7) at ``ks`` (any real ``k > 0``, including beyond the sampled budget)."""
        self._check_fitted()
        return self.law_.pass_at_k(validate_ks(ks, integer=False))


def compare_laws(n: Any, c: Any, ks: Any, holdout_k: int | None = None, random_state: Any = 0,
                 fit_A: bool = False) -> list[dict[str, Any]]:
    """Fit every law on counts and compare its coverage predictions with the empirical curve.

    With ``holdout_k``, each law sees only ``holdout_k`` attempts per problem (a hypergeometric subsample of
    the counts, i.e. the curve for ``k <= holdout_k``) and is scored on the full-budget curve, in range
    (``k <= holdout_k``) and in extrapolation (``k > holdout_k``).

    Parameters
    ----------
    n, c : array-like of int, shape (n_problems,)
        Attempts and successes per problem.
    ks : array-like of int, shape (m,)
        Evaluation grid, each ``<= min(n)``.
    holdout_k : int, optional
        Fitting budget per problem (``< min(n)``); None fits on everything.
    random_state : None, int or numpy Generator
        Seed of the subsample.
    fit_A : bool
        Fit the ceiling ``A`` in the Beta laws.

    Returns
    -------
    list of dict
        One row per law: ``law``, ``mae_fit`` (k within the fitting budget), ``mae_extrap`` (k beyond it, NaN
        without holdout), ``err_at_kmax`` (prediction minus empirical at the largest k) and ``params``.
    """
    n_arr, c_arr = validate_counts(n, c)
    grid = validate_ks(ks)
    emp = coverage_curve(n_arr, c_arr, grid)
    if holdout_k is None:
        n_fit, c_fit, budget = n_arr, c_arr, int(n_arr.min())
    else:
        holdout_k = check_int(holdout_k, "holdout_k", low=1, high=int(n_arr.min()))
        n_fit, c_fit = subsample_counts(n_arr, c_arr, holdout_k, check_random_state(random_state))
        budget = holdout_k
    fit_ks = grid[grid <= budget]
    if fit_ks.size < 2:
        raise ValueError(f"need at least two ks <= the fitting budget {budget}, got {fit_ks.size}")
    fit_curve_vals = coverage_curve(n_fit, c_fit, fit_ks)
    laws: dict[str, Any] = {}
    laws["beta (count MLE)"] = fit_counts(n_fit, c_fit, fit_A=fit_A).law
    laws["beta (curve LS)"] = BetaCurveLaw(fit_A=fit_A).fit(fit_ks, fit_curve_vals)
    laws["exp power law (Brown)"] = ExpPowerLaw().fit(fit_ks, fit_curve_vals)
    laws["neg-log power law (Schaeffer)"] = NegLogPowerLaw().fit(fit_ks, fit_curve_vals)
    laws["single difficulty"] = SingleDifficulty().fit_counts(n_fit, c_fit)
    inside = grid <= budget
    rows = []
    for name, law in laws.items():
        pred = law.pass_at_k(grid) if hasattr(law, "pass_at_k") else law.predict(grid)
        err = pred - emp
        params = law.get_params() if hasattr(law, "pass_at_k") else law.fitted_params()
        params = {k: round(float(v), 5) for k, v in params.items() if isinstance(v, (int, float))}
        rows.append({"law": name, "mae_fit": float(np.mean(np.abs(err[inside]))),
                     "mae_extrap": float(np.mean(np.abs(err[~inside]))) if np.any(~inside) else float("nan"),
                     "err_at_kmax": float(err[-1]), "params": str(params)})
    return rows
