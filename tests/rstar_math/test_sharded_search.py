"""Sharded search gives the same trees as the single-process search for the same seed."""

import functools

import pytest

from icml25.rstar_math.domain.bootstrap_solver import NoisyRuleSolver
from icml25.rstar_math.domain.steparith import StepArithGenerator
from icml25.rstar_math.execution.code_executors import SafeArithExecutor
from icml25.rstar_math.search.mcts import MCTS, MCTSConfig
from icml25.rstar_math.search.sharded_search import sharded_search

POOL = StepArithGenerator(levels=(1, 2, 3), seed=0).sample(8)


def _make_search(seed=0):
    return MCTS(NoisyRuleSolver(POOL, seed=seed), SafeArithExecutor(False),
                config=MCTSConfig(n_candidates=3, rollouts=3, max_depth=10, errors_threshold=2))


def _sig(trees):
    return [[(n.text, n.N, n.W) for n in t.nodes()] for t in trees]


def test_process_shards_equal_single_process():
    ref = _make_search().search(POOL)
    assert _sig(sharded_search(POOL, _make_search, n_shards=3, backend="serial")) == _sig(ref)
    assert _sig(sharded_search(POOL, _make_search, n_shards=2, backend="process")) == _sig(ref)
    other = sharded_search(POOL, functools.partial(_make_search, seed=1), n_shards=2, backend="serial")
    assert _sig(other) != _sig(ref)  # the comparison can fail
    with pytest.raises(ValueError):
        sharded_search(POOL, _make_search, n_shards=0)


@pytest.mark.slow
def test_ray_shards_equal_single_process():
    ray = pytest.importorskip("ray")
    ref = _make_search().search(POOL)
    try:
        got = sharded_search(POOL, _make_search, n_shards=2, backend="ray")
    finally:
        ray.shutdown()
    assert _sig(got) == _sig(ref)
