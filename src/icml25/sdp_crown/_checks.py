"""Argument checks on torch tensors (the numpy-side checks live in :mod:`icml25.core.validation`)."""

from __future__ import annotations

from typing import Any

import torch


def check_tensor(x: Any, name: str, *, ndim: int | tuple[int, ...] | None = None, low: float | None = None,
                 positive: bool = False, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """``x`` as a finite, non-empty float64 tensor (gradients kept), raising ValueError/TypeError naming ``name``.

    ``ndim`` restricts the number of axes; ``low`` is an inclusive lower bound, ``positive`` a strict one at 0.
    """
    if isinstance(x, (str, bytes)) or (isinstance(x, (list, tuple)) and any(isinstance(v, (str, bytes)) for v in x)):
        raise TypeError(f"{name} must be a tensor of numbers, got {x!r:.60}")
    try:
        t = torch.as_tensor(x, dtype=dtype) if not isinstance(x, torch.Tensor) else x.to(dtype)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(f"{name} must be a tensor of numbers, could not convert it: {exc}") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if t.dim() not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} axes, got shape {tuple(t.shape)}")
    if t.numel() == 0:
        raise ValueError(f"{name} must not be empty, got shape {tuple(t.shape)}")
    if t.device.type == "meta":  # shape-only tensors: no values to check
        return t
    with torch.no_grad():
        if not torch.isfinite(t).all():
            raise ValueError(f"{name} must be finite, found NaN or inf")
        if low is not None and (t < low).any():
            raise ValueError(f"{name} must be >= {low}, got min {float(t.min())}")
        if positive and (t <= 0).any():
            raise ValueError(f"{name} must be > 0, got min {float(t.min())}")
    return t


def check_same_batch(name: str, t: torch.Tensor, shape: tuple[int, ...], what: str) -> None:
    """``t`` must have shape ``shape`` (``what`` describes it in the message)."""
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)} ({what}), got {tuple(t.shape)}")
