"""State-of-the-art forecasting peers from ``neuralforecast`` (PatchTST, iTransformer, DLinear) on our split and windows.

SpikF's abstract compares it with "state-of-the-art models" (PatchTST, iTransformer, DLinear, ...). This module feeds
exactly the windows that :class:`~icml25.spikf.data.LTSFDataset` gives SpikF to the maintained implementations of
``neuralforecast`` and returns metrics on the same standardised scale, so that the two are comparable cell by cell.
It wraps the data friction once:

1. **Long format.** The series is standardised with the scaler of our training rows, cut at the end of our test part,
   and written as ``unique_id`` (variable index), ``ds`` (row index: integer time steps, ``freq=1``; no model here
   uses calendar features) and ``y``.
2. **Split.** ``fit`` sees the training and validation rows with ``val_size`` = our validation rows, so its training
   windows are our training windows and its validation windows are ours (both at stride ``train_stride``).
3. **Full-window availability.** neuralforecast trains by default on windows that are only partly inside the series
   (zero-padded, masked); ``training_data_availability_threshold=1.0`` keeps only complete windows, as ours.
4. **Early stopping with best-validation restore.** One validation check per epoch (``val_check_steps`` = the steps of
   one pass over the training windows), ``early_stop_patience_steps`` = patience, and a callback that keeps the weights
   of the best validation MAE and loads them back at the end (Lightning's early stopping keeps the last weights).
5. **Test windows.** ``cross_validation(use_fitted=True, step_size=1)`` on the series cut at the test end predicts every
   test window (in chunks that bound the size of its long output frame); the targets it returns are checked against
   our test windows before any metric is computed.

Metrics are the means over every element of every test window, as :func:`icml25.spikf.train.evaluate`.

Examples
--------
>>> from icml25.spikf.peers import PEERS
>>> PEERS
('PatchTST', 'iTransformer', 'DLinear')
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml25.core.optional import require
from icml25.core.validation import check_array, check_int, check_option, check_positive

from .data import LTSFDataset, split_borders

__all__ = ["PEERS", "PEER_DEFAULTS", "PeerResult", "long_frame", "fit_peer", "require_neuralforecast"]

#: the peers this module builds (neuralforecast class names)
PEERS = ("PatchTST", "iTransformer", "DLinear")
#: model settings per peer (CPU-sized; the published papers' look-back-96 settings are larger): constructor kwargs
PEER_DEFAULTS: dict[str, dict[str, Any]] = {
    # PatchTST (Nie et al., ICLR 2023): patches 16 / stride 8, 3 encoder layers, d_model 64 (paper: 128 on ETTh 16)
    "PatchTST": {"encoder_layers": 3, "hidden_size": 64, "n_heads": 4, "linear_hidden_size": 128, "patch_len": 16,
                 "stride": 8, "dropout": 0.2, "fc_dropout": 0.2, "head_dropout": 0.0, "revin": True},
    # iTransformer (Liu et al., ICLR 2024): variates as tokens, 2 layers, d_model 128 (paper: 512 on ETT/Weather)
    "iTransformer": {"e_layers": 2, "hidden_size": 128, "n_heads": 8, "d_ff": 128, "dropout": 0.1, "use_norm": True},
    # DLinear (Zeng et al., AAAI 2023): moving average 25, one shared linear map per component
    "DLinear": {"moving_avg_window": 25},
}
#: learning rate per peer (Adam, cosine over the planned steps)
PEER_LR = {"PatchTST": 5e-4, "iTransformer": 5e-4, "DLinear": 5e-3}
_MULTIVARIATE = {"iTransformer"}
#: upper bound on the rows of one cross-validation output frame (windows x variables x horizon)
_CV_ROWS = 2_000_000


def require_neuralforecast() -> Any:
    """Import ``neuralforecast`` or raise naming ``pip install 'icml25[forecast]'``."""
    return require("neuralforecast", extra="forecast")


@dataclass
class PeerResult:
    """What :func:`fit_peer` did: test metrics, predictions, and the training trajectory.

    ``pred`` and ``target`` are ``[n_test_windows, H, D]`` on the standardised scale; ``val_mae`` holds one validation
    MAE per epoch (neuralforecast's ``valid_trajectories``); ``best_epoch`` is the epoch whose weights were restored.
    """

    name: str
    mae: float
    mse: float
    pred: np.ndarray
    target: np.ndarray
    val_mae: list[float] = field(default_factory=list)
    best_epoch: int = -1
    epochs_run: int = 0
    steps: int = 0  # training steps at the last validation check
    seconds: float = 0.0
    fit_seconds: float = 0.0


def long_frame(values: np.ndarray, end: int | None = None) -> Any:
    """``values [rows, D]`` (rows ``[0, end)``) as neuralforecast's long frame ``unique_id, ds, y``.

    ``unique_id`` is the variable index (so sorting by it keeps our column order), ``ds`` the row index.
    """
    import pandas as pd

    values = check_array(values, "values", ndim=2)
    v = values[:end] if end is not None else values
    rows, D = v.shape
    return pd.DataFrame({"unique_id": np.repeat(np.arange(D), rows), "ds": np.tile(np.arange(rows), D),
                         "y": v.T.reshape(-1).astype(np.float32)})


def _best_restore_callback(pl: Any) -> Any:
    class BestValidationRestore(pl.Callback):
        """Keep the weights of the lowest validation loss seen; load them back when training ends."""

        def __init__(self) -> None:
            self.best = float("inf")
            self.best_index = -1
            self.state: dict[str, Any] | None = None
            self.seen = 0

        def on_validation_end(self, trainer: Any, module: Any) -> None:
            traj = module.valid_trajectories
            if trainer.sanity_checking or len(traj) == self.seen:
                return
            self.seen = len(traj)
            loss = float(traj[-1][1])
            if loss < self.best:
                self.best, self.best_index = loss, len(traj) - 1
                self.state = copy.deepcopy(module.state_dict())

        def on_train_end(self, trainer: Any, module: Any) -> None:
            if self.state is not None:
                module.load_state_dict(self.state)

    return BestValidationRestore()


def fit_peer(name: str, values: Any, split: str, seq_len: int = 96, horizon: int = 96, epochs: int = 3,
             train_stride: int = 1, batch_size: int = 32, lr: float | None = None, patience: int = 3, seed: int = 0,
             loss: str = "mse", test_windows: int = 0, model_kwargs: dict[str, Any] | None = None,
             device: str = "cpu") -> PeerResult:
    """Train the neuralforecast peer ``name`` on our split of ``values`` and score it on our test windows.

    Parameters
    ----------
    name : {"PatchTST", "iTransformer", "DLinear"}
        The peer.
    values : array [rows, D]
        The raw series (not standardised: the scaler of the training rows is applied here, as in
        :class:`~icml25.spikf.data.LTSFDataset`).
    split : {"ett_hour", "ett_minute", "ratio"}
        Border convention (:func:`~icml25.spikf.data.split_borders`).
    seq_len, horizon : int
        Look-back L and horizon H.
    epochs : int
        Passes over the training windows (``max_steps`` = epochs x steps per pass); early stopping may end sooner.
    train_stride : int
        Start stride of the training and validation windows (neuralforecast's ``step_size``).
    batch_size : int
        Multivariate windows per step (univariate peers: ``batch_size x D`` series windows per step).
    lr : float, optional
        Adam learning rate (default :data:`PEER_LR`), cosine-annealed over the planned steps.
    patience : int
        Validation checks (epochs) without improvement before stopping.
    seed : int
        neuralforecast's ``random_seed`` (initial weights and window sampling).
    loss : {"mse", "mae"}
        Training loss (the peers' papers: MSE); validation and early stopping use MAE, as SpikF's training.
    test_windows : int
        Score the first ``test_windows`` test windows (0: all of them).
    model_kwargs : dict, optional
        Overrides of :data:`PEER_DEFAULTS`.
    device : str
        ``"cpu"`` or ``"cuda[:k]"`` (Lightning accelerator).

    Returns
    -------
    PeerResult
    """
    check_option(name, "name", PEERS)
    values = check_array(values, "values", ndim=2)
    check_option(split, "split", ("ett_hour", "ett_minute", "ratio"))
    check_option(loss, "loss", ("mse", "mae"))
    seq_len, horizon = check_int(seq_len, "seq_len", low=1), check_int(horizon, "horizon", low=1)
    epochs, train_stride = check_int(epochs, "epochs", low=1), check_int(train_stride, "train_stride", low=1)
    batch_size, patience = check_int(batch_size, "batch_size", low=1), check_int(patience, "patience", low=1)
    seed, test_windows = check_int(seed, "seed", low=0), check_int(test_windows, "test_windows", low=0)
    lr = check_positive(PEER_LR[name] if lr is None else lr, "lr")
    if model_kwargs is not None and not isinstance(model_kwargs, dict):
        raise TypeError(f"model_kwargs must be a dict or None, got {type(model_kwargs).__name__}")
    require_neuralforecast()
    import logging

    import pytorch_lightning as pl
    import torch
    from neuralforecast import NeuralForecast, models
    from neuralforecast.losses.pytorch import MAE, MSE

    for log in ("pytorch_lightning", "lightning.pytorch", "lightning_fabric", "neuralforecast"):
        logging.getLogger(log).setLevel(logging.ERROR)
    t0 = time.perf_counter()
    train_ds = LTSFDataset(values, "train", seq_len, horizon, split)  # validates values, borders and lengths
    test_ds = LTSFDataset(values, "test", seq_len, horizon, split)
    LTSFDataset(values, "val", seq_len, horizon, split)
    raw = np.asarray(values, dtype=np.float32)
    b1, b2 = split_borders(len(raw), seq_len, split)
    std = ((raw[:b2[2]] - train_ds.mean) / train_ds.std).astype(np.float32)  # elementwise as LTSFDataset
    D = raw.shape[1]
    n_val_rows = b2[1] - b2[0]
    n_train = (train_ds.n_windows - 1) // train_stride + 1
    steps_per_epoch = max(1, -(-n_train // batch_size))
    max_steps = epochs * steps_per_epoch
    multivariate = name in _MULTIVARIATE
    kwargs = {**PEER_DEFAULTS[name], **(model_kwargs or {})}
    if multivariate:
        kwargs["n_series"] = D
    restore = _best_restore_callback(pl)
    cuda = device.startswith("cuda")
    model = getattr(models, name)(
        h=horizon, input_size=seq_len, loss=MSE() if loss == "mse" else MAE(), valid_loss=MAE(), learning_rate=lr,
        max_steps=max_steps, val_check_steps=steps_per_epoch, early_stop_patience_steps=patience,
        batch_size=D if not multivariate else batch_size,  # univariate: every variable's series in each step
        windows_batch_size=batch_size * (1 if multivariate else D), valid_batch_size=D,
        inference_windows_batch_size=256 * (1 if multivariate else D), step_size=train_stride,
        training_data_availability_threshold=1.0, scaler_type="identity", random_seed=seed,
        lr_scheduler=torch.optim.lr_scheduler.CosineAnnealingLR, lr_scheduler_kwargs={"T_max": max_steps},
        accelerator="gpu" if cuda else "cpu", devices=[int(device.split(":")[1]) if ":" in device else 0] if cuda
        else 1, enable_progress_bar=False, enable_model_summary=False, logger=False, num_sanity_val_steps=0,
        callbacks=[restore], **kwargs)
    nf = NeuralForecast(models=[model], freq=1)
    t_fit = time.perf_counter()
    nf.fit(long_frame(std, b2[1]), val_size=n_val_rows)
    fit_seconds = time.perf_counter() - t_fit
    fitted = nf.models[0]
    # neuralforecast may fit a copy of the model: read the callback that travelled with it
    restore = next((cb for cb in fitted.trainer_kwargs.get("callbacks", []) if type(cb).__name__ == type(restore).__name__),
                   restore)
    val_mae = [float(v) for _, v in fitted.valid_trajectories]
    pred, target = _predict_test(nf, std, b1[2], test_ds.n_windows if not test_windows
                                 else min(test_windows, test_ds.n_windows), seq_len, horizon, D)
    ours = test_ds.windows(1, len(pred))[1]
    if ours.shape != target.shape or not np.array_equal(ours, target):
        raise RuntimeError(f"{name}: the targets neuralforecast returned differ from our test windows "
                           f"(shapes {target.shape} vs {ours.shape}); the split or the frame is misaligned")
    diff = pred.astype(np.float64) - target.astype(np.float64)
    return PeerResult(name, float(np.abs(diff).mean()), float((diff * diff).mean()), pred, target, val_mae,
                      restore.best_index, len(val_mae),
                      int(fitted.valid_trajectories[-1][0]) if fitted.valid_trajectories else 0,
                      time.perf_counter() - t0, fit_seconds)


def _predict_test(nf: Any, std: np.ndarray, start: int, n: int, seq_len: int, horizon: int, D: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Predictions and targets ``[n, H, D]`` of the test windows starting at rows ``start, start + 1, ...``."""
    chunk = max(1, _CV_ROWS // (D * horizon))
    preds, targets = [], []
    col = nf.models[0].alias or type(nf.models[0]).__name__
    for s in range(0, n, chunk):
        k = min(chunk, n - s)
        end = start + s + k - 1 + seq_len + horizon  # the last target row of this chunk, exclusive
        cv = nf.cross_validation(df=long_frame(std, end), n_windows=None, test_size=horizon + k - 1, step_size=1,
                                 use_fitted=True, refit=False)
        cv = cv.sort_values(["unique_id", "cutoff", "ds"], kind="stable")
        preds.append(cv[col].to_numpy(np.float32).reshape(D, k, horizon).transpose(1, 2, 0))
        targets.append(cv["y"].to_numpy(np.float32).reshape(D, k, horizon).transpose(1, 2, 0))
    return np.concatenate(preds), np.concatenate(targets)
