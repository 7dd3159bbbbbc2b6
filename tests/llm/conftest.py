"""Real pretrained models for the llm tests, shared by the whole test run.

The de-quantised caches live in the persistent icml25 cache (``$ICML25_CACHE/models``), so they are built once
(about a minute for Gemma) and reused by later runs and by other papers' tests. :func:`pretrained_path` holds a
file lock while building, so two pytest-xdist workers never build the same model twice; the models are loaded
once per worker (session scope) and the tests that use them share one xdist group. A test whose model package is
not installed is skipped with the install command as the reason.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest


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
def gemma() -> Any:
    """HFModel of gemma-3-270m (base), loaded once per worker."""
    from icml25.llm.hf import HFModel

    return HFModel(pretrained_folder_or_skip("gemma-3-270m"))


@pytest.fixture(scope="session")
def smollm() -> Any:
    """HFModel of smollm2-135m-instruct, loaded once per worker."""
    from icml25.llm.hf import HFModel

    return HFModel(pretrained_folder_or_skip("smollm2-135m-instruct"))


@pytest.fixture(scope="session")
def minilm() -> Any:
    """Encoder (tokenizer, AutoModel) of all-minilm-l6-v2, loaded once per worker."""
    pretrained_folder_or_skip("all-minilm-l6-v2")
    from icml25.llm import load_encoder

    return load_encoder("pretrained:all-minilm-l6-v2", progress=False)
