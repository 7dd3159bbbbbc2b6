"""Shared fixtures: tiny models built once per session (real pretrained models only in slow tests)."""

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


@pytest.fixture(scope="session")
def smollm2():
    """The cached SmolLM2-135M-Instruct (slow tests only)."""
    from icml25.llm.pretrained import is_cached

    if not is_cached("smollm2-135m-instruct"):
        pytest.skip("smollm2-135m-instruct is not installed/cached (icml25 models)")
    import torch

    torch.set_num_threads(1)
    from icml25.llm import load_model

    return load_model("pretrained:smollm2-135m-instruct")
