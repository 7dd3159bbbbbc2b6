"""The pretrained-policy path of the full experiment (``policy_backend="lora"``, issue 49): the switch validates,
the default full preset uses it, the reproduction runs end to end with it at a toy size and reports C2-C6 and the
competence floors, and the dry run estimates it from the LoRA per-unit costs."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from icml25.core import Scale
from icml25.rstar_math.reproduce import Config

FULL_CLAIMS = ("C2", "C2b", "C3", "C3b", "K1", "K2", "K3", "K4", "C4", "C4b", "C4c", "C4d", "C5", "C5b", "C6")


@pytest.mark.parametrize("kw, exc, match", [
    (dict(policy_backend="gpt2"), ValueError, "policy_backend"),
    (dict(policy_backend="lora", ablations=False, policy_model="openai:http://h:8000/v1#m"), ValueError,
     "policy_model must be 'pretrained:<name>' or 'hf:<dir>'"),
    (dict(policy_backend="lora", ablations=False, policy_model="hf:"), ValueError, "policy_model"),
    (dict(policy_backend="lora", ablations=False, search_workers=2), ValueError, "search_workers=1"),
    (dict(policy_backend="lora"), ValueError, "ablations=false"),
    (dict(policy_model=3), TypeError, "policy_model must be a str"),
    (dict(lora_r=0), ValueError, "lora_r"),
    (dict(step_tokens=0), ValueError, "step_tokens"),
    (dict(beam_eval="yes"), TypeError, "beam_eval"),
])
def test_the_policy_switch_validates(kw: dict, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        Config(**kw)


def test_presets_full_is_the_pretrained_policy_quick_is_tinygpt() -> None:
    quick, full, paper = Config.quick(), Config.full(), Config.paper()
    assert quick.policy_backend == "tinygpt" and quick.step_tokens == 32 and quick.beam_eval
    assert full.policy_backend == "lora" and full.policy_model == "pretrained:smollm2-135m-instruct"
    assert full.rounds >= 3  # round 1 (bootstrap) + at least 2 self-evolution rounds, so C2/C3 mean something
    assert not full.ablations and full.search_workers == 1
    # the larger setting is the paper preset's: the same policy on a larger pool with Table 2's search sizes
    assert paper.policy_backend == "lora" and paper.n_problems > full.n_problems and paper.rounds == 4
    assert (paper.later_candidates, paper.later_rollouts) == (8, 16)


def test_the_dry_run_estimates_the_lora_plan_from_its_per_unit_costs() -> None:
    from icml25.rstar_math import _plan

    full = Config.full()
    plan = full.plan()
    assert plan.scale == "full" and plan.estimated_seconds > 0
    units = {c.what: c for c in plan.costs}
    sft = units["policy LoRA SFT (every round)"]
    assert sft.count == full.sft_steps * full.rounds and sft.seconds_each == pytest.approx(
        _plan._LORA["sft"] * full.batch_size / 4)
    search = units["MCTS search of round 2 (terminal-guided)"]
    assert search.count == full.n_problems * full.later_rollouts * full.later_candidates
    assert search.seconds_each == _plan._LORA["search"]
    # the default full run is sized to fit about 50 minutes of one core of this machine
    assert 20 * 60 <= plan.estimated_seconds <= 55 * 60
    # more rollouts cost more; the TinyGPT plan is unchanged by the switch's other fields
    more = dataclasses.replace(full, later_rollouts=2 * full.later_rollouts)
    assert more.plan().estimated_seconds > plan.estimated_seconds
    assert Config.quick().plan().estimated_seconds == dataclasses.replace(
        Config.quick(), policy_model="hf:/elsewhere", lora_r=4).plan().estimated_seconds


def _toy_lora(model_dir: Path, **kw) -> Config:
    base = dict(policy_backend="lora", policy_model=f"hf:{model_dir}", ablations=False, n_problems=4, levels=(1,),
                n_candidates=3, rollouts=3, max_depth=4, sft_steps=2, ppm_steps=2, batch_size=2, ppm_batch_pairs=2,
                n_heldout=2, rounds=3, later_candidates=2, later_rollouts=1, extra_rollouts=1, n_test=3,
                test_levels=(1, 5), eval_ns=(1, 2), vote=(1, 1, 1), beam_eval=False, step_tokens=8, n_boot=50,
                lora_r=2, rename_copies=1)
    return Config(**{**base, **kw})


@pytest.fixture(scope="module")
def random_gpt2(tmp_path_factory) -> Path:
    """A tiny random GPT-2 transformers folder (the LoRA path without pretrained weights: fast)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    from icml25.llm import save_random_gpt2
    from icml25.rstar_math.domain.steparith import StepArithGenerator

    corpus = [p.question for p in StepArithGenerator(levels=(1, 2), seed=0).sample(20)]
    corpus += ["<code> <end_of_step> <end_of_code> <output> <end_of_output> <answer> \\boxed{ } <end_of_answer>"]
    return save_random_gpt2(tmp_path_factory.mktemp("gpt2"), corpus, n_layer=1, n_embd=16, n_head=2,
                            n_positions=1024, vocab_size=400)


def test_the_lora_path_runs_end_to_end_and_reports_the_full_claims(random_gpt2: Path, tmp_path: Path) -> None:
    from icml25.rstar_math.reproduce import reproduce

    rep = reproduce(Scale.FULL, 0, tmp_path, _toy_lora(random_gpt2))
    by_id = {c.id: c for c in rep.claims}
    assert set(FULL_CLAIMS) <= set(by_id)
    for cid in ("C2", "C3", "C6", "K1", "K2", "K3", "K4"):  # measured on the LoRA policy (held or not)
        assert isinstance(by_id[cid].measured, (int, float)) and not math.isnan(by_id[cid].measured), cid
    assert by_id["D1"].note.startswith("ablations skipped")
    rounds = rep.tables["evaluation_per_round"]
    assert [r["round"] for r in rounds] == [1, 2, 3]
    work = tmp_path / "self_evolution"
    for k in (1, 2, 3):  # every round's models are LoRA adapters, never copies of the base weights
        assert (work / f"round_{k}" / "policy" / "adapter_model.safetensors").is_file()
        assert (work / f"round_{k}" / "ppm" / "value_head.bin").is_file()
    assert not (work / "base").exists()  # no from-scratch base model
    # resume: every round, round 1's neural part included, is loaded back through the backend
    again = reproduce(Scale.FULL, 0, tmp_path, _toy_lora(random_gpt2))
    assert json.dumps(again.tables["rounds"]) == json.dumps(rep.tables["rounds"])  # (NaN-safe)


def test_a_missing_pretrained_model_names_the_field(tmp_path: Path) -> None:
    pytest.importorskip("peft")
    from icml25.core.errors import UsageError
    from icml25.rstar_math.experiment.stages import make_lora_backend

    with pytest.raises(UsageError, match="policy_model"):
        make_lora_backend(_toy_lora(tmp_path / "nowhere"), 0)


@pytest.mark.slow
def test_the_lora_path_on_smollm2_at_a_toy_size(smollm2, tmp_path: Path) -> None:
    """The default full run's policy (the real SmolLM2-135M-Instruct) through every stage at a toy size: round 1
    SFT'd on the bootstrap trajectories, rounds 2-3 searched by the LoRA policy (r3 PPM-augmented), C2-C6 and the
    competence floors measured on it."""
    from icml25.rstar_math.reproduce import reproduce

    cfg = _toy_lora(Path("unused"), policy_model="pretrained:smollm2-135m-instruct", n_problems=3, sft_steps=2,
                    ppm_steps=1, batch_size=2, ppm_batch_pairs=1, n_test=2, test_levels=(1,), step_tokens=40,
                    lora_r=4, rollouts=2, n_candidates=3)
    rep = reproduce(Scale.FULL, 0, tmp_path, cfg)
    by_id = {c.id: c for c in rep.claims}
    for cid in ("C2", "C3", "C6", "K1", "K2", "K3", "K4", "C4", "C5"):
        assert isinstance(by_id[cid].measured, (int, float)) and not math.isnan(by_id[cid].measured), cid
    assert [r["round"] for r in rep.tables["evaluation_per_round"]] == [1, 2, 3]
    assert rep.tables["rounds"][0]["n_sft"] > 0
