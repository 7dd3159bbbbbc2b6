"""Verdicts from headline claims, own-scale vs preview counts, paper-scale claims, and dry-run plans (issues 44, 45)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from icml25.core import Report, Scale
from icml25.core.plan import Needs, Plan, UnitCost, format_seconds, plans_table
from icml25.core.report import read_report, scale_counts_text, write_index, write_report
from icml25.core.verdict import Verdict, best_verdict, record_verdict, recorded_verdict, verdict_of


def _report(scale: str = "quick", **measured: float) -> Report:
    """Headline claims H1 (quick), H2 (full), H3 (paper) and a non-headline check; values from ``measured``."""
    rep = Report(slug="demo", title="Demo", scale=Scale.parse(scale), seed=0)
    rep.add_claim(id="K", statement="competence", paper_value=None, measured=measured.get("K", 1.0), comparison=">=",
                  threshold=0.5, kind="check")
    rep.add_claim(id="H1", statement="h1", paper_value=2.0, source="abstract", measured=measured.get("H1", 3.0),
                  comparison=">=", threshold=2.0, kind="paper", headline=True, requires=["K"])
    rep.add_claim(id="H2", statement="h2", paper_value=5.0, source="abstract", measured=measured.get("H2", 6.0),
                  comparison=">=", threshold=5.0, kind="paper", headline=True, scale=Scale.FULL)
    if Scale.parse(scale) is Scale.PAPER:
        rep.add_claim(id="H3", statement="h3", paper_value=9.0, source="abstract", measured=measured.get("H3", 9.5),
                      comparison=">=", threshold=9.0, kind="paper", headline=True, scale=Scale.PAPER)
    else:
        rep.add_unmeasured_claim(id="H3", statement="h3", paper_value=9.0, source="abstract", comparison=">=",
                                 threshold=9.0, kind="paper", headline=True, scale=Scale.PAPER,
                                 needs="--scale paper: a GPU")
    return rep


def test_scales_are_ordered_and_parse() -> None:
    assert Scale.QUICK.rank < Scale.FULL.rank < Scale.PAPER.rank
    assert Scale.parse("PAPER") is Scale.PAPER
    with pytest.raises(ValueError, match="'quick', 'full' or 'paper'"):
        Scale.parse("huge")


def test_claims_at_own_scale_preview_and_not_measured_here() -> None:
    rep = _report("quick")
    assert [c.id for c in rep.claims_at("quick")] == ["K", "H1"]
    assert [c.id for c in rep.claims_at("full")] == ["K", "H1", "H2"]
    assert [c.id for c in rep.claims_at("paper")] == ["K", "H1", "H2", "H3"]
    assert [c.id for c in rep.preview_claims()] == ["H2"]
    assert [c.id for c in rep.not_measured_here()] == ["H3"]
    h3 = rep.claims[-1]
    assert math.isnan(h3.measured) and h3.status == "not measured" and "not measured here" in h3.note
    text = scale_counts_text(rep)
    assert text.startswith("quick: ") and "preview" in text and "1 not measured here" in text


def test_unmeasured_claim_refuses_a_scale_the_run_measures() -> None:
    rep = Report(slug="demo", title="Demo", scale=Scale.FULL)
    with pytest.raises(ValueError, match="add it with add_claim"):
        rep.add_unmeasured_claim(id="X", statement="x", paper_value=None, comparison=">=", threshold=1, kind="paper",
                                 scale=Scale.FULL, needs="nothing")


@pytest.mark.parametrize(("scale", "measured", "expected"), [
    ("paper", {}, "reproduced"),
    ("quick", {}, "partial"),  # H2 is a preview, H3 not measured here: only H1 counts as held
    ("paper", {"H2": 1.0}, "partial"),
    ("paper", {"H1": 0.0, "H2": 0.0, "H3": 0.0}, "not reproduced"),
    ("quick", {"H1": 0.0}, "not reproduced"),
    ("quick", {"K": 0.0}, "not measurable here"),  # H1's precondition failed; H2 preview; H3 not measured here
])
def test_verdict_rules(scale: str, measured: dict[str, float], expected: str) -> None:
    v = verdict_of(_report(scale, **measured), date="2026-12-03")
    assert v.verdict == expected, v.text()
    assert v.scale == scale and v.seeds == [0] and v.date == "2026-12-03"
    assert [h["id"] for h in v.headline] == ["H1", "H2", "H3"]


def test_verdict_without_headline_claims() -> None:
    rep = Report(slug="demo", title="Demo")
    rep.add_claim(id="A", statement="a", paper_value=None, measured=1.0, comparison=">=", threshold=0, kind="check")
    assert verdict_of(rep).verdict == "no headline claims"


def test_headline_and_threshold_reason_survive_json(tmp_path: Path) -> None:
    rep = _report("quick")
    rep.claims[1].threshold_reason = "the paper's value minus two standard errors"
    write_report(rep, tmp_path / "demo")
    back = read_report(tmp_path / "demo" / "report.json")
    assert [c.headline for c in back.claims] == [c.headline for c in rep.claims]
    assert back.claims[1].threshold_reason == rep.claims[1].threshold_reason
    md = (tmp_path / "demo" / "report.md").read_text()
    assert "**H1**" in md and "not measured here" in md and "Verdict:" in md and "two standard errors" in md
    index = write_index(tmp_path).read_text()
    assert "## Verdicts" in index and "**partial**" in index and "Preview" in index


def test_recorded_verdict_keeps_the_larger_scale(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    full = Verdict(slug="demo", verdict="partial", scale="full", seeds=[100], date="2026-12-01")
    quick = Verdict(slug="demo", verdict="reproduced", scale="quick", seeds=[0], date="2026-12-03")
    assert record_verdict(full, tmp_path)[1]
    assert not record_verdict(quick, tmp_path)[1], "a quick run must not replace a full-scale verdict"
    assert recorded_verdict("demo", tmp_path) == full
    newer = Verdict(slug="demo", verdict="reproduced", scale="full", seeds=[100], date="2026-12-03")
    assert record_verdict(newer, tmp_path)[1] and recorded_verdict("demo", tmp_path) == newer
    assert best_verdict(None, quick) is quick and best_verdict(full, None) is full
    (tmp_path / "demo" / "verdict.json").write_text(json.dumps({"slug": "demo", "verdict": "great"}))
    assert recorded_verdict("demo", tmp_path) is None


def _plan(**kw: object) -> Plan:
    args = dict(slug="demo", scale="paper", stages=["train", "evaluate"],
                costs=[UnitCost("training", "update", 1000, 0.02, "2-core CPU, full run"),
                       UnitCost("evaluation", "episode", 50, 1.5, "2-core CPU, full run")],
                needs=Needs(gpus=1, gpu_memory_gb=24, weights=("hf:/path/to/model",)))
    args.update(kw)
    return Plan(**args)  # type: ignore[arg-type]


def test_plan_estimate_is_the_sum_of_measured_costs() -> None:
    plan = _plan()
    assert plan.estimated_seconds == pytest.approx(1000 * 0.02 + 50 * 1.5)
    text = plan.text()
    assert "estimated 2 min" in text and "1 x 24 GB" in text and "1000 update x 0.02 s" in text
    assert "hf:/path/to/model" in plans_table([plan]) and plan.to_dict()["estimated_seconds"] == 95.0
    assert format_seconds(42) == "42 s" and format_seconds(3 * 3600) == "3.0 h" and format_seconds(3 * 86400) == "3.0 days"


@pytest.mark.parametrize(("kw", "match"), [
    ({"stages": []}, "stages"), ({"runs": 0}, "runs"), ({"costs": []}, "costs"),
])
def test_plan_rejects_bad_fields(kw: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _plan(**kw)


@pytest.mark.parametrize(("kw", "match"), [
    ({"count": -1}, "count"), ({"seconds_each": float("nan")}, "seconds_each"), ({"measured_on": " "}, "measured_on"),
])
def test_unit_cost_rejects_bad_fields(kw: dict[str, object], match: str) -> None:
    args = dict(what="x", unit="u", count=1, seconds_each=1.0, measured_on="here")
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        UnitCost(**args)  # type: ignore[arg-type]


def test_full_runs_default_to_evaluation_seeds() -> None:
    from icml25.core.seeding import EVALUATION_SEED, default_seed, is_evaluation_seed

    assert default_seed("quick") == 0 and default_seed(Scale.FULL) == EVALUATION_SEED == default_seed("paper")
    assert is_evaluation_seed(EVALUATION_SEED + 2) and not is_evaluation_seed(0)
    v = Verdict(slug="demo", verdict="partial", scale="full", seeds=[1000, 1001], date="2026-12-03")
    assert "evaluation seeds 1000, 1001" in v.text()
    assert "development seed 0" in Verdict(slug="d", verdict="partial", scale="quick", seeds=[0]).text()


def test_an_unmeasured_is_true_claim_never_holds() -> None:
    rep = Report(slug="demo", title="Demo")
    c = rep.add_claim(id="B", statement="b", paper_value=None, measured=float("nan"), comparison="is_true",
                      kind="check", scale=Scale.FULL, note="undefined at quick size")
    assert not c.held and c.status == "not measured"


def test_closest_preset_names_the_preset_a_config_was_made_from() -> None:
    import dataclasses

    from icml25.core.plan import closest_preset

    @dataclasses.dataclass(frozen=True)
    class Cfg:
        a: int = 1
        b: int = 1
        c: int = 1

        @classmethod
        def quick(cls):  # type: ignore[no-untyped-def]
            return cls()

        @classmethod
        def full(cls):  # type: ignore[no-untyped-def]
            return cls(a=2, b=2)

        @classmethod
        def paper(cls):  # type: ignore[no-untyped-def]
            return cls(a=3, b=3, c=3)

    assert closest_preset(Cfg()) == "quick"
    assert closest_preset(dataclasses.replace(Cfg.full(), c=9)) == "full"  # --set on the full preset
    assert closest_preset(Cfg(a=3, b=2, c=1)) == "full"  # one differing field from full and from quick: the larger
    assert closest_preset(Cfg.paper()) == "paper"


@pytest.mark.parametrize("verdict", ["reproduced", "not reproduced", "not measurable here"])
def test_verdict_line_names_the_verdict_once(verdict: str) -> None:
    """A multi-word verdict is not repeated in its context (README line: "not reproduced — reproduced (...)")."""
    v = Verdict(slug="d", verdict=verdict, scale="full", seeds=[1000], date="2026-12-04",
                headline=[{"id": "H1", "status": "failed", "scale": "full"}])
    assert v.text() == f"{verdict} (full scale, evaluation seed 1000, 2026-12-04): H1 failed"
    assert v.context() == "full scale, evaluation seed 1000, 2026-12-04"
    assert v.headline_text() == "H1 failed"
