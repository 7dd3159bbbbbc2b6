"""The reproduction's Config rejects bad fields; the real-model helpers build words and prompts from ids."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


def test_config_validates_fields() -> None:
    from icml25.demark.reproduce import Config

    with pytest.raises(ValueError, match="wm_h"):
        Config(wm_h=0)
    with pytest.raises(ValueError, match="h_max"):
        Config(wm_h=5, h_max=5)
    with pytest.raises(ValueError, match="wm_delta"):
        Config(wm_delta=-1.0)
    with pytest.raises(TypeError, match="n_prompts"):
        Config(n_prompts=1.5)
    with pytest.raises(TypeError, match="sigma_curve"):
        Config(sigma_curve=[0.1])
    assert Config.full().n_prompts > Config.quick().n_prompts


def test_vocabulary_words_are_single_tokens() -> None:
    from icml25.llm.pretrained import is_cached

    if not is_cached("smollm2-135m-instruct"):
        pytest.skip("SmolLM2 not cached")
    transformers = pytest.importorskip("transformers")
    from icml25.demark.real_model import chat_prompt_ids, vocabulary_words
    from icml25.llm.pretrained import pretrained_path

    tok = transformers.AutoTokenizer.from_pretrained(str(pretrained_path("smollm2-135m-instruct", progress=False)))
    ids = vocabulary_words(tok, ["the", "and", "river", "stone", "xqzv", "be"], lo=0, hi=6)
    words = [tok.decode([i]) for i in ids]
    assert " river" in words and " stone" in words and " be" not in words  # length >= 3
    assert all(len(tok(w, add_special_tokens=False)["input_ids"]) == 1 for w in words)
    p = chat_prompt_ids(tok, "Write a poem.")
    assert tok.decode(p).endswith("<|im_start|>assistant\n")
