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
    for field in ("wm_prf", "probe_combine", "real_probe_style"):
        with pytest.raises(ValueError, match=field):
            Config(**{field: "nope"})
    full = Config.full()  # issue 48: removal over >= 50 prompts x >= 100 tokens, MarkLLM-compatible seeding
    assert full.n_prompts >= 50 and full.new_tokens >= 100 and full.wm_prf.startswith("markllm-")


def test_completion_probe_template_for_a_base_model() -> None:
    from icml25.llm.pretrained import is_cached

    if not is_cached("gemma-3-270m"):
        pytest.skip("Gemma-3-270M not cached")
    transformers = pytest.importorskip("transformers")
    from icml25.demark import ProbeTemplate
    from icml25.demark.real_model import chat_prompt_ids
    from icml25.llm.pretrained import pretrained_path

    tok = transformers.AutoTokenizer.from_pretrained(str(pretrained_path("gemma-3-270m", progress=False)))
    t = ProbeTemplate.from_text(tok)
    assert t.pre[0] == tok.bos_token_id and len(t.post) >= 10  # the watermark window never reaches v for h <= 10
    u, v = tok(" river", add_special_tokens=False)["input_ids"][0], tok(" stone", add_special_tokens=False)["input_ids"][0]
    seq = t.build([u], v, u + 1)
    assert t.parse(seq) == ((u,), v, u + 1)
    assert chat_prompt_ids(tok, "Write a poem.")[0] == tok.bos_token_id  # no chat template: BOS + text


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


def test_paper_preset_and_model_fields() -> None:
    from icml25.demark.reproduce import Config

    cfg = Config.paper()
    assert cfg.real_model == "hf:meta-llama/Llama-3.1-8B-Instruct" and cfg.device == "cuda"
    assert (cfg.real_m, cfg.real_gen_tokens, cfg.real_remove_prompts, cfg.real_h_max) == (20, 300, 100, 10)
    plan = cfg.plan()
    assert plan.needs.gpus == 1 and "hf:meta-llama/Llama-3.1-8B-Instruct" in plan.needs.weights
    assert plan.estimated_seconds > Config.full().plan().estimated_seconds > Config.quick().plan().estimated_seconds
    with pytest.raises(ValueError, match="real_model"):
        Config(real_model="openai:http://localhost:8000/v1#llama")  # a served API cannot be watermarked in-process
    with pytest.raises(ValueError, match="real_surrogate"):
        Config(real_surrogate="gemma")
    with pytest.raises(ValueError, match="device"):
        Config(device="gpu")


def test_missing_local_weights_give_one_line_naming_the_field(tmp_path) -> None:
    pytest.importorskip("transformers")
    from icml25.core.errors import UsageError
    from icml25.demark.experiment.real import load_local_model

    with pytest.raises(UsageError, match=r"--set real_model=hf:"):
        load_local_model(f"hf:{tmp_path / 'missing'}", "cpu", "real_model")
