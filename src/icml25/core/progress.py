"""Progress bars for long jobs (rich when installed, a silent fallback otherwise)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

__all__ = ["progress", "progress_bar", "set_progress_enabled"]

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


@contextlib.contextmanager
def progress_bar(total: int, description: str = "") -> Iterator[Callable[[], None]]:
    """A progress bar of ``total`` steps on stderr, shown from the start; yields ``advance()`` (one step).

    Uses ``rich`` when it is installed and stderr is a terminal (lines printed to stderr meanwhile appear above the
    bar); otherwise ``advance`` does nothing.
    """
    if not _ENABLED or not sys.stderr.isatty() or total <= 0:
        yield lambda: None
        return
    try:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    except ImportError:
        yield lambda: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description or "working", total=total)
        yield lambda: bar.advance(task)
