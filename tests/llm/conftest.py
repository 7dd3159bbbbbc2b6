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


@pytest.fixture(scope="session")
def tiny_models() -> Any:
    """The helper module ``tests/llm/tiny_models.py`` (tiny random Llama / Qwen2 / Gemma 3 folders, a tiny GGUF)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("icml25_tests_llm_tiny_models", Path(__file__).with_name("tiny_models.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def transformers_reference(pretrained_folder: Any) -> Any:
    """``transformers_reference(name)``: ``(AutoTokenizer, AutoModelForCausalLM)`` of a pretrained model's cache
    folder, loaded once per worker; an independent reference for HFModel's native backend (the shared ``smollm2`` /
    ``gemma`` fixtures must not be switched to transformers by touching their ``.model``)."""
    loaded: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in loaded:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            folder = pretrained_folder(name)
            loaded[name] = (AutoTokenizer.from_pretrained(folder),
                            AutoModelForCausalLM.from_pretrained(folder).eval())
        return loaded[name]

    return get
