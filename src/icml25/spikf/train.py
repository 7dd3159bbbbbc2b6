"""Training with per-step L1 loss, cosine learning rate and early stopping; evaluation on T-averaged predictions.

Spec §2 (official runner): Adam, ``CosineAnnealingLR(T_max)`` stepped once per epoch, early stopping on the
validation loss (patience, min-delta), the best-validation weights restored at the end. For a model returning
``[T, B, H, D]`` the training loss is the mean over the T steps of the per-step loss; metrics average over T
first.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml25.core.optional import require
from icml25.core.progress import progress
from icml25.core.validation import check_array, check_int, check_option, check_positive, check_real

torch = require("torch")

__all__ = ["fit", "evaluate", "FitResult", "collect_firing_rates"]


@dataclass
class FitResult:
    """What :func:`fit` did: per-epoch train/val losses, the best epoch and its val loss, seconds."""

    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    best_epoch: int = -1
    best_val: float = float("inf")
    seconds: float = 0.0
    stopped_early: bool = False


def _pair(data: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise TypeError(f"{name} must be a pair (X [n, L, D], Y [n, H, D]), got {type(data).__name__}")
    X = check_array(data[0], f"{name}[0]", ndim=3).astype(np.float32)
    Y = check_array(data[1], f"{name}[1]", ndim=3).astype(np.float32)
    if len(X) != len(Y) or X.shape[2] != Y.shape[2]:
        raise ValueError(f"{name}: X {X.shape} and Y {Y.shape} must have the same number of windows and variables")
    return X, Y


def _device(model: Any) -> Any:
    """The device of the model's parameters (CPU for a model without parameters)."""
    p = next(iter(model.parameters()), None)
    return p.device if p is not None else torch.device("cpu")


def _loss(out: Any, y: Any, kind: str) -> Any:
    target = y.unsqueeze(0) if out.dim() == 4 else y  # per-step loss against the target repeated over T
    diff = out - target
    return diff.abs().mean() if kind == "mae" else (diff * diff).mean()


def evaluate(model: Any, data: Any, batch_size: int = 256) -> dict[str, float]:
    """MAE and MSE of ``model.predict`` (T-averaged) over all windows ``data = (X [n, L, D], Y [n, H, D])``.

    The means are over every element of every window, so they do not depend on ``batch_size``.
    """
    X, Y = _pair(data, "data")
    batch_size = check_int(batch_size, "batch_size", low=1)
    was = model.training
    model.eval()
    device = _device(model)
    abs_sum = sq_sum = 0.0
    with torch.no_grad():
        for s in range(0, len(X), batch_size):
            pred = model.predict(torch.from_numpy(X[s:s + batch_size]).to(device)).double().cpu()
            diff = pred - torch.from_numpy(Y[s:s + batch_size]).double()
            abs_sum += float(diff.abs().sum())
            sq_sum += float((diff * diff).sum())
    model.train(was)
    n = Y.size
    return {"mae": abs_sum / n, "mse": sq_sum / n}


def fit(model: Any, train: Any, val: Any, epochs: int = 10, lr: float = 5e-4, patience: int = 3,
        batch_size: int = 32, loss: str = "mae", seed: int = 0, min_delta: float = 2e-4, t_max: int = 20,
        desc: str = "training") -> FitResult:
    """Train ``model`` in place with Adam + cosine LR + early stopping; restore the best-validation weights.

    Parameters
    ----------
    model : torch.nn.Module
        Returns ``[T, B, H, D]`` (spiking, per-step loss) or ``[B, H, D]``; has ``predict``.
    train, val : (X [n, L, D], Y [n, H, D])
        Standardised windows (e.g. ``LTSFDataset.windows(stride)``).
    epochs, lr, patience, batch_size : training budget (``epochs=0`` leaves the model untrained).
    loss : {"mae", "mse"}
        Training loss (SpikF: "mae"; DLinear: "mse").
    seed : int
        Seeds the batch order (the model's initial weights are seeded by the caller).
    min_delta : float
        Improvement of the validation MAE that resets the patience counter.
    t_max : int
        Period of the cosine schedule in epochs.
    """
    X, Y = _pair(train, "train")
    _pair(val, "val")
    epochs = check_int(epochs, "epochs", low=0)
    lr = check_positive(lr, "lr")
    patience = check_int(patience, "patience", low=1)
    batch_size = check_int(batch_size, "batch_size", low=1)
    check_option(loss, "loss", ("mae", "mse"))
    seed = check_int(seed, "seed", low=0)
    min_delta = check_real(min_delta, "min_delta", low=0.0)
    t_max = check_int(t_max, "t_max", low=1)
    res = FitResult()
    if epochs == 0:
        return res
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=t_max)
    rng = np.random.default_rng(seed)
    best_state, bad = None, 0
    t0 = time.perf_counter()
    device = _device(model)
    Xt, Yt = torch.from_numpy(X).to(device), torch.from_numpy(Y).to(device)
    for epoch in progress(range(epochs), desc):
        model.train()
        order = rng.permutation(len(X))
        total = 0.0
        for s in range(0, len(X), batch_size):
            idx = torch.from_numpy(order[s:s + batch_size]).to(device)
            if len(idx) < 2:  # BatchNorm needs two samples (drop_last for a trailing singleton)
                continue
            opt.zero_grad(set_to_none=True)
            value = _loss(model(Xt[idx]), Yt[idx], loss)
            value.backward()
            opt.step()
            total += float(value.detach()) * len(idx)
        sched.step()
        res.train_loss.append(total / len(X))
        v = evaluate(model, val)["mae"]
        res.val_loss.append(v)
        if v < res.best_val - min_delta:
            res.best_val, res.best_epoch, bad = v, epoch, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            bad += 1
            if bad >= patience:
                res.stopped_early = True
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    res.seconds = time.perf_counter() - t0
    return res


def collect_firing_rates(model: Any, X: Any, batch_size: int = 256) -> dict[str, Any]:
    """Firing rates of every LIF layer, block input rates and mask statistics, averaged over windows ``X``.

    Returns ``{"rates": {layer: rate}, "block_input": [rate per SFS block], "head_input": rate,
    "mask_binary": bool, "mask_density": float}``.
    """
    X = check_array(X, "X", ndim=3).astype(np.float32)
    batch_size = check_int(batch_size, "batch_size", low=1)
    was = model.training
    model.eval()
    model.set_recording(True)
    sums: dict[str, float] = {}
    blocks = [0.0] * len(model.sfs)
    head = dens = 0.0
    binary = True
    try:
        with torch.no_grad():
            for s in range(0, len(X), batch_size):
                xb = torch.from_numpy(X[s:s + batch_size]).to(_device(model))
                model(xb)
                w = len(xb) / len(X)
                for k, r in model.firing_rates().items():
                    sums[k] = sums.get(k, 0.0) + w * r
                for j, b in enumerate(model.sfs):
                    blocks[j] += w * b.last_input_rate
                    binary &= bool(((b.last_mask == 0) | (b.last_mask == 1)).all())
                    dens += w * float(b.last_mask.mean()) / len(model.sfs)
                head += w * model.last_head_input_rate
    finally:
        model.set_recording(False)
        model.train(was)
    return {"rates": sums, "block_input": blocks, "head_input": head, "mask_binary": binary, "mask_density": dens}
