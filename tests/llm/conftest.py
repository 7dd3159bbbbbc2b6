"""The encoder fixture of the llm tests; the causal models (``smollm2``, ``gemma``) and ``pretrained_folder`` are
session fixtures of tests/conftest.py, shared with the papers' tests."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def minilm(pretrained_folder: Any) -> Any:
    """Encoder (tokenizer, AutoModel) of all-minilm-l6-v2, loaded once per worker."""
    pretrained_folder("all-minilm-l6-v2")
    from icml25.llm import load_encoder

    return load_encoder("pretrained:all-minilm-l6-v2", progress=False)
