"""Shared fixtures: the ``global_seed`` fixture, progress bars off, one torch thread (faster for small models)."""

from __future__ import annotations

import os

import pytest

from icml25.core.progress import set_progress_enabled
from icml25.core.testing import test_seeds

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
