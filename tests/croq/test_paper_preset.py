"""The paper preset and its pieces: model strings, option counts, split shares, the one-line load error."""

from __future__ import annotations

import pytest

from icml25.croq.reproduce import Config


def test_paper_preset_is_the_papers_setting_and_plans() -> None:
    cfg = Config.paper()
    assert cfg.models == ("hf:meta-llama/Meta-Llama-3-8B-Instruct", "hf:microsoft/Phi-3-mini-4k-instruct",
                          "hf:princeton-nlp/gemma-2-9b-it-SimPO")
    assert cfg.datasets == ("mmlu", "truthfulqa", "toolalpaca") and cfg.option_counts == (4, 10, 15)
    assert cfg.mmlu_subjects == "all" and cfg.device == "cuda" and cfg.claim_alpha == 0.05
    plan = cfg.plan()
    assert plan.needs.gpus == 1 and len(plan.needs.weights) == 3 and plan.needs.downloads
    assert plan.estimated_seconds > Config.quick().plan().estimated_seconds


def test_plan_follows_the_config() -> None:
    import dataclasses

    base = Config.full()
    more = dataclasses.replace(base, n_test=120)
    assert more.plan().estimated_seconds > base.plan().estimated_seconds


@pytest.mark.parametrize(("field", "value"), [("option_counts", (2,)), ("split_fractions", (0.5, 0.5, 0.5)),
                                              ("mmlu_subjects", "some"), ("device", "gpu"), ("scoring", "logits"),
                                              ("models", ("hf:",)), ("models", ("s3:bucket/model",))])
def test_new_fields_are_validated(field: str, value) -> None:
    with pytest.raises((ValueError, TypeError), match=field):
        Config(**{field: value})


def test_split_sizes_and_tags() -> None:
    from icml25.croq.experiment.real_claims import option_counts, short_name, split_sizes

    assert split_sizes(Config.paper(), 817) == (232, 151, 433)
    assert split_sizes(Config.full(), 313) == (100, 100, 110)  # the smallest factual set has 313 questions
    assert option_counts(Config.full()) == (4,) and option_counts(Config.paper()) == (4, 10, 15)
    assert Config.full().scoring == "text" and Config.quick().scoring == "letters" == Config.paper().scoring
    assert short_name("gemma-3-270m") == "gemma"
    assert short_name("hf:/models/Meta-Llama-3-8B-Instruct") == "meta-llama-3-8b-instruct"
    assert short_name("openai:http://localhost:8000/v1#microsoft/Phi-3-mini-4k-instruct") == "phi-3-mini-4k-instruct"


def test_missing_weights_give_one_line_naming_what_to_pass(tmp_path) -> None:
    pytest.importorskip("transformers")
    from icml25.core.errors import UsageError
    from icml25.croq.experiment.real_claims import make_answerer

    with pytest.raises(UsageError, match=r"--set models=.*hf:/path"):
        make_answerer(f"hf:{tmp_path / 'no-such-model'}", Config.paper())
