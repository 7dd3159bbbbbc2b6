"""PQM and ORM heads (spec §6 ablations): targets from trees, losses fall, scores in [-1, 1]."""

import numpy as np
import pytest
import torch

from icml25.rstar_math.domain.bootstrap_solver import NoisyRuleSolver
from icml25.rstar_math.domain.steparith import StepArithGenerator
from icml25.rstar_math.execution.code_executors import SafeArithExecutor
from icml25.rstar_math.models.reward_model_ablations import (
    make_orm,
    make_pqm,
    orm_targets,
    pqm_targets,
    train_value_head,
)
from icml25.rstar_math.models.tiny_policy import make_tiny_lm
from icml25.rstar_math.search.mcts import MCTS, MCTSConfig


def test_pqm_and_orm_learn_from_trees():
    torch.set_num_threads(1)
    pool = StepArithGenerator(levels=(1, 2), seed=0).sample(10)
    trees = MCTS(NoisyRuleSolver(pool, seed=0), SafeArithExecutor(False),
                 config=MCTSConfig(n_candidates=3, rollouts=4, max_depth=10, errors_threshold=2)).search(pool)
    pq = pqm_targets(trees)
    orm = orm_targets(trees)
    assert pq and all(-1 <= q <= 1 for _, _, q in pq)
    assert {y for _, _, y in orm} == {0.0, 1.0}
    lm = make_tiny_lm(n_layer=1, n_head=2, n_embd=32, block_size=160, seed=0)
    for kind, model, data in (("pqm", make_pqm(lm), pq), ("orm", make_orm(lm), orm)):
        losses = train_value_head(model, data, kind, steps=40, batch_size=8, lr=3e-3)
        assert np.mean(losses[-5:]) < np.mean(losses[:5])
        s = model.score([d[0] for d in data[:5]], [d[1] for d in data[:5]])
        assert s.shape == (5,) and np.all(np.abs(s) <= 1)
    with pytest.raises(ValueError):
        train_value_head(make_pqm(lm), pq, "other")
