"""The paper preset (OGBench data, 1M updates, 3 x 512, IQE, GPU), its dry-run plan, the data-source switch and the
agents' device field."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest


def test_paper_preset_and_plans() -> None:
    from icml25.cgcivl.reproduce import Config

    paper = Config.paper()
    assert (paper.f_updates, paper.batch_size, paper.hidden, paper.layers) == (1_000_000, 1024, 512, 3)
    assert paper.data_source == "ogbench" and paper.device == "cuda" and paper.value_head == "iqe"
    for name in ("quick", "full", "paper"):
        plan = getattr(Config, name)().plan()
        assert plan.scale == name and plan.estimated_seconds > 0
    assert len(Config.paper().plan().needs.downloads) == 2 and Config.paper().plan().needs.gpus == 1
    quick = Config.quick()
    assert dataclasses.replace(quick, q_updates=3000).plan().estimated_seconds > quick.plan().estimated_seconds


@pytest.mark.parametrize(("field", "value"), [("data_source", "d4rl"), ("device", "tpu"), ("layers", 0),
                                              ("latent", 12), ("tau", 0.0), ("tau", 1.5), ("tau", "0.05")])
def test_config_rejects_bad_fields(field: str, value) -> None:
    from icml25.cgcivl.reproduce import Config

    kw = {field: value, **({"value_head": "iqe"} if field == "latent" else {})}
    with pytest.raises((ValueError, TypeError), match=field):
        Config(**kw)


def test_ogbench_source_without_the_file_says_where_to_put_it(tmp_path, monkeypatch) -> None:
    from icml25.cgcivl.data import stitch_dataset
    from icml25.core.data import DataNotFoundError, set_allow_download

    monkeypatch.setenv("ICML25_CACHE", str(tmp_path))
    set_allow_download(False)
    with pytest.raises(DataNotFoundError, match="pointmaze-large-stitch-v0.npz.*--allow-download"):
        stitch_dataset("large", 10, 0, source="ogbench")


def test_ogbench_source_reads_a_placed_file(tmp_path, monkeypatch) -> None:
    """A file in OGBench's layout in the cache is used as the data set (no generation)."""
    from icml25.cgcivl.data import stitch_dataset

    monkeypatch.setenv("ICML25_CACHE", str(tmp_path))
    (tmp_path / "cgcivl").mkdir()
    obs = np.random.default_rng(0).uniform(0, 10, size=(20, 2)).astype(np.float32)
    np.savez(tmp_path / "cgcivl" / "pointmaze-medium-stitch-v0.npz", observations=obs,
             actions=np.zeros((20, 2), np.float32), terminals=np.r_[np.zeros(9), 1, np.zeros(9), 1])
    data = stitch_dataset("medium", 10, 0, source="ogbench")
    assert data["observations"].shape == (20, 2)


def test_layers_and_device_reach_the_agents() -> None:
    from icml25.cgcivl.experiment import agent_configs
    from icml25.cgcivl.reproduce import Config

    confs = agent_configs(Config(layers=3, hidden=16), "flat", stub=False)
    assert confs["CGCIVL"].hidden == (16, 16, 16) and confs["GCIVL"].device == "cpu"


def test_tau_reaches_both_agents_and_the_paper_preset_keeps_ogbench_s() -> None:
    """One Polyak rate for GCIVL and CGCIVL (a fair comparison); the paper preset keeps OGBench's 0.005."""
    from icml25.cgcivl.experiment import agent_configs
    from icml25.cgcivl.reproduce import Config

    for stub in (False, True):
        confs = agent_configs(Config(tau=0.123), "flat", stub=stub)
        assert confs["GCIVL"].tau == confs["CGCIVL"].tau == 0.123
    assert Config.paper().tau == 0.005
    assert Config.quick().tau == Config.full().tau


def test_agent_on_an_absent_gpu_says_so() -> None:
    import torch

    from icml25.cgcivl import GCIVL, AgentConfig

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="CUDA"):
        GCIVL(2, 2, AgentConfig(device="cuda"))
