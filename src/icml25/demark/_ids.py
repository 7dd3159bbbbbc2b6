"""Validation of token-id sequences (shared by the De-mark modules)."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_ids(x: Any, name: str, vocab_size: int | None = None, allow_empty: bool = False) -> list[int]:
    """A 1-D sequence of non-negative integer token ids (``< vocab_size`` when given), as a list of int."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of token ids, got a string")
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a sequence of token ids: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of token ids, got shape {arr.shape}")
    if arr.size == 0:
        if allow_empty:
            return []
        raise ValueError(f"{name} must hold at least one token id, got an empty sequence")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer token ids, got dtype {arr.dtype}")
    if arr.min() < 0 or (vocab_size is not None and arr.max() >= vocab_size):
        hi = "" if vocab_size is None else f", {vocab_size})"
        raise ValueError(f"{name} ids must be in [0{hi or ', inf)'}, got min {arr.min()}, max {arr.max()}")
    return [int(i) for i in arr]
