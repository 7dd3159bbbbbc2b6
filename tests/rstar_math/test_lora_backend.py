"""The LoRA backend on a real pretrained model (SmolLM2-135M-Instruct, the session fixture ``smollm2``): SFT trains
only the adapter and lowers the loss, the PPM equals an independent hidden-state value head, save -> load
round-trips exactly, and SelfEvolution runs end to end with it."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")  # the model itself is the session fixture ``smollm2`` of tests/conftest.py

from icml25.rstar_math.domain.bootstrap_solver import NoisyRuleSolver  # noqa: E402
from icml25.rstar_math.domain.step_format import StepFormat  # noqa: E402
from icml25.rstar_math.domain.steparith import StepArithGenerator  # noqa: E402
from icml25.rstar_math.execution.code_executors import SafeArithExecutor  # noqa: E402
from icml25.rstar_math.pipeline.extraction import PairRecord  # noqa: E402
from icml25.rstar_math.pipeline.self_evolution import RoundConfig, SelfEvolution  # noqa: E402
from icml25.rstar_math.search.mcts import MCTSConfig  # noqa: E402

FMT = StepFormat()
QUESTIONS = ["Ann has 3 apples . Bob has 4 more than Ann . How many apples does Bob have ?",
             "Dan has 12 pens . Eve has 5 fewer than Dan . How many pens does Eve have ?",
             "Max has 6 cards . Kim has twice as many as Max . How many cards does Kim have ?",
             "Sam has 9 coins . Lea has 2 more than Sam . How many coins does Lea have ?"]
RESPONSES = [" <code> # Bob has 4 more than Ann \n Bob = 3 + 4 <end_of_step> # Now print the final answer \n "
             "print ( Bob ) <end_of_code> <output> 7 <end_of_output> <answer> \\boxed{ 7 } <end_of_answer>",
             " <code> # Eve has 5 fewer than Dan \n Eve = 12 - 5 <end_of_step> # Now print the final answer \n "
             "print ( Eve ) <end_of_code> <output> 7 <end_of_output> <answer> \\boxed{ 7 } <end_of_answer>",
             " <code> # Kim has twice as many as Max \n Kim = 6 * 2 <end_of_step> # Now print the final answer \n "
             "print ( Kim ) <end_of_code> <output> 12 <end_of_output> <answer> \\boxed{ 12 } <end_of_answer>",
             " <code> # Lea has 2 more than Sam \n Lea = 9 + 2 <end_of_step> # Now print the final answer \n "
             "print ( Lea ) <end_of_code> <output> 11 <end_of_output> <answer> \\boxed{ 11 } <end_of_answer>"]
EXAMPLES = [(FMT.prompt(q), r) for q, r in zip(QUESTIONS, RESPONSES)]


def _backend(lm, **kw):
    from icml25.rstar_math.models.lora_backend import LoRABackend

    return LoRABackend(lm, **{"r": 4, "alpha": 8.0, "max_length": 256, "warmup": 2, **kw})


def _pairs():
    out = []
    for q, r in zip(QUESTIONS[:3], RESPONSES[:3]):
        first = r.split("<end_of_step>")[0] + "<end_of_step>"
        wrong = first.replace(" + ", " - ") if " + " in first else first.replace(" - ", " + ").replace(" * ", " + ")
        out.append(PairRecord(prompt=FMT.prompt(q), pos=first, neg=wrong, pos_count=1, neg_count=1, margin=2.0))
    return out


@pytest.mark.long  # over ~10 s: CI's second phase (make test-long)
def test_sft_trains_only_the_adapter_and_lowers_the_loss(smollm2):
    be = _backend(smollm2)
    before = {k: v.clone() for k, v in smollm2.model.state_dict().items()}
    untouched, policy = be.fresh_policy(), be.fresh_policy()
    prompts = [EXAMPLES[0][0]]
    base_logits = smollm2.next_token_logits(prompts)
    np.testing.assert_allclose(policy.next_token_logits(prompts), base_logits, atol=1e-4)  # LoRA B = 0 at start
    n_lora = sum(p.numel() for p in policy.parameters())
    assert 0 < n_lora < 0.05 * smollm2.num_parameters()
    losses = be.train_policy(policy, EXAMPLES, steps=4, batch_size=2, lr=3e-3, seed=0)
    assert len(losses) == 4 and np.mean(losses[-2:]) < 0.7 * losses[0]
    # base weights bit-identical: the user's model and the backend's frozen copy
    assert all(torch.equal(v, smollm2.model.state_dict()[k]) for k, v in before.items())
    frozen = {n.replace(".base_layer", ""): p for n, p in be._model.named_parameters() if "lora_" not in n}
    assert len(frozen) == len(before) - ("lm_head.weight" in before and "lm_head.weight" not in frozen)
    assert all(torch.equal(p, before[n]) for n, p in frozen.items())
    # only the trained adapter moved: the other fresh adapter still gives the base model's logits
    assert max(float(p.detach().abs().max()) for n, p in be._model.named_parameters()
               if "lora_B" in n and policy.adapter in n) > 0
    np.testing.assert_allclose(untouched.next_token_logits(prompts), base_logits, atol=1e-4)
    assert np.abs(policy.next_token_logits(prompts) - base_logits).max() > 1e-2
    # the step policy of the search: raw text continuations ending with the stop string
    steps = be.step_policy(policy).sample_steps(prompts, n=2, temperature=1.0, stop=list(FMT.stop), max_tokens=6,
                                                seed=0)
    assert len(steps) == 1 and len(steps[0]) == 2 and all(isinstance(s, str) for s in steps[0])


@pytest.mark.long  # over ~10 s: CI's second phase (make test-long)
def test_ppm_scores_save_and_load(smollm2, tmp_path):
    from icml25.rstar_math.models.lora_backend import LoRAPolicy
    from icml25.rstar_math.models.real_llm import HiddenStateValueHead

    be = _backend(smollm2)
    policy = be.fresh_policy()
    be.train_policy(policy, EXAMPLES[:1], steps=1, batch_size=1, lr=3e-3, seed=0)
    ppm = be.make_ppm(policy)
    pairs = _pairs()
    losses = be.train_ppm(ppm, pairs, steps=1, batch_size=2, lr=5e-3, seed=0)
    assert len(losses) == 1 and all(np.isfinite(losses)) and abs(losses[0] - np.log(2)) < 0.05  # head starts at ~0
    prefixes, steps = [p.prompt for p in pairs], [p.pos for p in pairs]
    s = ppm.score(prefixes, steps)
    assert s.shape == (3,) and np.all(np.abs(s) <= 1)
    # independent path: HFModel.hidden_states (left padding, inference mode) + the official head file layout
    ref = HiddenStateValueHead(LoRAPolicy(be, ppm.adapter), ppm.head_state()).score(prefixes, steps)
    np.testing.assert_allclose(s, ref, atol=1e-5)
    assert 0.0 <= be.pair_accuracy(ppm, pairs) <= 1.0
    be.save_policy(policy, tmp_path / "policy")
    be.save_ppm(ppm, tmp_path / "ppm")
    size = sum(f.stat().st_size for f in tmp_path.rglob("*") if f.is_file())
    assert size < 0.05 * 4 * smollm2.num_parameters()  # adapters and head only, never the base weights
    again = _backend(smollm2)  # a fresh backend on the same base model
    pol2, ppm2 = again.load_policy(tmp_path / "policy"), again.load_ppm(tmp_path / "ppm")
    prompts = [EXAMPLES[2][0], EXAMPLES[3][0]]
    np.testing.assert_array_equal(pol2.next_token_logits(prompts), policy.next_token_logits(prompts))
    np.testing.assert_array_equal(ppm2.score(prefixes, steps), s)
    assert not ppm2.training


def test_bad_input_and_missing_peft(smollm2, tmp_path, monkeypatch):
    from icml25.core.optional import MissingExtraError
    from icml25.rstar_math.models.lora_backend import LoRABackend
    from icml25.rstar_math.models.tiny_policy import make_tiny_lm

    be = _backend(smollm2)
    policy = be.fresh_policy()
    with pytest.raises(ValueError, match="examples"):
        be.train_policy(policy, [], steps=1, batch_size=1, lr=1e-3)
    with pytest.raises(ValueError, match=r"examples\[0\]"):
        be.train_policy(policy, [("prompt", "   ")], steps=1, batch_size=1, lr=1e-3)
    with pytest.raises(TypeError, match="made by this LoRABackend"):
        _backend(smollm2).step_policy(policy)
    with pytest.raises(ValueError, match="pairs"):
        be.train_ppm(be.make_ppm(policy), [], steps=1, batch_size=1, lr=1e-3)
    with pytest.raises(FileNotFoundError, match="adapter_model.safetensors"):
        be.load_policy(tmp_path)
    with pytest.raises(TypeError, match="HFModel"):
        LoRABackend(make_tiny_lm(n_layer=1, n_head=2, n_embd=16, block_size=32))
    with pytest.raises(ValueError, match="r must"):
        LoRABackend(smollm2, r=0)
    # an adapter of another base model is refused
    from icml25.llm import HFModel, save_random_gpt2

    other = LoRABackend(HFModel(save_random_gpt2(tmp_path / "gpt2", ["a b c"] * 4, n_layer=1, n_embd=16)), r=2)
    other.save_policy(other.fresh_policy(), tmp_path / "gpt2_policy")
    with pytest.raises(ValueError, match="another base model"):
        be.load_policy(tmp_path / "gpt2_policy")
    monkeypatch.setitem(sys.modules, "peft", None)  # peft not installed
    with pytest.raises(MissingExtraError, match=r"pip install 'icml25\[llm\]'"):
        LoRABackend(smollm2)


@pytest.mark.slow
def test_self_evolution_with_the_lora_backend(smollm2, tmp_path):
    """Round 1: bootstrap search, LoRA SFT and PPM; round 2: the LoRA policy generates and the LoRA PPM scores."""
    pool = StepArithGenerator(levels=(1,), seed=0).sample(3)
    train = dict(sft_steps=3, ppm_steps=2, batch_size=2, ppm_batch_pairs=2, lr=2e-3, pair_min_edit=1,
                 pair_edit_unit="code_token")
    rounds = [RoundConfig(MCTSConfig(n_candidates=3, rollouts=3, max_depth=6, errors_threshold=2), **train),
              RoundConfig(MCTSConfig(n_candidates=2, rollouts=1, max_depth=3, errors_threshold=1, mode="ppm_init"),
                          **train)]
    be = _backend(smollm2)
    ev = SelfEvolution(pool, NoisyRuleSolver(pool, seed=0), rounds, tmp_path, be, SafeArithExecutor(False),
                       max_tokens=40)
    m = ev.run()
    assert [r["round"] for r in m] == [1, 2] and m[0]["n_sft"] > 0 and m[0]["n_pairs"] > 0
    assert np.isfinite(m[0]["sft_loss_last"]) and 0.0 <= m[0]["ppm_train_pair_acc"] <= 1.0
    for k in (1, 2):
        for f in ("policy/adapter_model.safetensors", "ppm/adapter_model.safetensors", "ppm/value_head.bin"):
            assert (tmp_path / f"round_{k}" / f).is_file()
    assert not (tmp_path / "round_1" / "policy" / "model.safetensors").exists()
    # resume: every round is loaded back through the backend
    m2 = SelfEvolution(pool, NoisyRuleSolver(pool, seed=0), rounds, tmp_path, _backend(smollm2),
                       SafeArithExecutor(False), max_tokens=40).run()
    assert json.dumps(m2) == json.dumps(m)  # (NaN-safe)


@pytest.mark.long  # over ~10 s: CI's second phase (make test-long)
def test_one_round_self_evolution_with_the_lora_backend(smollm2, tmp_path):
    pool = StepArithGenerator(levels=(1,), seed=0).sample(3)
    rc = RoundConfig(MCTSConfig(n_candidates=3, rollouts=3, max_depth=6, errors_threshold=2), sft_steps=1,
                     ppm_steps=1, batch_size=1, ppm_batch_pairs=1, lr=2e-3, pair_min_edit=1,
                     pair_edit_unit="code_token")
    be = _backend(smollm2)
    ev = SelfEvolution(pool, NoisyRuleSolver(pool, seed=0), [rc], tmp_path, be, SafeArithExecutor(False))
    (m,) = ev.run()
    assert m["n_sft"] > 0 and m["n_pairs"] > 0 and not m["carried_over_previous_models"]
    policy, ppm = ev.models[1]
    assert policy.backend is be and ppm.backend is be
    assert (tmp_path / "round_1" / "ppm" / "value_head.bin").is_file()
