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
