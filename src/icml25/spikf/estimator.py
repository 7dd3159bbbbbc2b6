"""A scikit-learn-style wrapper: fit SpikF on a raw series ``[rows, D]``, predict the next H steps of windows.

Examples
--------
>>> import numpy as np
>>> t = np.arange(600.0)[:, None]
>>> series = np.sin(2 * np.pi * t / 24) * [1.0, 2.0] + [0.0, 10.0]
>>> reg = SpikFRegressor(seq_len=48, pred_len=12, patch_num=12, patch_dim=8, T=2, hidden_dim=16, epochs=1,
...                      stride=4).fit(series)
>>> reg.predict(series[-48:]).shape
(12, 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_fitted, check_int, check_positive, check_probability

__all__ = ["SpikFRegressor"]


class SpikFRegressor:
    """Train a :class:`SpikFForecaster` on one raw multivariate series and forecast in the original units.

    ``fit(X [rows, D])`` standardises with the statistics of the first ``1 - val_fraction`` of the rows, trains on
    their windows (stride ``stride``) with early stopping on the last ``val_fraction``; ``predict(window)`` takes
    ``[seq_len, D]`` or ``[B, seq_len, D]`` raw values and returns ``[pred_len, D]`` or ``[B, pred_len, D]``.

    Parameters
    ----------
    seq_len, pred_len : int
        Look-back and horizon.
    patch_num, patch_dim, T, hidden_dim, blocks, tau : model hyper-parameters (see :class:`SpikFForecaster`).
    epochs, lr, batch_size, patience : training budget (see :func:`fit`).
    stride : int
        Start stride of the training windows.
    val_fraction : float
        Final fraction of the rows held out for early stopping (in (0, 1)).
    seed : int
        Seeds the initial weights and the batch order.
    """

    def __init__(self, seq_len: int = 96, pred_len: int = 96, patch_num: int = 16, patch_dim: int = 32, T: int = 4,
                 hidden_dim: int = 256, blocks: int = 1, tau: float = 2.0, epochs: int = 3, lr: float = 5e-4,
                 batch_size: int = 32, patience: int = 3, stride: int = 1, val_fraction: float = 0.1,
                 seed: int = 0) -> None:
        self.seq_len = check_int(seq_len, "seq_len", low=2)
        self.pred_len = check_int(pred_len, "pred_len", low=1)
        self.patch_num = check_int(patch_num, "patch_num", low=2)
        if self.seq_len % self.patch_num:
            raise ValueError(f"patch_num must divide seq_len={self.seq_len}, got {self.patch_num}")
        self.patch_dim = check_int(patch_dim, "patch_dim", low=1)
        self.T = check_int(T, "T", low=1)
        self.hidden_dim = check_int(hidden_dim, "hidden_dim", low=1)
        self.blocks = check_int(blocks, "blocks", low=1)
        self.tau = check_positive(tau, "tau")
        if self.tau < 1:
            raise ValueError(f"tau must be >= 1, got {self.tau}")
        self.epochs = check_int(epochs, "epochs", low=1)
        self.lr = check_positive(lr, "lr")
        self.batch_size = check_int(batch_size, "batch_size", low=2)
        self.patience = check_int(patience, "patience", low=1)
        self.stride = check_int(stride, "stride", low=1)
        self.val_fraction = check_probability(val_fraction, "val_fraction", open_low=True, open_high=True)
        self.seed = check_int(seed, "seed", low=0)
        self.model_: Any = None
        self.mean_: np.ndarray | None = None
        self.std_: np.ndarray | None = None
        self.history_: Any = None

    def fit(self, X: Any) -> SpikFRegressor:
        """Train on the raw series ``X [rows, D]`` (a numeric array or data frame); returns ``self``."""
        import torch

        from .model import SpikFForecaster
        from .train import fit

        X = check_array(X, "X", ndim=2)
        n_val = int(round(len(X) * self.val_fraction))
        n_train = len(X) - n_val
        w = self.seq_len + self.pred_len
        if n_train < w + 1 or n_val < self.pred_len:
            raise ValueError(f"X has {len(X)} rows: need > {w} training rows and >= {self.pred_len} validation rows "
                             f"(seq_len + pred_len = {w}, val_fraction = {self.val_fraction})")
        self.mean_ = X[:n_train].mean(axis=0)
        std = X[:n_train].std(axis=0)
        self.std_ = np.where(std > 0, std, 1.0)
        Z = ((X - self.mean_) / self.std_).astype(np.float32)
        train, val = _windows(Z[:n_train], w, self.seq_len, self.stride), _windows(Z[n_train - self.seq_len:], w,
                                                                                    self.seq_len, 1)
        torch.manual_seed(self.seed)
        self.model_ = SpikFForecaster(self.seq_len, self.pred_len, X.shape[1], patch_num=self.patch_num,
                                      patch_dim=self.patch_dim, T=self.T, blocks=self.blocks,
                                      hidden_dim=self.hidden_dim, tau=self.tau)
        self.history_ = fit(self.model_, train, val, epochs=self.epochs, lr=self.lr, patience=self.patience,
                            batch_size=self.batch_size, seed=self.seed, desc="SpikFRegressor")
        return self

    def predict(self, window: Any) -> np.ndarray:
        """Forecast ``[pred_len, D]`` (or ``[B, pred_len, D]``) in raw units for raw look-back ``window``."""
        import torch

        check_fitted(self, ("model_", "mean_"))
        arr = check_array(window, "window", ndim=(2, 3))
        single = arr.ndim == 2
        arr = arr[None] if single else arr
        D = len(self.mean_)
        if arr.shape[1:] != (self.seq_len, D):
            raise ValueError(f"window must have shape [{self.seq_len}, {D}] or [B, {self.seq_len}, {D}], "
                             f"got {list(arr.shape[-2:] if single else arr.shape)}")
        z = torch.from_numpy(((arr - self.mean_) / self.std_).astype(np.float32))
        self.model_.eval()
        with torch.no_grad():
            out = self.model_.predict(z).double().numpy() * self.std_ + self.mean_
        return out[0] if single else out


def _windows(Z: np.ndarray, w: int, seq_len: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    view = np.lib.stride_tricks.sliding_window_view(Z, w, axis=0)[::stride].transpose(0, 2, 1)
    return np.ascontiguousarray(view[:, :seq_len]), np.ascontiguousarray(view[:, seq_len:])
