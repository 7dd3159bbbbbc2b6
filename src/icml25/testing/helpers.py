"""Helpers for the test suite: skip decorators for missing extras, a per-process cache of quick reports."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icml25.core.claims import Report, Scale
from icml25.core.optional import has

__all__ = ["requires", "quick_report", "test_seeds", "run_without", "BadInputCase", "ARRAY", "PROB", "SIZE", "POSITIVE", "REAL",
           "TEXT"]

#: argument kinds of a :class:`BadInputCase`; each names the bad variants the fuzz contract tries for it
ARRAY = "array"        # a numeric array: a NaN or inf at a drawn position, an empty array, an extra axis, a string
PROB = "prob"          # a probability: NaN, a value below 0 or above 1, a string
SIZE = "size"          # a positive integer (a count, a size): 0, a negative, a non-integral float, NaN, a string
POSITIVE = "positive"  # a positive real: 0, a negative, NaN, inf, a string
REAL = "real"          # any finite real: NaN, inf, a string
TEXT = "text"          # a non-empty string: an empty string, a number

_CACHE: dict[tuple[str, int], Report] = {}


@dataclass
class BadInputCase:
    """One valid example call of a public callable, and the kinds of its arguments, for the fuzz contract.

    ``tests/<slug>/bad_input_cases.py`` defines ``CASES: list[BadInputCase]``; ``tests/core/test_bad_input.py``
    checks that every callable in the paper's ``__all__`` has a case and that every bad variant of every
    declared argument raises ``ValueError``/``TypeError`` naming the argument.

    The harness is :mod:`icml25.testing.fuzz` (its docstring lists the exact variants per kind and which public names
    need no case); ``python -m icml25.testing.fuzz <slug>`` runs it on one package. Notes: the valid call runs first
    and must succeed; ``obj()`` is called once per case and the same instance serves the valid call and every bad
    call; the argument counts as named when its keyword appears as a word in the message (``"n must be >= 1"``
    names ``n``; ``"an integer"`` does not); each call has a time limit (10 s for a bad call, 60 s for the valid
    one).

    Parameters
    ----------
    name : str
        The public name (``"fit_rr_mle"``), or ``"Class.method"`` for a method call on an instance.
    kwargs : callable
        Zero-argument function returning the valid keyword arguments (built lazily, so collecting is cheap).
    bad : dict of str -> kind
        Arguments to corrupt and their kind (:data:`ARRAY`, :data:`PROB`, :data:`SIZE`, :data:`POSITIVE`,
        :data:`REAL`, :data:`TEXT`).
    obj : callable, optional
        For ``"Class.method"``: zero-argument function returning a ready instance (fitted if needed).
    skip : str
        Reason this callable takes no numeric user input to corrupt (e.g. a constant-free enum, a protocol).
    valid_limit_s : float
        Time limit of the valid call (default 60 s; longer only where the first call builds a cache).
    warns : type, optional
        A warning category that a bad input may raise instead of an error (documented behaviour).
    """

    name: str
    kwargs: Callable[[], dict[str, Any]] | None = None
    bad: dict[str, str] = field(default_factory=dict)
    obj: Callable[[], Any] | None = None
    skip: str = ""
    warns: type | None = None
    #: time limit of the valid call in seconds (longer only for a call that may build a cache on first use)
    valid_limit_s: float = 60.0


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


#: environment variable naming a folder in which the quick reports are kept across test runs of the same checkout
#: (``.ci/run`` sets it so that ``make test-long`` reuses the quick reports of ``make test``)
QUICK_CACHE_ENV = "ICML25_QUICK_CACHE"


def _shared_dir() -> Path:
    """A folder shared by all pytest-xdist workers of one test run (the run's uid names it), or the folder named by
    ``$ICML25_QUICK_CACHE`` (shared by several runs of the same checkout)."""
    if os.environ.get(QUICK_CACHE_ENV):
        path = Path(os.environ[QUICK_CACHE_ENV])
        path.mkdir(parents=True, exist_ok=True)
        return path
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

    from icml25.core.report import read_report

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
                from icml25.run.runner import run_reproduction

                rep = run_reproduction(slug, scale=Scale.QUICK, seed=seed, out=out)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    rep.config["_out"] = str(out / slug)
    _CACHE[key] = rep
    return rep


def run_without(modules: tuple[str, ...] | list[str], code: str, timeout: float = 120.0) -> Any:
    """Run ``code`` in a fresh interpreter in which importing any of ``modules`` (top-level names) fails.

    A meta-path finder refuses them with ``ModuleNotFoundError`` (setting ``sys.modules[m] = None`` would confuse
    libraries such as scipy that look torch up in ``sys.modules``). Returns the ``subprocess.CompletedProcess``
    (text output captured), for tests of "this part works without that extra".
    """
    import subprocess
    import sys
    import textwrap

    prelude = (
        "import sys, importlib.abc\n"
        f"_BLOCKED = {tuple(modules)!r}\n"
        "class _Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in _BLOCKED:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, _Block())\n"
    )
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout)


run_without.__test__ = False  # type: ignore[attr-defined]
