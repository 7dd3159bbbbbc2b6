"""The real-LLM path with SmolLM2-135M-Instruct (slow: loads and runs a 135M model on CPU)."""

from __future__ import annotations

import pytest

from icml25.teduo import LLMAnnotator, LoRAPolicy, SFTExample, SymbolicState, parse_goal

pytestmark = pytest.mark.slow


def test_lora_step_changes_only_adapters_and_counts_invalid(smollm2) -> None:
    s = SymbolicState(2, 2, 0, None, (("red", "key", 3, 2),))
    pol = LoRAPolicy(smollm2, steps=2, batch_size=2)
    pol.fit([SFTExample("pick up the red key", s, 3, 1), SFTExample("go to the red key", s, 1, 1)])
    trainable = [n for n, p in pol.net.named_parameters() if p.requires_grad]
    assert trainable and all("lora" in n for n in trainable)
    acts = pol.act_batch([s, s], ["pick up the red key", "go to the red key"])
    assert all(a in range(4) for a in acts) and pol.tokens_trained_ > 0
    pol.net.disable_adapter_layers()  # the shared model object is restored for other tests


def test_llm_judge_batched_equals_one_at_a_time(smollm2) -> None:
    s = [SymbolicState(2, 2, 0, c, (("red", "key", 3, 2),)) for c in (None, ("red", "key"))]
    g = [parse_goal("pick up the red key").text] * 2
    batched = LLMAnnotator(smollm2, batch_size=2).judge(s, g)
    single = LLMAnnotator(smollm2, batch_size=1).judge(s, g)
    assert batched.tolist() == single.tolist()


def test_bad_lora_arguments() -> None:
    with pytest.raises(TypeError, match="model"):
        LoRAPolicy(object())


def test_paper_preset_fields_and_plan() -> None:
    from icml25.teduo.reproduce import Config

    cfg = Config.paper()
    assert cfg.llm == "hf:meta-llama/Meta-Llama-3-8B-Instruct" and cfg.device == "cuda" and cfg.llm_baseline
    assert cfg.n_episodes * cfg.episode_length >= 790_000  # the paper's ~800k transitions
    plan = cfg.plan()
    assert plan.needs.gpus == 1 and plan.needs.weights == (cfg.llm,)
    assert plan.estimated_seconds > Config.full().plan().estimated_seconds > Config.quick().plan().estimated_seconds
    with pytest.raises(ValueError, match="llm"):
        Config(llm="openai:http://localhost:8000/v1#llama")  # LoRA needs local weights
    with pytest.raises(ValueError, match="device"):
        Config(device="gpu")


def test_missing_llm_weights_give_one_line_naming_the_field(tmp_path) -> None:
    pytest.importorskip("transformers")
    import dataclasses

    from icml25.core.errors import UsageError
    from icml25.teduo.experiment import load_llm
    from icml25.teduo.reproduce import Config

    with pytest.raises(UsageError, match=r"--set llm=hf:"):
        load_llm(dataclasses.replace(Config.quick(), llm=f"hf:{tmp_path / 'missing'}"))
