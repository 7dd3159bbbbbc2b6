"""The paper preset and the dry-run plan (issues 44/45): presets validate, the estimate follows the config's fields."""

from __future__ import annotations

import dataclasses

import pytest

from icml25.manifold_diffusion.reproduce import Config


def test_paper_preset_uses_the_official_run_counts_and_mnist() -> None:
    paper = Config.paper()
    dataclasses.replace(paper)
    assert (paper.pca_runs, paper.eff_runs, paper.step_runs, paper.gmm_runs) == (100, 100, 100, 10)
    assert paper.real_data == "mnist" and paper.pca_iters == Config.full().pca_iters
    with pytest.raises(ValueError, match="real_data"):
        dataclasses.replace(paper, real_data="cifar")


def test_plan_scale_and_estimate_follow_the_fields() -> None:
    plans = {name: getattr(Config, name)().plan() for name in ("quick", "full", "paper")}
    assert {name: p.scale for name, p in plans.items()} == {"quick": "quick", "full": "full", "paper": "paper"}
    assert plans["quick"].estimated_seconds < plans["full"].estimated_seconds < plans["paper"].estimated_seconds
    assert plans["paper"].needs.downloads and not plans["full"].needs.downloads
    more = dataclasses.replace(Config.full(), pca_runs=50).plan()
    assert more.estimated_seconds > plans["full"].estimated_seconds
