"""Multinomial logistic regression in numpy/scipy (full-batch L-BFGS) and temperature scaling (experiment code)."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import log_softmax


def _loss_grad(w: np.ndarray, X: np.ndarray, Y: np.ndarray, l2: float) -> tuple[float, np.ndarray]:
    n, d = X.shape
    k = Y.shape[1]
    W = w.reshape(d + 1, k)
    Z = X @ W[:-1] + W[-1]
    logp = log_softmax(Z, axis=1)
    loss = -(Y * logp).sum() / n + 0.5 * l2 * (W[:-1] ** 2).sum()
    G = (np.exp(logp) - Y) / n
    grad = np.vstack([X.T @ G + l2 * W[:-1], G.sum(axis=0, keepdims=True)])
    return float(loss), grad.ravel()


def fit_softmax_regression(X: np.ndarray, y: np.ndarray, n_classes: int, C: float = 0.5, max_iter: int = 300
                           ) -> np.ndarray:
    """Weights (d+1, n_classes) minimising mean cross-entropy + ||W||² / (2 C n) (scikit-learn's scaling)."""
    n, d = X.shape
    Y = np.eye(n_classes)[y]
    l2 = 1.0 / (C * n)
    res = minimize(_loss_grad, np.zeros((d + 1) * n_classes), args=(X, Y, l2), jac=True, method="L-BFGS-B",
                   options={"maxiter": max_iter})
    return res.x.reshape(d + 1, n_classes)


def softmax_logits(W: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Logits ``X W + b`` of a fitted model."""
    return X @ W[:-1] + W[-1]


def fit_temperature(logits: np.ndarray, y: np.ndarray) -> float:
    """Temperature ``T`` minimising the held-out negative log-likelihood of ``softmax(logits / T)``."""
    def nll(log_t: float) -> float:
        return float(-log_softmax(logits / np.exp(log_t), axis=1)[np.arange(len(y)), y].mean())

    res = minimize_scalar(nll, bounds=(-3.0, 3.0), method="bounded")
    return float(np.exp(res.x))


def softmax_probs(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Row-wise softmax of ``logits / temperature``."""
    return np.exp(log_softmax(logits / temperature, axis=1))
