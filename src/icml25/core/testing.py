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


def quick_report(slug: str, seed: int = 0) -> Report:
    """Run (once per process) and return the quick reproduction of ``slug`` at ``seed``.

    The report is written to a temporary folder (its path is in ``report.config['_out']``).
    """
    key = (slug, seed)
    if key not in _CACHE:
        from .runner import run_reproduction

        out = Path(tempfile.mkdtemp(prefix=f"icml25-{slug}-"))
        rep = run_reproduction(slug, scale=Scale.QUICK, seed=seed, out=out)
        rep.config["_out"] = str(out / slug)
        _CACHE[key] = rep
    return _CACHE[key]
