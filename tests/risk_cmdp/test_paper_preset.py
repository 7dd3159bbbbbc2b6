"""The paper preset and the dry-run plan (issues 44/45): presets validate, the estimate follows the config's fields."""

from __future__ import annotations

import dataclasses

from icml25.risk_cmdp.reproduce import Config


def test_paper_preset_validates_and_is_at_least_full() -> None:
    paper, full = Config.paper(), Config.full()
    dataclasses.replace(paper)
    assert paper.K_r >= full.K_r and paper.K_garnet >= full.K_garnet and paper.garnet_seeds == full.garnet_seeds


def test_plan_scale_and_estimate_follow_the_fields() -> None:
    plans = {name: getattr(Config, name)().plan() for name in ("quick", "full", "paper")}
    assert {name: p.scale for name, p in plans.items()} == {"quick": "quick", "full": "full", "paper": "paper"}
    assert plans["quick"].estimated_seconds < plans["full"].estimated_seconds < plans["paper"].estimated_seconds
    more = dataclasses.replace(Config.full(), K_r=32000).plan()
    assert more.estimated_seconds > plans["full"].estimated_seconds
