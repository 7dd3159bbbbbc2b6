"""Learning-rate schedule shared by every training loop on the LLM layer (TinyGPT, SFT, reward heads)."""

from __future__ import annotations

import math

__all__ = ["warmup_cosine_lr"]


def warmup_cosine_lr(step: int, steps: int, lr: float, warmup: int, min_lr_ratio: float = 0.1) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine decay from ``lr`` to ``min_lr_ratio * lr`` at ``steps``.

    Parameters
    ----------
    step : int
        0-based step index.
    steps : int
        Total number of steps.
    lr : float
        Peak learning rate.
    warmup : int
        Warm-up steps (0 for none).
    min_lr_ratio : float
        Final learning rate as a fraction of ``lr``.
    """
    if step < warmup:
        return lr * (step + 1) / warmup
    frac = (step - warmup) / max(1, steps - warmup)
    return lr * (min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0))))
