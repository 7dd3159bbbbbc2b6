"""Self-evolution rounds: artifacts per round, policies re-trained from the base, resumable after a kill."""

import json

import pytest
import torch

from icml25.rstar_math.domain.bootstrap_solver import NoisyRuleSolver
from icml25.rstar_math.domain.steparith import StepArithGenerator
from icml25.rstar_math.execution.code_executors import SafeArithExecutor
from icml25.rstar_math.models.tiny_policy import make_tiny_lm
from icml25.rstar_math.pipeline.self_evolution import (
    RoundConfig,
    SelfEvolution,
    TimeBudgetExceeded,
    paper_rounds,
)
from icml25.rstar_math.search.mcts import MCTSConfig


def _setup(tmp_path):
    torch.set_num_threads(1)
    pool = StepArithGenerator(levels=(1, 2, 3), seed=0).sample(12)
    base = make_tiny_lm(n_layer=1, n_head=2, n_embd=32, block_size=160, seed=0)
    train = dict(sft_steps=6, ppm_steps=4, batch_size=8, ppm_batch_pairs=4, lr=1e-3)
    rounds = [RoundConfig(MCTSConfig(n_candidates=3, rollouts=4, max_depth=10, errors_threshold=2), **train),
              RoundConfig(MCTSConfig(n_candidates=3, rollouts=3, max_depth=10, errors_threshold=2, mode="ppm_init"),
                          use_bootstrap=True, **train)]  # a 6-step SLM cannot solve anything yet
    return pool, base, rounds


def test_rounds_checkpoint_and_resume(tmp_path):
    pool, base, rounds = _setup(tmp_path)
    base_state = {k: v.clone() for k, v in base.module.state_dict().items()}
    ev = SelfEvolution(pool, NoisyRuleSolver(pool, seed=0), rounds, tmp_path, base, SafeArithExecutor(False),
                       max_tokens=24)
    m = ev.run()
    assert [r["round"] for r in m] == [1, 2] and m[0]["coverage"] > 0.3 and m[0]["n_pairs"] > 0
    for k in (1, 2):
        for f in ("trees.json", "data.json", "metrics.json", "policy/model.pt", "ppm/value_head.bin"):
            assert (tmp_path / f"round_{k}" / f).exists()
    assert all(torch.equal(v, base.module.state_dict()[k]) for k, v in base_state.items())  # base untouched
    # "kill" during round 2 training: its models and metrics are gone, its trees remain
    for f in ("metrics.json",):
        (tmp_path / "round_2" / f).unlink()
    counting = NoisyRuleSolver(pool, seed=0)
    (tmp_path / "round_2" / "trees.json").rename(tmp_path / "r2_trees.json")
    again = SelfEvolution(pool, NoisyRuleSolver(pool, seed=0), rounds, tmp_path, base, SafeArithExecutor(False),
                          max_tokens=24)
    again.run()
    assert again.bootstrap.calls > 0  # round 2 search re-run with PPM-r1 loaded from disk
    (tmp_path / "round_2" / "metrics.json").unlink()
    m2 = SelfEvolution(pool, counting, rounds, tmp_path, base, SafeArithExecutor(False), max_tokens=24).run()
    assert counting.calls == 0  # neither round was searched again (trees were checkpointed)
    assert m2[0] == json.loads((tmp_path / "round_1" / "metrics.json").read_text())
    assert m2[1]["round"] == 2


def test_time_budget_and_bad_config(tmp_path):
    pool, base, rounds = _setup(tmp_path)
    ev = SelfEvolution(pool, NoisyRuleSolver(pool), rounds, tmp_path, base, SafeArithExecutor(False),
                       time_budget_s=1e-9)
    with pytest.raises(TimeBudgetExceeded, match="resumes"):
        ev.run()
    bad = [RoundConfig(MCTSConfig(mode="ppm_init"))]
    with pytest.raises(ValueError, match="no previous PPM"):
        SelfEvolution(pool, NoisyRuleSolver(pool), bad, tmp_path / "b", base, SafeArithExecutor(False)).run()
    with pytest.raises(ValueError):
        SelfEvolution([], NoisyRuleSolver(pool), rounds, tmp_path, base, SafeArithExecutor(False))
    assert [r.mcts.n_candidates for r in paper_rounds()] == [5, 8, 8, 8]


def test_accumulated_sft_keeps_problems_solved_in_earlier_rounds(tmp_path):
    from dataclasses import replace

    pool, base, rounds = _setup(tmp_path)
    # round 2 searches with a weak (1-rollout) bootstrap so that it misses problems round 1 solved
    weak = replace(rounds[1], mcts=MCTSConfig(n_candidates=1, rollouts=1, max_depth=10, errors_threshold=1),
                   accumulate_sft=True, pair_min_edit=1, pair_edit_unit="code_token")
    m = SelfEvolution(pool, NoisyRuleSolver(pool, seed=0), [rounds[0], weak], tmp_path, base,
                      SafeArithExecutor(False), max_tokens=24).run()
    d1 = json.loads((tmp_path / "round_1" / "data.json").read_text())["sft"]
    d2 = json.loads((tmp_path / "round_2" / "data.json").read_text())["sft"]
    solved1, solved2 = {r["query"] for r in d1}, {r["query"] for r in d2}
    assert solved1 - solved2  # the setting really loses problems
    assert m[1]["n_sft_this_round"] == len(d2)
    assert m[1]["n_sft_problems"] == len(solved1 | solved2)  # ... and the SFT set keeps them
    assert m[1]["n_sft"] == len(d2) + sum(r["query"] not in solved2 for r in d1)
