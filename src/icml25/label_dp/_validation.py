"""Input-validation helpers of the label-DP reproduction's config."""

from __future__ import annotations

from typing import Any


def check_nonempty_tuple(cfg: Any, name: str) -> tuple:
    """``cfg.<name>`` as a tuple, raising ``ValueError`` unless it is a non-empty tuple or list."""
    v = getattr(cfg, name)
    if isinstance(v, (str, bytes)) or not isinstance(v, (tuple, list)) or len(v) == 0:
        raise ValueError(f"{name} must be a non-empty tuple, got {v!r}")
    return tuple(v)
