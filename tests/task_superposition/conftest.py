"""Shared fixtures: tiny models built once per session (the real SmolLM2, ``smollm2``, is in tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_fab():
    """A size-S TinyGPT on F-AB after a few training steps (weights not trivial, cheap)."""
    import torch

    torch.set_num_threads(1)
    from icml25.task_superposition import synthetic_family, train_icl_model

    model, _ = train_icl_model(synthetic_family("F-AB"), size="S", steps=20, seed=0, show_progress=False)
    return model


@pytest.fixture(scope="session")
def random_gpt2(tmp_path_factory):
    """A random transformers GPT-2 with a BPE tokenizer trained on country prompts (the HFModel path, offline)."""
    import torch

    torch.set_num_threads(1)
    from icml25.llm import HFModel, save_random_gpt2
    from icml25.task_superposition import MixturePromptBuilder, official_setting

    fam = official_setting("country")
    corpus = [it.prompt + "\n" + "\n".join(it.answers)
              for it in MixturePromptBuilder(fam, m=20, random_state=1).sample(30)]
    d = save_random_gpt2(tmp_path_factory.mktemp("gpt2"), corpus, n_positions=512, vocab_size=400,
                         initializer_range=0.2)
    return HFModel(d)
