"""Helpers for the test suite: skip decorators for missing extras, a per-process cache of quick reports."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from .claims import Report, Scale
from .optional import has

__all__ = ["requires", "quick_report", "test_seeds"]

_CACHE: dict[tuple[str, int], Report] = {}


def requires(*modules: str) -> Any:
    """``pytest.mark.skipif`` that skips a test when any of ``modules`` cannot be imported."""
    import pytest

    missing = [m for m in modules if not has(m)]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


def test_seeds() -> list[int]:
    """Seeds for seed-parametrised tests: 0, or ``ICML25_TEST_SEED`` (an int, ``any`` = random, ``all`` = 0..9)."""
    v = os.environ.get("ICML25_TEST_SEED", "0")
    if v == "all":
        return list(range(10))
    if v == "any":
        import random

        return [random.randrange(2**31)]
    return [int(v)]


test_seeds.__test__ = False  # type: ignore[attr-defined]


def _shared_dir() -> Path:
    """A folder shared by all pytest-xdist workers of one test run (the run's uid names it)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"
    path = Path(tempfile.gettempdir()) / f"icml25-quick-{run}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def quick_report(slug: str, seed: int = 0) -> Report:
    """Run and return the quick reproduction of ``slug`` at ``seed``, once per test run.

    The report is written to a folder shared by the pytest-xdist workers of the run; a worker that asks for a
    report another worker is computing waits for it (file lock) and reads it back from ``report.json``
    (``report.config['_out']`` is the folder).
    """
    import fcntl

    from .report import read_report

    key = (slug, seed)
    if key in _CACHE:
        return _CACHE[key]
    root = _shared_dir()
    out = root / f"{slug}-seed{seed}"
    with open(root / f"{slug}-seed{seed}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            done = out / slug / "report.json"
            if done.exists():
                rep = read_report(done)
            else:
                from .runner import run_reproduction

                rep = run_reproduction(slug, scale=Scale.QUICK, seed=seed, out=out)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    rep.config["_out"] = str(out / slug)
    _CACHE[key] = rep
    return rep
