"""Load-robust timing of competing code paths, for the speed claims of the reproductions.

A speed claim compares two measured times (a ratio or a speed-up). On a shared machine two things distort such a
comparison: other threads of the same process (a progress monitor, a thread pool a previous call left running, a
pytest plugin) are counted by ``time.process_time``, and a burst of load on the machine hits whichever path happens
to run during it. :func:`time_interleaved` removes the first by reading the calling thread's own CPU clock
(``time.thread_time``) and the second by running the paths round-robin several times and keeping each path's
least time, the usual estimate of its intrinsic cost (as ``timeit`` recommends).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["time_interleaved"]

_CLOCKS: dict[str, Callable[[], float]] = {"thread": time.thread_time, "process": time.process_time,
                                           "wall": time.perf_counter}


def time_interleaved(tasks: Mapping[str, Callable[[], Any]], repeats: int = 1,
                     clock: str = "thread") -> tuple[dict[str, Any], dict[str, float]]:
    """Run every task ``repeats`` times round-robin; return each task's first result and its least time.

    Parameters
    ----------
    tasks : mapping name -> zero-argument callable
        The code paths to compare. Each is called ``repeats`` times, in the order
        ``a, b, ..., a, b, ...``, so that a burst of load falls on every path alike.
    repeats : int
        Calls per task (≥ 1). The least of a task's times is returned.
    clock : {"thread", "process", "wall"}
        ``"thread"`` (default): CPU seconds of the calling thread (``time.thread_time``); right when the work runs
        on that thread (single-threaded numpy, ``torch.set_num_threads(1)``) and immune to other threads and
        processes. ``"process"``: CPU seconds of all threads of the process. ``"wall"``: elapsed seconds.

    Returns
    -------
    results : dict name -> the first call's return value
    seconds : dict name -> least time of the task over its ``repeats`` calls, in seconds
    """
    from .validation import check_int, check_option

    repeats = check_int(repeats, "repeats", low=1)
    clock = check_option(clock, "clock", tuple(_CLOCKS))
    if not isinstance(tasks, Mapping) or not tasks:
        raise ValueError("tasks must be a non-empty mapping of name -> zero-argument callable, "
                         f"got {type(tasks).__name__}")
    for name, fn in tasks.items():
        if not callable(fn):
            raise TypeError(f"tasks[{name!r}] must be a zero-argument callable, got {type(fn).__name__}")
    now = _CLOCKS[clock]
    results: dict[str, Any] = {}
    seconds = {name: float("inf") for name in tasks}
    for _ in range(repeats):
        for name, fn in tasks.items():
            t0 = now()
            out = fn()
            seconds[name] = min(seconds[name], now() - t0)
            results.setdefault(name, out)
    return results, seconds
