"""The reproduction's configuration and its quick claims (the report itself runs in tests/core)."""

from __future__ import annotations

import math

import pytest

from icml25.sorbet.reproduce import Config


def test_config_presets_and_validation():
    assert Config.quick().num_layers == 1
    assert Config.full().num_layers == 3 and Config.full().baselines and Config.full().bspn_projected_shift
    with pytest.raises(ValueError, match="kd2_lr"):
        Config(kd2_lr=math.nan)
    with pytest.raises(ValueError, match="task"):
        Config(task="mnli")
    with pytest.raises(ValueError, match="pooling"):
        Config(pooling="max")
    with pytest.raises(ValueError, match="attn_prob_step"):
        Config(attn_prob_step="big")
    # the per-task GLUE table (issue 47): full runs the other shipped tasks, quick none
    assert Config.quick().glue_tasks == ()
    assert set(Config.full().glue_tasks) == {"mrpc", "rte", "cola", "stsb"}
    with pytest.raises(ValueError, match="glue_tasks"):
        Config(glue_tasks=("mnli",))
    with pytest.raises(TypeError, match="glue_tasks"):
        Config(glue_tasks=["rte"])
    with pytest.raises(ValueError, match="glue_n_train"):
        Config(glue_n_train=10)


def test_constant_prediction_baseline_per_task():
    from icml25.sorbet.experiment import _constant_metric

    assert _constant_metric("sst2", [1, 1, 0], [1, 0, 1, 0]) == 0.5
    assert abs(_constant_metric("mrpc", [1, 1, 0], [1, 0, 1, 1]) - 2 * 0.75 / 1.75) < 1e-12  # F1 of "all positive"
    assert _constant_metric("cola", [0, 1, 1], [1, 0, 1]) == 0.0  # MCC of a constant prediction
    assert math.isnan(_constant_metric("stsb", [0.5, 4.0], [1.0, 2.0]))  # regression: no constant baseline


def test_claim_set_depends_on_the_task():
    from icml25.core import Report
    from icml25.sorbet.experiment import _claims

    def ids(task: str, baselines: bool) -> list[str]:
        rep = Report(slug="sorbet", title="t")
        _claims(rep, Config(task=task, baselines=baselines), 0.8, [0.78, 0.76], {"bit": 0.77, "nokd": 0.75}, 1.0,
                0.0, 0.1, 0.0, 872, task == "sst2")
        return [c.id for c in rep.claims]

    assert ids("sst2", True) == ["Q1", "Q2", "Q2b", "Q3", "Q4", "Q5", "Q6", "C1", "C2", "C3"]
    assert ids("mrpc", True) == ["Q3", "Q4", "Q5", "Q6"]  # no thresholds in the spec for the smoke tasks
    rep = Report(slug="sorbet", title="t")
    _claims(rep, Config(baselines=True), 0.8, [0.78, 0.70], {"bit": 0.77, "nokd": 0.75}, 1.0, 0.0, 0.1, 0.0, 872, True)
    c1 = next(c for c in rep.claims if c.id == "C1")
    assert not c1.held and abs(c1.measured - (0.74 - 0.8)) < 1e-12   # C1 uses the seed mean, and can fail


@pytest.mark.slow
def test_pair_and_regression_tasks_run_end_to_end(minilm, tmp_path):
    """RTE (sentence pairs) and STS-B (regression) through the whole pipeline on a few examples."""
    from icml25.core import Scale
    from icml25.sorbet.reproduce import reproduce

    for task in ("rte", "stsb"):
        cfg = Config(task=task, n_train=64, batch_size=16, max_length=32, dev_batch=128)
        rep = reproduce(Scale.QUICK, 0, tmp_path, cfg)
        assert [c.id for c in rep.claims] == ["Q3", "Q4", "Q5", "Q6", "E1"]  # E1: full scale, the energy ratio
        assert all(c.held for c in rep.claims_at(Scale.QUICK)), [(c.id, c.measured) for c in rep.claims]


@pytest.mark.slow
def test_glue_table_runs_the_other_tasks(minilm, tmp_path):
    """The per-task GLUE table: the main task's row plus one row per other task, the paper columns 'not read'."""
    from icml25.core import Scale
    from icml25.sorbet.reproduce import reproduce

    cfg = Config(n_train=64, batch_size=16, max_length=32, dev_batch=128, glue_tasks=("sst2", "rte"),
                 glue_n_train=64)
    rep = reproduce(Scale.QUICK, 0, tmp_path, cfg)
    name = next(k for k in rep.tables if k.startswith("GLUE tasks"))
    rows = rep.tables[name]
    assert [r["task"] for r in rows] == ["sst2", "rte"]  # the main task is not run twice
    assert rows[1]["train examples"] == 64 and rows[1]["dev examples"] == 277
    assert all(r["paper: Sorbet"] == "not read" and r["paper: BERT"] == "not read" for r in rows)
    assert all(0.0 <= r["Sorbet W1A4 (ours)"] <= 1.0 and r["CPU (s)"] > 0 for r in rows)
    assert [c.id for c in rep.claims] == ["Q1", "Q2", "Q2b", "Q3", "Q4", "Q5", "Q6", "E1"]  # no new claims
