"""SelfEvolution with ``search_workers > 1``: the round searches run in process shards (issue 22)."""

import dataclasses
import json
import shutil

import pytest
import torch

from icml25.rstar_math.domain.bootstrap_solver import NoisyRuleSolver
from icml25.rstar_math.domain.steparith import StepArithGenerator
from icml25.rstar_math.execution.code_executors import SafeArithExecutor
from icml25.rstar_math.models.tiny_policy import make_tiny_lm
from icml25.rstar_math.pipeline.self_evolution import RoundConfig, SelfEvolution
from icml25.rstar_math.reproduce import Config
from icml25.rstar_math.search.mcts import MCTSConfig

TRAIN = dict(sft_steps=4, ppm_steps=3, batch_size=8, ppm_batch_pairs=4, lr=1e-3)


def _pool():
    return StepArithGenerator(levels=(1, 2, 3), seed=0).sample(10)


def _base():
    torch.set_num_threads(1)
    return make_tiny_lm(n_layer=1, n_head=2, n_embd=32, block_size=160, seed=0)


def _trees(workdir, k):
    return json.loads((workdir / f"round_{k}" / "trees.json").read_text())


def test_bootstrap_round_with_two_workers_equals_in_process(tmp_path):
    pool, base = _pool(), _base()
    # 1 main rollout leaves problems unsolved, so the extra-rollouts path runs in the shards too
    rc = RoundConfig(MCTSConfig(n_candidates=3, rollouts=1, max_depth=10, errors_threshold=2),
                     extra_rollouts_unsolved=3, **TRAIN)
    out = {}
    for w in (1, 2):
        ev = SelfEvolution(pool, NoisyRuleSolver(pool, seed=0), [rc], tmp_path / f"w{w}", base,
                           SafeArithExecutor(False), max_tokens=24, search_workers=w)
        out[w] = (ev.run()[0], _trees(tmp_path / f"w{w}", 1))
    (m1, t1), (m2, t2) = out[1], out[2]
    assert {t["rollouts_done"] for t in t1} == {1, 4}  # some trees got the extra rollouts, some did not
    assert t2 == t1 and m2["coverage"] == m1["coverage"] and m2["n_pairs"] == m1["n_pairs"]
    other = SelfEvolution(pool, NoisyRuleSolver(pool, seed=1), [rc], tmp_path / "s1", base,
                          SafeArithExecutor(False), max_tokens=24, search_workers=2)
    other.run()
    assert _trees(tmp_path / "s1", 1) != t1  # the comparison can fail


def test_slm_round_with_two_workers_is_deterministic(tmp_path):
    pool, base = _pool(), _base()
    rounds = [RoundConfig(MCTSConfig(n_candidates=3, rollouts=3, max_depth=10, errors_threshold=2), **TRAIN),
              # round 2: generator SLM-r1 (TinyStepPolicy) and scorer PPM-r1, both pickled into the workers
              RoundConfig(MCTSConfig(n_candidates=2, rollouts=2, max_depth=6, errors_threshold=1, mode="ppm_init"),
                          extra_rollouts_unsolved=1, **TRAIN)]
    first = tmp_path / "a"
    SelfEvolution(pool, NoisyRuleSolver(pool, seed=0), rounds, first, base, SafeArithExecutor(False),
                  max_tokens=12, search_workers=2).run()
    second = tmp_path / "b"  # same round 1 (copied), round 2 searched again with the same seed
    second.mkdir()
    shutil.copytree(first / "round_1", second / "round_1")
    SelfEvolution(pool, NoisyRuleSolver(pool, seed=0), rounds, second, base, SafeArithExecutor(False),
                  max_tokens=12, search_workers=2).run()
    t_a, t_b = _trees(first, 2), _trees(second, 2)
    assert len(t_a) == len(pool) and all(len(t["nodes"]) > 1 for t in t_a)  # the SLM really expanded them
    assert all(t["rollouts_done"] >= 2 for t in t_a)
    assert t_a == t_b


def test_bad_search_workers_and_backend(tmp_path):
    pool, base = _pool(), _base()
    rc = [RoundConfig(MCTSConfig(n_candidates=2, rollouts=1), **TRAIN)]

    def make(**kw):
        return SelfEvolution(pool, NoisyRuleSolver(pool), rc, tmp_path, base, SafeArithExecutor(False), **kw)

    with pytest.raises(ValueError, match="search_workers"):
        make(search_workers=0)
    with pytest.raises(TypeError, match="search_workers"):
        make(search_workers=1.5)
    with pytest.raises(ValueError, match="search_backend"):
        make(search_workers=2, search_backend="thread")
    with pytest.raises(ValueError, match="search_workers"):
        Config(search_workers=0)
    # the full run's LoRA policy searches in-process (the pretrained model is not copied into worker processes)
    assert Config.quick().search_workers == 1 and Config.full().search_workers == 1
    with pytest.raises(ValueError, match="search_workers"):
        dataclasses.replace(Config.full(), search_workers=2)
    solver = NoisyRuleSolver(pool)
    solver.hook = lambda: None  # an unpicklable generator: a clear error before any worker starts
    with pytest.raises(TypeError, match="picklable"):
        SelfEvolution(pool, solver, rc, tmp_path / "p", base, SafeArithExecutor(False), search_workers=2).run()
