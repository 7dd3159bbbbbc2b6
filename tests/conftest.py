"""Shared fixtures: the ``global_seed`` fixture, progress bars off, one torch thread (faster for small models)."""

from __future__ import annotations

import os

import pytest

from icml25.core.progress import set_progress_enabled
from icml25.testing import test_seeds

os.environ.setdefault("ICML25_PROGRESS", "0")
set_progress_enabled(False)


def pytest_configure(config: pytest.Config) -> None:
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass


@pytest.fixture(params=test_seeds())
def global_seed(request: pytest.FixtureRequest) -> int:
    """0 by default; ``ICML25_TEST_SEED=any|all|<int>`` sweeps other seeds."""
    return int(request.param)


# ------------------------------------------------------------- counts of the bad-input fuzz contract (issue 19)
_FUZZ: dict[str, dict[str, int]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the counts that tests/core/test_bad_input.py records (also from pytest-xdist workers)."""
    if report.when != "call":
        return
    for key, value in report.user_properties:
        if key == "bad_input_fuzz" and isinstance(value, dict):
            _FUZZ[str(value["package"])] = value


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _FUZZ:
        return
    n_call = sum(v["callables"] for v in _FUZZ.values())
    n_bad = sum(v["bad_inputs"] for v in _FUZZ.values())
    n_skip = sum(v["skipped"] for v in _FUZZ.values())
    terminalreporter.write_sep("-", "bad-input fuzz contract")
    terminalreporter.write_line(f"{len(_FUZZ)} package(s), {n_call} public callables ({n_skip} skip= reasons), "
                                f"{n_bad} bad inputs tried")
    for pkg, v in sorted(_FUZZ.items()):
        terminalreporter.write_line(f"  {pkg}: {v['callables']} callables, {v['cases']} cases, "
                                    f"{v['bad_inputs']} bad inputs")
