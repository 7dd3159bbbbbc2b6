"""MoM regression with general losses: minimise the median-of-means risk by MoM gradient descent (spec §2.4)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from icml25.core.seeding import check_random_state
from icml25.core.validation import (
    check_array,
    check_int,
    check_option,
    check_positive,
    check_probability,
    check_real,
    precheck_sklearn_X,
)

from .estimators import _block_means, _lower_median, make_partition

__all__ = ["MoMRegressor", "LOSSES", "loss_and_derivative"]

LOSSES = ("squared", "absolute", "huber", "pinball", "power")


def loss_and_derivative(r: np.ndarray, loss: str, huber_c: float = 1.345, quantile: float = 0.5,
                        power: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    """Loss ``l(r)`` and derivative ``l'(r)`` of the residuals ``r = y - <beta, x>`` (spec §2.4).

    Examples
    --------
    >>> val, der = loss_and_derivative(np.array([-2.0, 0.5]), "huber", huber_c=1.0)
    >>> val.tolist(), der.tolist()
    ([1.5, 0.125], [-1.0, 0.5])
    """
    r = check_array(r, "r", min_size=0)
    check_option(loss, "loss", LOSSES)
    huber_c = check_positive(huber_c, "huber_c")
    quantile = check_probability(quantile, "quantile", open_low=True, open_high=True)
    power = check_real(power, "power", low=1.0, high=2.0)
    return _loss_and_derivative(r, loss, huber_c, quantile, power)


def _loss_and_derivative(r: np.ndarray, loss: str, huber_c: float = 1.345, quantile: float = 0.5,
                         power: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    """:func:`loss_and_derivative` without input checks (inner loops)."""
    if loss == "squared":
        return r * r, 2.0 * r
    if loss == "absolute":
        return np.abs(r), np.sign(r)
    if loss == "huber":
        a = np.abs(r)
        inside = a <= huber_c
        val = np.where(inside, 0.5 * r * r, huber_c * (a - 0.5 * huber_c))
        return val, np.where(inside, r, huber_c * np.sign(r))
    if loss == "pinball":
        neg = r < 0
        return r * (quantile - neg), quantile - neg.astype(float)
    if loss == "power":
        a = np.abs(r)
        return a**power, power * a ** (power - 1.0) * np.sign(r)
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def _robust_scale(v: np.ndarray) -> np.ndarray:
    """Median absolute deviation scaled to the normal's standard deviation (1 where it is 0)."""
    mad = 1.4826 * np.median(np.abs(v - np.median(v, axis=0)), axis=0)
    return np.where(mad > 0, mad, 1.0)


def _mom_gradient_descent(Z: np.ndarray, t: np.ndarray, loss: str, lr0: float, T: int, beta: np.ndarray, K: int,
                          rng: np.random.Generator, radius: float | None, kw: dict[str, float]) -> np.ndarray:
    """MoM gradient descent (spec §2.4): a fresh partition per step, the gradient of the median-risk block,
    ``eta_t = lr0 / sqrt(1 + t/50)``, projection on the ball, average of the last half of the iterates."""
    n = len(t)
    beta = beta.copy()
    avg = np.zeros_like(beta)
    n_avg = 0
    for it in range(T):
        part = make_partition(n, K, rng)
        r = t - Z @ beta
        losses, _ = _loss_and_derivative(r, loss, **kw)
        med = part[np.argsort(_block_means(losses, part))[(K - 1) // 2]]
        _, dl = _loss_and_derivative(r[med], loss, **kw)
        grad = -(dl[:, None] * Z[med]).mean(0)
        beta = beta - lr0 / np.sqrt(1.0 + it / 50.0) * grad
        if radius is not None:
            norm = np.linalg.norm(beta)
            if norm > radius:
                beta *= radius / norm
        if it >= T // 2:
            avg += beta
            n_avg += 1
    return avg / n_avg


class MoMRegressor(RegressorMixin, BaseEstimator):
    """MoM linear regression from the 'Uniform Mean Estimation for Heavy-Tailed Distributions via
    Median-of-Means' (ICML 2025) paper: ``beta_hat in argmin_{||beta|| <= R} MoM_K(l(y_i - <beta, x_i>))``.

    Minimised by MoM gradient descent (Lecué-Lerasle-Mathieu): each iteration draws a fresh partition into
    ``K`` blocks, takes the block whose mean loss is the median and steps along the gradient of that block's
    mean loss with ``eta_t = eta_0 / sqrt(1 + t/50)``, projecting on the ball of radius ``R``; the average of
    the last half of the iterates is returned. ``X`` and ``y`` are centred by their medians and scaled by their
    MADs first (robust standardisation). For the Huber loss a MoM-LAD pilot run gives the starting point and the
    residual scale, and ``c`` applies to residuals divided by that scale.

    Parameters
    ----------
    loss : {"squared", "absolute", "huber", "pinball", "power"}
    n_blocks : int
        Number of MoM blocks ``K`` (``>= 2 * #outliers + 1`` under contamination).
    max_iter : int
        Gradient steps ``T``.
    lr : float or None
        ``eta_0``; None gives 0.05 for the squared/power loss and 0.2 otherwise.
    fit_intercept : bool
    radius : float or None
        ``R`` of the constraint ball on the standardised coefficients (None: unconstrained).
    huber_c, quantile, power : float
        Parameters of the Huber, pinball and power losses.
    random_state : None, int or Generator

    Attributes
    ----------
    coef_ : ndarray, shape (n_features,)
    intercept_ : float
    mom_risk_ : float
        ``MoM_K`` of the training loss at the solution (on the standardised scale).
    n_iter_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2)); y = X @ [1.0, -2.0] + rng.standard_t(1.5, 500)
    >>> coef = MoMRegressor(loss="huber", random_state=0).fit(X, y).coef_
    >>> bool(np.abs(coef - [1.0, -2.0]).max() < 0.2)
    True

    ``n_blocks`` and ``loss`` are hyper-parameters for a model search (``score`` is R², as for any regressor):

    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> pipe = make_pipeline(StandardScaler(), MoMRegressor(max_iter=100, random_state=0))
    >>> grid = {"momregressor__n_blocks": [5, 21], "momregressor__loss": ["squared", "huber"]}
    >>> search = GridSearchCV(pipe, grid, cv=3).fit(X, y)
    >>> sorted(search.best_params_)
    ['momregressor__loss', 'momregressor__n_blocks']
    """

    def __init__(self, loss: str = "squared", n_blocks: int = 21, max_iter: int = 400, lr: float | None = None,
                 fit_intercept: bool = True, radius: float | None = None, huber_c: float = 1.345,
                 quantile: float = 0.5, power: float = 1.5, random_state: Any = None) -> None:
        self.loss = loss
        self.n_blocks = n_blocks
        self.max_iter = max_iter
        self.lr = lr
        self.fit_intercept = fit_intercept
        self.radius = radius
        self.huber_c = huber_c
        self.quantile = quantile
        self.power = power
        self.random_state = random_state

    def _check_params(self) -> None:
        check_option(self.loss, "loss", LOSSES)
        check_int(self.n_blocks, "n_blocks", low=1)
        check_int(self.max_iter, "max_iter", low=2)
        if self.lr is not None:
            check_positive(self.lr, "lr")
        if self.radius is not None:
            check_positive(self.radius, "radius")
        check_positive(self.huber_c, "huber_c")
        check_probability(self.quantile, "quantile", open_low=True, open_high=True)
        check_real(self.power, "power", low=1.0, high=2.0)

    def fit(self, X: Any, y: Any) -> MoMRegressor:
        """Fit the coefficients on ``X`` (``(n_samples, n_features)``) and ``y`` (``(n_samples,)``)."""
        self._check_params()
        X, y = validate_data(self, precheck_sklearn_X(X), y, dtype=np.float64, y_numeric=True)
        n, d = X.shape
        K = int(min(self.n_blocks, n))
        rng = check_random_state(self.random_state)
        if self.fit_intercept:
            x_loc, y_loc = np.median(X, axis=0), float(np.median(y))
        else:
            x_loc, y_loc = np.zeros(d), 0.0
        x_sc, y_sc = _robust_scale(X - x_loc), float(_robust_scale((y - y_loc)[:, None])[0])
        Z, t = (X - x_loc) / x_sc, (y - y_loc) / y_sc
        if self.fit_intercept:
            Z = np.hstack([Z, np.ones((n, 1))])
        lr0 = self.lr if self.lr is not None else (0.05 if self.loss in ("squared", "power") else 0.2)
        kw = dict(huber_c=self.huber_c, quantile=self.quantile, power=self.power)
        beta = np.zeros(Z.shape[1])
        if self.loss == "huber":
            # Huber's c acts on residuals standardised by their own scale: a MoM-LAD pilot gives that scale
            # (MAD of its residuals) and the starting point
            beta = _mom_gradient_descent(Z, t, "absolute", 0.2, max(self.max_iter // 2, 2), beta, K, rng,
                                         self.radius, kw)
            kw["huber_c"] = self.huber_c * float(_robust_scale((t - Z @ beta)[:, None])[0])
        T = int(self.max_iter)
        beta = _mom_gradient_descent(Z, t, self.loss, lr0, T, beta, K, rng, self.radius, kw)
        score_part = make_partition(n, K, rng)
        self.mom_risk_ = float(_lower_median(_block_means(_loss_and_derivative(t - Z @ beta, self.loss, **kw)[0],
                                                        score_part)))
        w = beta[:d]
        self.coef_ = w * y_sc / x_sc
        b = beta[d] if self.fit_intercept else 0.0
        self.intercept_ = float(y_loc + y_sc * b - self.coef_ @ x_loc)
        self.n_iter_ = T
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predictions ``X @ coef_ + intercept_``."""
        check_is_fitted(self)
        X = validate_data(self, precheck_sklearn_X(X), dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_
