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
