"""Issue 18/19 contract of rstar_math: imports without torch, Config checks, run_eval argument checks, and the
competence preconditions that turn comparisons between methods at ~0 % into "not measured"."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.core import Report
from icml25.rstar_math.reproduce import Config
from icml25.testing import run_without


def test_search_parts_import_without_torch() -> None:
    code = """
        import icml25.rstar_math as r
        gen = r.StepArithGenerator(levels=(1, 2), seed=0)
        probs = gen.sample(4)
        trees = r.MCTS(r.NoisyRuleSolver(probs, seed=0), r.SafeArithExecutor(),
                       config=r.MCTSConfig(n_candidates=2, rollouts=4, seed=0)).search(probs)
        assert len(r.extract_pairs(trees, min_margin=0.0, min_edit=0)) >= 0
        assert 'torch' not in sys.modules
        try:
            r.PPMModel
        except Exception as exc:
            assert 'pip install' in str(exc), exc
            print('HINT-OK')
    """
    res = run_without(("torch",), code)
    assert res.returncode == 0, res.stderr
    assert "HINT-OK" in res.stdout


@pytest.mark.parametrize("field,value,exc", [
    ("n_problems", 0, ValueError), ("rollouts", 2.5, TypeError), ("lr", float("nan"), ValueError),
    ("lr", -1e-3, ValueError), ("ppm_loss", "mean", ValueError), ("levels", (), ValueError),
    ("levels", (0, 7), ValueError), ("eval_ns", (4, "8"), TypeError), ("n_head", 3, ValueError),
    ("ablation_seeds", 5, ValueError), ("time_budget_s", -1.0, ValueError), ("extra_rollouts", -1, ValueError),
])
def test_config_rejects_bad_fields(field: str, value, exc) -> None:
    with pytest.raises(exc, match=field):
        Config(**{field: value})


def test_config_presets_are_valid() -> None:
    Config.quick()
    Config.full()


@pytest.mark.parametrize("kwargs,name", [({"n": 0}, "n"), ({"n": 2.5}, "n"), ({"limit": 0}, "limit"),
                                         ({"max_depth": float("nan")}, "max_depth"), ({"timeout_s": 0.0}, "timeout_s"),
                                         ({"data": ""}, "data"), ({"policy": 3}, "policy")])
def test_run_eval_rejects_bad_arguments(kwargs: dict, name: str) -> None:
    from icml25.rstar_math import run_eval

    args = {"data": "gsm8k", "policy": "hf:/nonexistent", "method": "greedy", **kwargs}
    with pytest.raises((ValueError, TypeError), match=name):
        run_eval(**args)


# ------------------------------------------------------------------ preconditions of the full-scale comparisons
def _evals(acc: float, n_test: int, ns=(2, 4)) -> dict:
    """An evaluation dict in which every method solves the first ``acc`` share of the test problems."""
    correct = [i < round(acc * n_test) for i in range(n_test)]
    entry = {"acc": float(np.mean(correct)), "steps": 3.0, "correct": correct}
    keys = ["greedy"] + [f"{m}@{k}" for m in ("maj", "bon", "mcts") for k in ns]
    return {k: dict(entry) for k in keys}


def _report(acc: float) -> Report:
    from icml25.rstar_math.experiment.stages import add_full_claims

    n_test = 20
    ev = _evals(acc, n_test)
    evo = {"n_mid": 4, "last": [ev], "per_round": {1: ev}, "coverage": [50.0], "test_levels": [1, 2] * 10,
           "heldout_pair_acc": 0.5, "n_heldout_pairs": 10, "heldout_per_round": {1: 0.5},
           "vote": {"acc": acc, "steps": float("nan"), "correct": ev["greedy"]["correct"]},
           "reward_models": {"PQM": [ev], "ORM": [ev], "n_pqm_targets": 5, "n_orm_targets": 5, "losses": {}},
           "data": {"greedy_correct": ev["greedy"]["correct"], "n_verified": 4, "n_rejection": 4,
                    "sft_losses": [1.0]},
           "metrics": [{"round": 1, "coverage": 0.5, "n_sft": 4, "n_pairs": 10, "n_step_pairs": 6,
                        "ppm_loss_last": 0.1, "sft_loss_last": 0.2}]}
    eng = {"level_rows": [{"level": 1, "problems": 10, "single_sample_acc_%": 40.0, "mcts_coverage_%": 80.0},
                          {"level": "all", "problems": 10, "single_sample_acc_%": 40.0, "mcts_coverage_%": 80.0}]}
    cfg = Config(eval_ns=(2, 4), n_boot=200)
    rep = Report(slug="rstar_math", title="t")
    add_full_claims(rep, cfg, eng, evo)
    return rep


def test_comparisons_at_zero_accuracy_are_not_measured() -> None:
    by_id = {c.id: c for c in _report(0.0).claims}
    for cid in ("K1", "K2", "K3", "K4"):
        assert by_id[cid].status == "failed"
    for cid in ("C1c", "C4c", "C4d", "D3", "D4", "E1"):  # D1/D2 use the hard split (none here): NaN
        assert by_id[cid].status == "not measured", cid
        assert by_id[cid].blocked_by
    assert by_id["C4"].status == "failed"  # a "beats by >= 10 points" claim fails on its own at 0 %


def test_comparisons_above_the_floor_are_measured() -> None:
    by_id = {c.id: c for c in _report(0.5).claims}
    for cid in ("K1", "K2", "K3", "K4"):
        assert by_id[cid].status == "held", cid
    for cid in ("C1c", "C4c", "C4d", "D3", "D4", "E1"):  # equal methods: non-inferiority holds
        assert by_id[cid].status == "held", cid
    paper = [c for c in _report(0.5).claims if c.paper_value is not None]
    assert paper and all(c.source for c in paper)
