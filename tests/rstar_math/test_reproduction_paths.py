"""The full-mode code path (3 self-evolution rounds, PPM-augmented search, evaluation) at toy sizes."""

import math
from pathlib import Path

import pytest

from icml25.core import Scale
from icml25.rstar_math.reproduce import Config, reproduce


@pytest.mark.slow
def test_three_round_path_runs_at_toy_size(tmp_path: Path):
    cfg = Config(n_problems=16, levels=(1, 2), rollouts=4, n_pretrain_problems=60, pretrain_steps=20, sft_steps=10,
                 ppm_steps=8, batch_size=8, ppm_batch_pairs=4, n_embd=32, n_layer=1, n_head=2, block_size=200,
                 n_heldout=4, rounds=3, later_candidates=3, later_rollouts=2, extra_rollouts=2, n_test=6,
                 test_levels=(1, 5), eval_ns=(2, 4))
    rep = reproduce(Scale.QUICK, 0, tmp_path, cfg)
    ids = [c.id for c in rep.claims]
    assert ids == ["A1", "A2", "A3", "A4", "A5", "B1", "B2", "B3", "B4", "C1", "C2", "C3", "C4", "C5", "C6"]
    assert all(not (isinstance(c.measured, float) and math.isnan(c.measured)) for c in rep.claims)
    for k in (1, 2, 3):
        assert (tmp_path / "self_evolution" / f"round_{k}" / "metrics.json").is_file()
