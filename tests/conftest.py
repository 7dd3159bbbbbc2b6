"""Shared fixtures: the ``global_seed`` fixture, progress bars off, one torch thread (faster for small models), and
the real pretrained language models, one session fixture per model: ``smollm2`` and ``gemma``."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

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


# ------------------------------------------------------------------------- real pretrained models (issue 42)
# The de-quantised caches live in the persistent icml25 cache (``$ICML25_CACHE/models``): built once (about a minute
# for Gemma) and reused by later runs. ``pretrained_path`` holds a file lock while building, so two pytest-xdist
# workers never build the same model twice. Each model is loaded once per worker (session scope), and the tests that
# use one share the xdist group "pretrained_models" (``--dist loadgroup``: one worker loads it). A test whose model
# package is not installed is skipped with the install command as the reason.
PRETRAINED_FIXTURES = {"smollm2": "smollm2-135m-instruct", "gemma": "gemma-3-270m"}


def pretrained_folder_or_skip(name: str) -> Path:
    """The cache folder of ``name`` (built on first use), or skip the test when its package is not installed.

    When the icml25 cache folder is not writable, a folder shared by this run's workers is used instead.
    """
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from icml25.llm.pretrained import CacheNotWritableError, get_pretrained, is_installed, pretrained_path

    m = get_pretrained(name)
    if not is_installed(name):
        pytest.skip(f"pretrained model {name!r} is not installed ({m.install})")
    if m.kind == "causal":
        for mod in ("gguf", "accelerate"):
            pytest.importorskip(mod, reason=f"{name} needs {mod} (pip install 'icml25[models]')")
    try:
        return pretrained_path(name, progress=False)
    except CacheNotWritableError:
        run = os.environ.get("PYTEST_XDIST_TESTRUNUID", f"pid{os.getpid()}")
        os.environ["ICML25_CACHE"] = str(Path(tempfile.gettempdir()) / f"icml25-cache-{run}")
        return pretrained_path(name, progress=False)


@pytest.fixture(scope="session")
def pretrained_folder() -> Any:
    """:func:`pretrained_folder_or_skip` as a fixture: ``pretrained_folder("all-minilm-l6-v2")``."""
    return pretrained_folder_or_skip


@pytest.fixture(scope="session")
def smollm2() -> Any:
    """:class:`~icml25.llm.hf.HFModel` of SmolLM2-135M-Instruct, loaded once per worker (never modify it in place)."""
    from icml25.llm.hf import HFModel

    return HFModel(pretrained_folder_or_skip(PRETRAINED_FIXTURES["smollm2"]))


@pytest.fixture(scope="session")
def gemma() -> Any:
    """:class:`~icml25.llm.hf.HFModel` of Gemma-3-270m (base), loaded once per worker (never modify it in place)."""
    from icml25.llm.hf import HFModel

    return HFModel(pretrained_folder_or_skip(PRETRAINED_FIXTURES["gemma"]))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that use a pretrained-model fixture share one xdist group (the model is loaded by one worker)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if set(PRETRAINED_FIXTURES) & set(getattr(item, "fixturenames", ())) and \
                item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group("pretrained_models"))


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
