"""The paper preset and the dry-run plan (issues 44/45): presets validate, the estimate follows the config's fields."""

from __future__ import annotations

import dataclasses

from icml25.sis_vaccination.reproduce import Config


def test_paper_preset_validates_and_uses_the_papers_map_runs() -> None:
    paper = Config.paper()
    dataclasses.replace(paper)
    assert paper.map_runs == 100 and paper.curve_T == Config.full().curve_T


def test_plan_scale_and_estimate_follow_the_fields() -> None:
    plans = {name: getattr(Config, name)().plan() for name in ("quick", "full", "paper")}
    assert {name: p.scale for name, p in plans.items()} == {"quick": "quick", "full": "full", "paper": "paper"}
    assert plans["quick"].estimated_seconds < plans["full"].estimated_seconds < plans["paper"].estimated_seconds
    more = dataclasses.replace(Config.full(), vac_reps=300).plan()
    assert more.estimated_seconds > plans["full"].estimated_seconds
