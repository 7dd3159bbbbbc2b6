"""Progress bars for long jobs (rich when installed, a silent fallback otherwise)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

__all__ = ["progress", "set_progress_enabled"]

T = TypeVar("T")
_ENABLED = os.environ.get("ICML25_PROGRESS", "1") != "0"


def set_progress_enabled(enabled: bool) -> None:
    """Turn progress bars on or off for this process (tests turn them off)."""
    global _ENABLED
    _ENABLED = bool(enabled)


def progress(iterable: Iterable[T], description: str = "", total: int | None = None, **_: Any) -> Iterator[T]:
    """Iterate over ``iterable`` showing a progress bar on stderr when it is a terminal.

    Uses ``rich`` when it is installed; otherwise (or when stderr is not a TTY, or progress is disabled) the
    items are yielded without output.
    """
    if not _ENABLED or not sys.stderr.isatty():
        yield from iterable
        return
    try:
        from rich.progress import track
    except ImportError:
        yield from iterable
        return
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    yield from track(iterable, description=description or "working", total=total, transient=True)
