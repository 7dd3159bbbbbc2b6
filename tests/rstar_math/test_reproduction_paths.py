"""The full-mode code path (3 self-evolution rounds, PPM-augmented search, evaluation) at toy sizes."""

import math
from pathlib import Path

import pytest

from icml25.core import Scale
from icml25.rstar_math.reproduce import Config, reproduce


def _toy(**kw) -> Config:
    base = dict(n_problems=16, levels=(1, 2), rollouts=4, n_pretrain_problems=60, pretrain_steps=20, sft_steps=10,
                ppm_steps=8, batch_size=8, ppm_batch_pairs=4, n_embd=32, n_layer=1, n_head=2, block_size=200,
                n_heldout=4, rounds=3, later_candidates=3, later_rollouts=2, extra_rollouts=2, n_test=6,
                test_levels=(1, 5), eval_ns=(2, 4), eval_seeds=2, ablation_seeds=1, rejection_samples=2,
                ablation_steps=4, n_boot=200)
    return Config(**{**base, **kw})


def test_three_round_path_runs_at_toy_size(tmp_path: Path):
    rep = reproduce(Scale.QUICK, 0, tmp_path, _toy())
    ids = [c.id for c in rep.claims]
    assert ids == ["A1", "A2", "A3", "A4", "A5", "B1", "B2", "B3", "B4", "C1", "C1b", "K1", "C1c", "C2", "C2b",
                   "C3", "C3b", "K2", "C4", "C4b", "C4c", "C4d", "C5", "C5b", "C6", "K3", "D1", "D2", "D3", "D4",
                   "K4", "E1", "math_qwen7b", "math_vs_o1", "aime"]
    by_id = {c.id: c for c in rep.claims}
    # the abstract's claims need the paper's 7B models (paper scale): not measured here, and said so
    assert all(by_id[c].scale == Scale.PAPER and "not measured here" in by_id[c].note
               for c in ("math_qwen7b", "math_vs_o1", "aime"))
    nan = {c.id for c in rep.claims if isinstance(c.measured, float) and math.isnan(c.measured)
           and c.scale != Scale.PAPER}
    # C1b: the pool has no L5-L6 problems (the test set has, so the other hard-split claims are measured);
    # a toy policy may leave the ablations without training data, which must then be said, not hidden
    assert "C1b" in nan and nan <= {"C1b", "D1", "D2", "D3", "D4", "E1"}
    for cid in nan - {"C1b"}:
        assert not by_id[cid].held and ("no " in by_id[cid].note)
    c4 = by_id["C4"]
    assert len(c4.per_seed) == 2 and "95% CI" in c4.note
    assert {r["reward_model"] for r in rep.tables["reward_models"]} == {"PPM", "PQM", "ORM"}
    for k in (1, 2, 3):
        assert (tmp_path / "self_evolution" / f"round_{k}" / "metrics.json").is_file()


def test_time_budget_stops_with_a_clear_error_and_keeps_finished_rounds(tmp_path: Path, capsys):
    from icml25.run.cli import _guarded

    with pytest.raises(TimeoutError, match="time budget ran out during round 1"):
        reproduce(Scale.QUICK, 0, tmp_path, _toy(time_budget_s=1e-6))
    assert (tmp_path / "self_evolution" / "round_1" / "metrics.json").is_file()
    assert not (tmp_path / "self_evolution" / "round_2").exists()
    assert _guarded(lambda: reproduce(Scale.QUICK, 0, tmp_path, _toy(time_budget_s=1e-6)), False) == 2
    err = capsys.readouterr().err
    assert "time budget" in err and "Traceback" not in err


def test_reproduce_resumes_finished_rounds_and_fresh_starts_over(tmp_path: Path):
    cfg = _toy(rounds=2, eval_seeds=1, n_test=4)
    first = reproduce(Scale.QUICK, 0, tmp_path, cfg)
    work = tmp_path / "self_evolution"
    files = [work / "base" / "model.pt", work / "round_1" / "neural.json", work / "round_2" / "trees.json",
             work / "round_2" / "metrics.json"]
    stamps = [f.stat().st_mtime_ns for f in files]
    again = reproduce(Scale.QUICK, 0, tmp_path, cfg)  # resumes: nothing is re-trained or re-searched
    assert [f.stat().st_mtime_ns for f in files] == stamps
    assert [(c.id, c.measured) for c in again.claims if c.id.startswith(("B", "C2"))] == \
        [(c.id, c.measured) for c in first.claims if c.id.startswith(("B", "C2"))]
    # evaluation-only settings may change on a resumed run; skipped ablations are "not measured", never "held"
    lean = reproduce(Scale.QUICK, 0, tmp_path, _toy(rounds=2, eval_seeds=1, n_test=4, vote=(1, 1, 1),
                                                    ablations=False))
    assert [f.stat().st_mtime_ns for f in files] == stamps
    for c in lean.claims:
        if c.id in ("D1", "D2", "D3", "D4", "E1"):
            assert not c.held and "ablations skipped" in c.note, c.id
    with pytest.raises(ValueError, match="sft_steps.*fresh=true"):  # other settings never mix with these rounds
        reproduce(Scale.QUICK, 0, tmp_path, _toy(rounds=2, eval_seeds=1, n_test=4, sft_steps=11))
    reproduce(Scale.QUICK, 0, tmp_path, _toy(rounds=2, eval_seeds=1, n_test=4, sft_steps=11, fresh=True))
    assert all(f.stat().st_mtime_ns != s for f, s in zip(files, stamps))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")
