"""CP-OPT: a learned conformity score that minimises the expected prediction-set size (spec §2.4).

The penalised surrogate of problem (P2), with ``sigma_beta(u) = 1 / (1 + exp(-beta u))``::

    S(g, tau) = mean_i sum_{j valid} sigma_beta(g(x_i, j) - tau)           # smooth set size
    P(g, tau) = mean_i sigma_beta(g(x_i, y_i) - tau)                       # smooth coverage
    L = S + lam (P - (1 - alpha))^2 + lam_ce CE(g, y) + lam_l2 ||theta||^2

``g`` is an MLP on per-question features followed by a softmax over the valid options, so scores lie in [0, 1]
like the LLM's own probabilities. The learned ``tau`` is discarded: conformal calibration is redone on held-out
data (:class:`~icml25.croq.conformal.SplitConformal`), which keeps the coverage guarantee exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from torch import nn

from icml25.core.validation import (
    check_array,
    check_int,
    check_option,
    check_positive,
    check_probability,
    check_real,
    check_tensor,
    precheck_sklearn_X,
)

from .conformal import conformal_threshold, option_mask

__all__ = ["cp_opt_loss", "CPOptScorer", "ScoreMLP"]


def cp_opt_loss(scores: torch.Tensor, tau: torch.Tensor, y: torch.Tensor, mask: torch.Tensor, alpha: float,
                beta: float, lam: float, lam_ce: float = 0.0) -> torch.Tensor:
    """The CP-OPT surrogate loss of problem (P2) as a pure torch function.

    Parameters
    ----------
    scores : Tensor, shape (n, m)
        Conformity ``g(x_i, j)`` of each option slot (probabilities when ``lam_ce > 0``).
    tau : Tensor, scalar
        The (learned) threshold.
    y : LongTensor, shape (n,)
        Index of the true option.
    mask : BoolTensor, shape (n, m)
        Valid option slots (padded slots do not count in the size).
    alpha : float
        Target miscoverage.
    beta : float
        Sigmoid steepness (≈ 10-50 for scores in [0, 1]).
    lam : float
        Weight of the squared coverage deviation.
    lam_ce : float
        Weight of the cross-entropy ``-log g(x_i, y_i)`` term (0 turns it off).

    Returns
    -------
    Tensor, scalar
        ``S + lam (P - (1 - alpha))^2 + lam_ce CE``.
    """
    scores = check_tensor(scores, "scores", ndim=2)
    tau = check_tensor(tau, "tau", ndim=0)
    alpha = check_probability(alpha, "alpha", open_low=True, open_high=True)
    beta = check_positive(beta, "beta")
    lam = check_real(lam, "lam", low=0.0)
    lam_ce = check_real(lam_ce, "lam_ce", low=0.0)
    y = check_tensor(y, "y", shape=(scores.shape[0],), dtype="int")  # LongTensor (n,)
    mask = check_tensor(mask, "mask", shape=tuple(scores.shape))  # BoolTensor (n, m), like scores
    soft_in = torch.sigmoid(beta * (scores - tau)) * mask.to(scores.dtype)
    size = soft_in.sum(dim=1).mean()  # smooth size S(g, tau)
    true_scores = scores.gather(1, y.view(-1, 1)).squeeze(1)
    coverage = torch.sigmoid(beta * (true_scores - tau)).mean()  # smooth coverage P(g, tau)
    loss = size + lam * (coverage - (1.0 - alpha)) ** 2  # Eq. (P2)
    if lam_ce:
        loss = loss - lam_ce * torch.log(true_scores.clamp_min(1e-12)).mean()
    return loss


class ScoreMLP(nn.Module):
    """MLP ``features -> option slots`` followed by a softmax over valid slots (the CP-OPT score ``g``).

    Parameters
    ----------
    in_dim : int
        Feature dimension ``d``.
    n_slots : int
        Maximum number of options ``m``.
    hidden_dims : tuple of int
        Widths of the hidden layers.
    activation : str
        ``"relu"`` or ``"tanh"``.

    Shapes
    ------
    forward(x (n, d), mask (n, m) bool) -> (n, m) probabilities, 0 in padded slots.
    """

    def __init__(self, in_dim: int, n_slots: int, hidden_dims: tuple[int, ...] = (256, 128),
                 activation: str = "relu") -> None:
        super().__init__()
        in_dim = check_int(in_dim, "in_dim", low=1)
        n_slots = check_int(n_slots, "n_slots", low=2)
        if not isinstance(hidden_dims, (tuple, list)):
            raise TypeError(f"hidden_dims must be a tuple of widths, got {hidden_dims!r}")
        hidden_dims = tuple(check_int(h, "hidden_dims", low=1) for h in hidden_dims)
        acts = {"relu": nn.ReLU, "tanh": nn.Tanh}
        if activation not in acts:
            raise ValueError(f"activation must be one of {sorted(acts)}, got {activation!r}")
        layers: list[nn.Module] = []
        prev = in_dim
        for h in hidden_dims:
            layers += [nn.Linear(prev, int(h)), acts[activation]()]
            prev = int(h)
        layers.append(nn.Linear(prev, n_slots))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = self.net(x).masked_fill(~mask, float("-inf"))
        return torch.softmax(logits, dim=1)


class CPOptScorer(ClassifierMixin, BaseEstimator):
    """The CP-OPT learned score from the 'Prune 'n Predict' (CROQ, ICML 2025) paper, §2.4.

    Trains :class:`ScoreMLP` and a scalar ``tau`` by Adam on ``cp_opt_loss + lam_l2 ||theta||^2``.
    Features are standardised with the training mean and standard deviation (``standardize=True``).
    A scikit-learn classifier over the option slots: :meth:`option_scores` (= :meth:`predict_proba` when every
    option is valid) gives the per-option conformity scores that conformal calibration uses, :meth:`predict` the
    best-scored option and :meth:`score` its accuracy, so it works in ``Pipeline``/``GridSearchCV``.

    Parameters
    ----------
    hidden_dims : tuple of int
        Hidden widths of the MLP.
    activation : str
        ``"relu"`` or ``"tanh"``.
    beta, lam, lam_ce, lam_l2 : float
        Sigmoid steepness, coverage penalty, cross-entropy weight, L2 weight.
    alpha : float
        Coverage target used in training (calibration later may use another alpha).
    epochs : int
        Passes over the training data.
    lr : float
        Adam learning rate.
    batch_size : int or None
        Minibatch size; None = full batch.
    random_state : int
        Seed of the initialisation and minibatch order.
    standardize : bool
        Standardise features with the training mean and standard deviation.

    Attributes
    ----------
    model_ : ScoreMLP
    classes_ : ndarray, shape (n_slots,)
        The option labels of the slots: ``0..max(n_options)-1`` when ``fit`` got ``n_options``, else the classes
        seen in ``y``.
    tau_train_ : float
        The learned threshold (not used for prediction sets).
    loss_curve_ : list of float
        Training loss per epoch.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = rng.integers(0, 4, 200); X[np.arange(200), y % 3] += 2
    >>> sc = CPOptScorer(hidden_dims=(16,), epochs=20).fit(X, y, n_options=np.full(200, 4))
    >>> s = sc.option_scores(X, n_options=np.full(200, 4))
    >>> s.shape, bool(np.allclose(s.sum(1), 1))
    ((200, 4), True)

    In a scikit-learn model search (``score`` is the accuracy of the best-scored option):

    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> pipe = make_pipeline(StandardScaler(), CPOptScorer(hidden_dims=(8,), epochs=10, lr=1e-2))
    >>> search = GridSearchCV(pipe, {"cpoptscorer__lam": [1.0, 10.0]}, cv=2).fit(X, y)
    >>> sorted(search.best_params_)
    ['cpoptscorer__lam']
    """

    def __init__(self, hidden_dims: tuple[int, ...] = (256, 128), activation: str = "relu", beta: float = 10.0,
                 lam: float = 10.0, lam_ce: float = 1.0, lam_l2: float = 1e-4, alpha: float = 0.05,
                 epochs: int = 200, lr: float = 1e-3, batch_size: int | None = None, random_state: int = 0,
                 standardize: bool = True) -> None:
        self.hidden_dims = hidden_dims
        self.activation = activation
        self.beta = beta
        self.lam = lam
        self.lam_ce = lam_ce
        self.lam_l2 = lam_l2
        self.alpha = alpha
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.random_state = random_state
        self.standardize = standardize

    def _check_params(self) -> None:
        """Validate the hyper-parameters (in ``fit``, as scikit-learn expects: the constructor only stores)."""
        if not isinstance(self.hidden_dims, (tuple, list)):
            raise TypeError(f"hidden_dims must be a tuple of widths, got {self.hidden_dims!r}")
        for h in self.hidden_dims:
            check_int(h, "hidden_dims", low=1)
        check_option(self.activation, "activation", ("relu", "tanh"))
        check_positive(self.beta, "beta")
        check_positive(self.lam, "lam")
        check_real(self.lam_ce, "lam_ce", low=0.0)
        check_real(self.lam_l2, "lam_l2", low=0.0)
        check_probability(self.alpha, "alpha", open_low=True, open_high=True)
        check_int(self.epochs, "epochs", low=1)
        check_positive(self.lr, "lr")
        if self.batch_size is not None:
            check_int(self.batch_size, "batch_size", low=1)
        check_int(self.random_state, "random_state", low=0)

    def _check_n_options(self, n_options: Any, n: int) -> np.ndarray | None:
        if n_options is None:
            return None
        k = check_array(n_options, "n_options", shape=(n,), dtype=int)
        if k.min() < 1:
            raise ValueError(f"n_options must be >= 1 for every row, found {int(k.min())}")
        return k

    def fit(self, X: Any, y: Any, n_options: Any = None) -> CPOptScorer:
        """Train the score network.

        Parameters
        ----------
        X : array-like, shape (n, d)
            Per-question features.
        y : array-like, shape (n,)
            True option: an option index in ``0..n_options[i]-1`` when ``n_options`` is given, else any class
            labels (each class is one option slot, valid for every row).
        n_options : array-like of int, shape (n,), optional
            Option count of each question (slots beyond it are masked).
        """
        self._check_params()
        x, y = validate_data(self, precheck_sklearn_X(X), y, dtype=np.float64)
        check_classification_targets(y)
        k = self._check_n_options(n_options, x.shape[0])
        if k is None:
            self.classes_, yy = np.unique(y, return_inverse=True)
            if self.classes_.size < 2:
                raise ValueError(f"y has one class ({self.classes_.tolist()}); CP-OPT needs at least 2 options")
            k = np.full(x.shape[0], self.classes_.size)
        else:
            yy = check_array(y, "y", shape=(x.shape[0],), dtype=int)
            bad = (yy < 0) | (yy >= k)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"label y[{i}]={int(yy[i])} is outside the option range 0..{int(k[i]) - 1}")
            if k.max() < 2:
                raise ValueError("n_options must reach 2 somewhere: every question has a single option")
            self.classes_ = np.arange(int(k.max()))
        x = x.astype(np.float32)
        self.n_slots_ = int(self.classes_.size)
        mask_np = option_mask(k, self.n_slots_)
        self.mean_ = x.mean(axis=0) if self.standardize else np.zeros(x.shape[1], dtype=np.float32)
        self.std_ = x.std(axis=0) + 1e-6 if self.standardize else np.ones(x.shape[1], dtype=np.float32)
        gen = torch.Generator().manual_seed(int(self.random_state))
        torch.manual_seed(int(self.random_state))
        self.model_ = ScoreMLP(x.shape[1], self.n_slots_, tuple(self.hidden_dims), self.activation)
        xt = torch.from_numpy((x - self.mean_) / self.std_)
        mt = torch.from_numpy(mask_np)
        yt = torch.from_numpy(yy.astype(np.int64))
        with torch.no_grad():  # start tau at the empirical alpha-quantile of the initial true scores
            s0 = self.model_(xt, mt).gather(1, yt.view(-1, 1)).squeeze(1).numpy()
        tau0 = conformal_threshold(s0, self.alpha, allow_infinite=True)
        tau = nn.Parameter(torch.tensor(float(tau0) if np.isfinite(tau0) else float(s0.min()), dtype=torch.float32))
        opt = torch.optim.Adam([*self.model_.parameters(), tau], lr=float(self.lr))
        n = x.shape[0]
        bs = n if self.batch_size is None else int(self.batch_size)
        self.loss_curve_: list[float] = []
        for _ in range(int(self.epochs)):
            order = torch.randperm(n, generator=gen) if bs < n else torch.arange(n)
            total = 0.0
            for start in range(0, n, bs):
                idx = order[start:start + bs]
                scores = self.model_(xt[idx], mt[idx])
                loss = cp_opt_loss(scores, tau, yt[idx], mt[idx], float(self.alpha), float(self.beta),
                                   float(self.lam), float(self.lam_ce))
                if self.lam_l2:
                    loss = loss + float(self.lam_l2) * sum((p ** 2).sum() for n_, p in
                                                           self.model_.named_parameters() if "weight" in n_)
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(idx)
            self.loss_curve_.append(total / n)
        self.tau_train_ = float(tau.detach())
        return self

    def option_scores(self, X: Any, n_options: Any = None) -> np.ndarray:
        """Learned conformity scores of every option.

        Parameters
        ----------
        X : array-like, shape (n, d)
        n_options : array-like of int, shape (n,), optional
            Option count of each question; None: every slot is valid.

        Returns
        -------
        ndarray, shape (n, n_slots)
            Softmax over the valid options of each row; 0 in padded slots.
        """
        check_is_fitted(self, "model_")
        x = validate_data(self, precheck_sklearn_X(X), dtype=np.float64, reset=False).astype(np.float32)
        k = self._check_n_options(n_options, x.shape[0])
        k = np.full(x.shape[0], self.n_slots_) if k is None else np.minimum(k, self.n_slots_)
        mask = torch.from_numpy(option_mask(k, self.n_slots_))
        with torch.no_grad():
            return self.model_(torch.from_numpy((x - self.mean_) / self.std_), mask).numpy().astype(float)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Option scores with every option valid, shape ``(n, n_slots)`` (columns follow ``classes_``)."""
        return self.option_scores(X)

    def predict(self, X: Any) -> np.ndarray:
        """The best-scored option of each row, shape ``(n,)``."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
