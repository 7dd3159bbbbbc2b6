"""Small input checks shared by the rstar_math modules (on top of :mod:`icml25.core.validation`)."""

from __future__ import annotations

from typing import Any

from icml25.core.validation import check_int, check_positive, check_real

__all__ = ["check_text", "check_sampling", "check_training", "check_path"]


def check_text(x: Any, name: str, *, allow_empty: bool = False) -> str:
    """A string (non-empty unless ``allow_empty``), naming ``name`` in the error."""
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a string, got {type(x).__name__} {x!r}")
    if not allow_empty and not x.strip():
        raise ValueError(f"{name} must be a non-empty string, got {x!r}")
    return x


def check_path(x: Any, name: str) -> str:
    """A non-empty path given as ``str`` or ``os.PathLike``."""
    import os

    if isinstance(x, os.PathLike):
        x = os.fspath(x)
    return check_text(x, name)


def check_sampling(n: Any, temperature: Any, max_tokens: Any) -> tuple[int, float, int]:
    """``n >= 1`` samples, a finite ``temperature >= 0`` and ``max_tokens >= 1`` of a ``sample_steps`` call."""
    return (check_int(n, "n", low=1), check_real(temperature, "temperature", low=0.0),
            check_int(max_tokens, "max_tokens", low=1))


def check_training(steps: Any, batch_size: Any, lr: Any, warmup: Any = 0, weight_decay: Any = 0.0,
                   grad_clip: Any = 1.0) -> None:
    """Step count, batch size, learning rate, warm-up, weight decay and clipping norm of a training loop."""
    check_int(steps, "steps", low=1)
    check_int(batch_size, "batch_size", low=1)
    check_positive(lr, "lr")
    check_int(warmup, "warmup", low=0)
    check_real(weight_decay, "weight_decay", low=0.0)
    check_positive(grad_clip, "grad_clip")
