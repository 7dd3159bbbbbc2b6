"""RR-corrected binary regression by Fisher scoring, with Wald inference (spec §2.2, §2.4), and baselines."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy.stats import norm
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from icml25.core.validation import (
    check_array,
    check_int,
    check_option,
    check_positive,
    check_probability,
    precheck_sklearn_X,
)

from .channel import check_binary_labels, check_channel_array
from .links import LINKS, link_functions

__all__ = ["RRBinaryRegression", "naive_fit", "debiased_label_fit", "ConvergenceWarning"]


class ConvergenceWarning(UserWarning):
    """The RR likelihood has no finite maximiser (or Fisher scoring did not converge)."""


def _as_design(X: Any, fit_intercept: bool) -> np.ndarray:
    X = check_array(X, "X", ndim=2)
    return np.hstack([np.ones((X.shape[0], 1)), X]) if fit_intercept else X


def _check_full_rank(Z: np.ndarray, fit_intercept: bool) -> None:
    if Z.shape[0] < Z.shape[1]:
        raise ValueError(f"need at least as many rows as parameters: n={Z.shape[0]} < {Z.shape[1]}")
    sd = Z.std(0)
    start = 1 if fit_intercept else 0
    const = [j - start for j in range(start, Z.shape[1]) if sd[j] == 0]
    if const and fit_intercept:
        raise ValueError(f"covariate column(s) {const} are constant; drop them (the intercept is added for you)")
    if np.linalg.matrix_rank(Z) < Z.shape[1]:
        raise ValueError("the covariates are collinear (the design matrix is rank deficient); drop redundant "
                         "columns")


def _channel_arrays(p: Any, q: Any, n: int, names: tuple[str, str] = ("p", "q")) -> tuple[np.ndarray, np.ndarray]:
    if p is None or q is None:
        raise ValueError("pass the channel actually applied: p=P(y~=1|y=1) and q=P(y~=0|y=0), got "
                         f"p={p!r}, q={q!r}")
    p = np.broadcast_to(check_channel_array(p, names[0], n), (n,)).copy()
    q = np.broadcast_to(check_channel_array(q, names[1], n), (n,)).copy()
    if np.any(p + q - 1 <= 1e-9):
        raise ValueError("p + q must exceed 1: a channel with p + q <= 1 carries no information about the label "
                         "(relabel so that s = p + q - 1 > 0)")
    return p, q


def _loglik(Z, y, beta, p, q, link, ridge):  # type: ignore[no-untyped-def]
    F, _ = link_functions(link)(Z @ beta)
    G = np.clip((1 - q) + (p + q - 1) * F, 1e-15, 1 - 1e-15)
    return float(np.sum(y * np.log(G) + (1 - y) * np.log1p(-G)) - 0.5 * ridge * np.sum(beta[1:] ** 2))


def fisher_scoring(Z: np.ndarray, y: np.ndarray, p: np.ndarray, q: np.ndarray, link: str, ridge: float = 0.0,
                   max_iter: int = 100, beta0: np.ndarray | None = None) -> dict[str, Any]:
    """Maximise the RR log-likelihood ``sum y log G + (1-y) log(1-G)``, ``G = (1-q) + s F(z'beta)``
    (spec §2.2), by Fisher scoring with step-halving; ``ridge`` penalises all but the first coefficient.

    Returns a dict with ``beta``, ``info`` (expected information, penalty included), ``loglik``, ``n_iter``,
    ``converged``, ``score`` (per-record score vectors, for the sandwich).
    """
    fn = link_functions(link)
    s = p + q - 1
    beta = np.zeros(Z.shape[1]) if beta0 is None else beta0.astype(float).copy()
    pen = np.full(Z.shape[1], ridge)
    pen[0] = 0.0
    ll = _loglik(Z, y, beta, p, q, link, ridge)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007
        F, f = fn(Z @ beta)
        G = np.clip((1 - q) + s * F, 1e-15, 1 - 1e-15)
        v = G * (1 - G)
        U = Z.T @ (s * f * (y - G) / v) - pen * beta
        info = (Z * (s * s * f * f / v)[:, None]).T @ Z + np.diag(pen)
        try:
            step = np.linalg.solve(info, U)
        except np.linalg.LinAlgError:
            break
        t = 1.0
        while True:
            new = beta + t * step
            ll_new = _loglik(Z, y, new, p, q, link, ridge)
            if ll_new >= ll - 1e-12 or t < 1e-8:
                break
            t *= 0.5
        beta, diff, ll = new, ll_new - ll, ll_new
        if abs(diff) < 1e-10 * (1 + abs(ll)) and np.max(np.abs(t * step)) < 1e-6 * (1 + np.max(np.abs(beta))):
            converged = True
            break
        if np.max(np.abs(beta)) > 50:
            break
    F, f = fn(Z @ beta)
    G = np.clip((1 - q) + s * F, 1e-15, 1 - 1e-15)
    v = G * (1 - G)
    info = (Z * (s * s * f * f / v)[:, None]).T @ Z + np.diag(pen)
    score = Z * (s * f * (y - G) / v)[:, None]
    return {"beta": beta, "info": info, "loglik": ll, "n_iter": it, "converged": converged, "score": score}


class RRBinaryRegression(ClassifierMixin, BaseEstimator):
    """RR-corrected binary regression from the 'Differentially Private Analysis for Binary Response Models:
    Optimality, Estimation, and Inference' (ICML 2025) paper (method reconstructed, see README).

    Fits ``P(y=1|x) = F(x'beta)`` from labels released through a randomized-response channel ``(p, q)`` by
    maximising the likelihood of the *released* labels, ``P(y~=1|x) = (1-q) + (p+q-1) F(x'beta)`` (spec §2.2),
    with Fisher scoring and step-halving. Wald intervals use the expected information with the per-record
    channel actually applied.

    Parameters
    ----------
    link : {"logit", "probit", "cloglog"}
    p, q : float, optional
        The channel applied to every record: ``p = P(y~=1|y=1)``, ``q = P(y~=0|y=0)`` with ``p + q > 1``.
        Required (no default channel: fitting privatised labels as if clean is :func:`naive_fit`); a per-record
        channel goes to :meth:`fit` as ``sample_p``/``sample_q``.
    fit_intercept : bool
    fallback_ridge : float or None
        When the MLE does not exist (``||beta||_inf > 25`` or an ill-conditioned information), refit with the
        penalty ``0.5 * tau * ||beta_{-0}||^2``; None only warns.
    cov_type : {"expected", "sandwich"}
    max_iter : int

    Attributes
    ----------
    coef_ : ndarray, shape (n_features,)
    intercept_ : float
    params_ : ndarray, shape (n_params,)
        ``[intercept_, *coef_]`` (or ``coef_`` without intercept).
    cov_ : ndarray, shape (n_params, n_params)
        Estimated covariance of ``params_``.
    converged_ : bool
    n_iter_ : int
    loglik_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from icml25.label_dp import randomized_response
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 2)); y = (rng.random(4000) < 1 / (1 + np.exp(-(X @ [1.0, -0.5])))).astype(int)
    >>> y_tilde = randomized_response(y, 0.8, 0.8, rng)
    >>> m = RRBinaryRegression(p=0.8, q=0.8).fit(X, y_tilde)
    >>> bool(np.all(np.abs(m.coef_ - [1.0, -0.5]) < 0.3))
    True

    The channel is a hyper-parameter, so the estimator works in a ``Pipeline`` and ``GridSearchCV`` (``score`` is
    the accuracy of the clean-label prediction against the labels given, here the released ones):

    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> pipe = make_pipeline(StandardScaler(), RRBinaryRegression(p=0.8, q=0.8))
    >>> search = GridSearchCV(pipe, {"rrbinaryregression__link": ["logit", "probit"]}, cv=3).fit(X, y_tilde)
    >>> search.best_estimator_.predict_proba(X[:2]).shape
    (2, 2)
    """

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        """Binary only: the randomized-response channel flips one label into the other."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def __init__(self, link: str = "logit", p: Any = None, q: Any = None, fit_intercept: bool = True,
                 fallback_ridge: float | None = None, cov_type: str = "expected", max_iter: int = 100) -> None:
        self.link = link
        self.p = p
        self.q = q
        self.fit_intercept = fit_intercept
        self.fallback_ridge = fallback_ridge
        self.cov_type = cov_type
        self.max_iter = max_iter

    def fit(self, X: Any, y: Any, sample_p: Any = None, sample_q: Any = None) -> RRBinaryRegression:
        """Fit on covariates ``X`` (n, d) and released labels ``y`` (n,) through the channel ``(p, q)``.

        ``y`` holds two classes; the greater one (``classes_[1]``, 1 for 0/1 labels) is the positive label that
        ``p = P(y~=1|y=1)`` refers to. ``sample_p``/``sample_q`` (arrays of shape (n,)) give a per-record channel
        (e.g. a :class:`~icml25.label_dp.TwoStageDesign`) and override the constructor's ``p``/``q``.
        """
        check_option(self.link, "link", LINKS)
        check_option(self.cov_type, "cov_type", ("expected", "sandwich"))
        max_iter = check_int(self.max_iter, "max_iter", low=1)
        if self.fallback_ridge is not None:
            check_positive(self.fallback_ridge, "fallback_ridge", allow_zero=True)
        X, y = validate_data(self, precheck_sklearn_X(X), y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y = np.unique(y, return_inverse=True)
        if self.classes_.size != 2:
            kind = "Only binary classification is supported" if self.classes_.size > 2 else "y has one class"
            raise ValueError(f"{kind}: RRBinaryRegression needs y with exactly 2 classes, got "
                             f"{self.classes_.size} class(es) {self.classes_[:5].tolist()}")
        Z = np.hstack([np.ones((X.shape[0], 1)), X]) if self.fit_intercept else X
        _check_full_rank(Z, self.fit_intercept)
        pp, qq = _channel_arrays(self.p if sample_p is None else sample_p, self.q if sample_q is None else sample_q,
                                 Z.shape[0], ("sample_p" if sample_p is not None else "p",
                                              "sample_q" if sample_q is not None else "q"))
        res = fisher_scoring(Z, y, pp, qq, self.link, 0.0, max_iter)
        ok = res["converged"] and np.max(np.abs(res["beta"])) <= 25 and np.linalg.cond(res["info"]) < 1e12
        self.ridge_used_ = 0.0
        if not ok:
            if self.fallback_ridge:
                res = fisher_scoring(Z, y, pp, qq, self.link, float(self.fallback_ridge), max_iter)
                self.ridge_used_ = float(self.fallback_ridge)
            else:
                warnings.warn("the RR likelihood has no finite maximiser on these data (estimates diverge or the "
                              "information is singular, e.g. separation or too little privacy signal); pass "
                              "fallback_ridge=1e-3 for a penalised fit", ConvergenceWarning, stacklevel=2)
        self.converged_ = bool(ok)
        self.params_ = res["beta"]
        self.n_iter_ = res["n_iter"]
        self.loglik_ = res["loglik"]
        self.info_ = res["info"]
        inv = np.linalg.pinv(res["info"])
        if self.cov_type == "sandwich":
            J = res["score"].T @ res["score"]
            self.cov_ = inv @ J @ inv
        else:
            self.cov_ = inv
        self.intercept_ = float(self.params_[0]) if self.fit_intercept else 0.0
        self.coef_ = self.params_[1:] if self.fit_intercept else self.params_.copy()
        self.n_obs_ = Z.shape[0]
        return self

    @property
    def bse_(self) -> np.ndarray:
        """Standard errors of ``params_``."""
        return np.sqrt(np.maximum(np.diag(self.cov_), 0.0))

    def conf_int(self, alpha: float = 0.05) -> np.ndarray:
        """Wald intervals ``params_ ± z_{1-alpha/2} se`` (spec §2.4), shape ``(n_params, 2)``."""
        check_is_fitted(self)
        alpha = check_probability(alpha, "alpha", open_low=True, open_high=True)
        z = norm.ppf(1 - alpha / 2)
        return np.column_stack([self.params_ - z * self.bse_, self.params_ + z * self.bse_])

    def decision_function(self, X: Any) -> np.ndarray:
        """Linear predictor ``x'beta``."""
        check_is_fitted(self)
        X = validate_data(self, precheck_sklearn_X(X), dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_

    def predict_proba(self, X: Any) -> np.ndarray:
        """Clean-label probabilities ``[1 - F(x'beta), F(x'beta)]``, shape ``(n, 2)``."""
        F, _ = link_functions(self.link)(self.decision_function(X))
        return np.column_stack([1 - F, F])

    def predict(self, X: Any) -> np.ndarray:
        """Most likely clean label (``classes_[1]`` where its probability exceeds 1/2)."""
        proba = self.predict_proba(X)
        return self.classes_[(proba[:, 1] > 0.5).astype(int)]

    def summary(self, alpha: float = 0.05, names: list[str] | None = None) -> str:
        """A statsmodels-style coefficient table (estimate, std err, z, P>|z|, CI)."""
        check_is_fitted(self)
        alpha = check_probability(alpha, "alpha", open_low=True, open_high=True)
        k = self.params_.shape[0]
        names = names or ((["const"] if self.fit_intercept else []) + [f"x{j + 1}" for j in range(self.n_features_in_)])
        if len(names) != k:
            raise ValueError(f"names must have {k} entries, got {len(names)}")
        ci = self.conf_int(alpha)
        zval = self.params_ / np.where(self.bse_ > 0, self.bse_, np.nan)
        pval = 2 * norm.sf(np.abs(zval))
        lo, hi = f"[{alpha / 2:.3f}", f"{1 - alpha / 2:.3f}]"
        lines = [f"RR-{self.link} regression   n = {self.n_obs_}   log-lik = {self.loglik_:.3f}   "
                 f"converged = {self.converged_}   cov = {self.cov_type}",
                 f"{'':>10} {'coef':>10} {'std err':>10} {'z':>8} {'P>|z|':>8} {lo:>10} {hi:>10}"]
        for j in range(k):
            lines.append(f"{names[j]:>10} {self.params_[j]:>10.4f} {self.bse_[j]:>10.4f} {zval[j]:>8.3f} "
                         f"{pval[j]:>8.3f} {ci[j, 0]:>10.4f} {ci[j, 1]:>10.4f}")
        return "\n".join(lines)


def naive_fit(X: Any, y_tilde: Any, link: str = "logit", fit_intercept: bool = True) -> RRBinaryRegression:
    """Baseline: the binary regression fitted to privatised labels as if they were clean (``p = q = 1``).

    Parameters
    ----------
    X : array, shape (n, d)
    y_tilde : array of 0/1, shape (n,)
        Released (privatised) labels.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(200, 1)); y = (X[:, 0] > 0).astype(int); y[:20] ^= 1
    >>> naive_fit(X, y).coef_.shape
    (1,)
    """
    check_option(link, "link", LINKS)
    y_tilde = check_binary_labels(y_tilde, "y_tilde")
    return RRBinaryRegression(link=link, p=1.0, q=1.0, fit_intercept=fit_intercept,
                              fallback_ridge=1e-3).fit(X, y_tilde)


def debiased_label_fit(X: Any, y_tilde: Any, p: Any, q: Any, link: str = "logit", fit_intercept: bool = True,
                       max_iter: int = 100) -> dict[str, np.ndarray]:
    """Baseline: solve ``sum_i x_i (y_hat_i - F(x_i'beta)) = 0`` with unbiased labels
    ``y_hat = (y~ - (1-q)) / s`` (spec §2.5); consistent, less efficient than the RR-MLE.

    Returns ``{"params": beta, "cov": sandwich covariance}``.

    Examples
    --------
    >>> from icml25.label_dp import randomized_response
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(3000, 1)); y = (rng.random(3000) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    >>> fit = debiased_label_fit(X, randomized_response(y, 0.8, 0.8, rng), 0.8, 0.8)
    >>> bool(abs(fit["params"][1] - 1.0) < 0.4)
    True
    """
    check_option(link, "link", LINKS)
    max_iter = check_int(max_iter, "max_iter", low=1)
    Z = _as_design(X, fit_intercept)
    y = check_binary_labels(y_tilde, "y_tilde")
    if y.shape[0] != Z.shape[0]:
        raise ValueError(f"X and y_tilde must have the same number of rows; X has {Z.shape[0]}, "
                         f"y_tilde has {y.shape[0]}")
    pp, qq = _channel_arrays(p, q, Z.shape[0])
    yhat = (y - (1 - qq)) / (pp + qq - 1)
    fn = link_functions(link)
    beta = np.zeros(Z.shape[1])
    for _ in range(max_iter):
        F, f = fn(Z @ beta)
        A = (Z * f[:, None]).T @ Z
        step = np.linalg.solve(A + 1e-10 * np.eye(len(beta)), Z.T @ (yhat - F))
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    F, f = fn(Z @ beta)
    A = (Z * f[:, None]).T @ Z
    Ainv = np.linalg.pinv(A)
    B = (Z * ((yhat - F) ** 2)[:, None]).T @ Z
    return {"params": beta, "cov": Ainv @ B @ Ainv}
