from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icml25.core.claims import Claim, Report, Scale, aggregate_reports
from icml25.core.report import read_report, write_index, write_report


@given(st.floats(allow_nan=False, allow_infinity=False, width=32), st.floats(allow_nan=False, width=32))
def test_held_is_the_comparison(m: float, t: float) -> None:
    assert Claim("a", "s", None, m, ">=", t, kind="mechanism").held == (m >= t)
    assert Claim("a", "s", None, m, "<", t, kind="mechanism").held == (m < t)


def test_held_cannot_be_set() -> None:
    c = Claim("a", "s", 1.0, 0.5, ">=", 0.9, kind="mechanism", source="Table 1")
    with pytest.raises(AttributeError):
        c.held = True  # type: ignore[misc]
    assert not c.held


def test_nan_and_none_never_hold() -> None:
    assert not Claim("a", "s", None, math.nan, "<=", 1.0, kind="mechanism").held
    assert not Claim("a", "s", None, None, "<=", 1.0, kind="mechanism").held


def test_within_and_is_true() -> None:
    assert Claim("a", "s", None, 0.5, "within", (0.4, 0.6), kind="mechanism").held
    assert not Claim("a", "s", None, 0.7, "within", (0.4, 0.6), kind="mechanism").held
    assert Claim("a", "s", None, True, "is_true", None, kind="mechanism").held
    with pytest.raises(ValueError, match="within"):
        Claim("a", "s", None, 0.5, "within", 0.4, kind="mechanism")
    with pytest.raises(ValueError, match="comparison"):
        Claim("a", "s", None, 0.5, "~", 0.4, kind="mechanism")


def test_report_roundtrip_and_index(tmp_path) -> None:
    r = Report("demo", "Demo", Scale.QUICK, 0)
    r.add_claim("Q1", "x is big", 3.0, 2.5, ">=", 2.0, unit="dB", kind="mechanism", source="Table 1")
    r.add_claim("Q2", "y is small", 0.1, 0.3, "<=", 0.2, kind="mechanism", source="Table 1")
    r.add_table("t", [{"a": 1, "b": 2.5}])
    with pytest.raises(ValueError, match="duplicate"):
        r.add_claim("Q1", "again", None, 1.0, ">=", 0.0, kind="mechanism")
    write_report(r, tmp_path / "demo")
    data = json.loads((tmp_path / "demo" / "report.json").read_text())
    assert [c["held"] for c in data["claims"]] == [True, False]
    back = read_report(tmp_path / "demo" / "report.json")
    assert [c.held for c in back.claims] == [True, False]
    idx = write_index(tmp_path).read_text()
    assert "mechanism: 1/2 held" in idx and "| Q2 |" in idx


def test_report_json_held_is_recomputed(tmp_path) -> None:
    r = Report("demo", "Demo")
    r.add_claim("Q1", "s", None, 0.1, ">=", 0.5, kind="mechanism")
    write_report(r, tmp_path / "demo")
    p = tmp_path / "demo" / "report.json"
    data = json.loads(p.read_text())
    data["claims"][0]["held"] = True  # a forged flag is ignored on read
    p.write_text(json.dumps(data))
    assert not read_report(p).claims[0].held


def test_aggregate_mean_and_spread() -> None:
    reps = []
    for s, v in enumerate([1.0, 2.0, 3.0]):
        r = Report("demo", "Demo", seed=s)
        r.add_claim("Q1", "s", None, v, ">=", 1.5, kind="mechanism")
        r.add_claim("Q2", "b", None, v > 0, "is_true", None, kind="mechanism")
        reps.append(r)
    agg = aggregate_reports(reps)
    assert agg.claims[0].measured == pytest.approx(2.0)
    assert agg.claims[0].spread == pytest.approx(1.0)
    assert agg.claims[0].held and agg.claims[1].held
    assert agg.seed == [0, 1, 2]


def test_kind_and_sources_are_required() -> None:
    with pytest.raises(ValueError, match="kind"):
        Claim("a", "s", None, 1.0, ">=", 0.0)
    with pytest.raises(ValueError, match="source"):
        Claim("a", "s", 0.9, 1.0, ">=", 0.0, kind="paper")
    with pytest.raises(ValueError, match="reference_source"):
        Claim("a", "s", None, 1.0, ">=", 0.0, kind="paper", reference_value=0.5)
    c = Claim("a", "s", 0.9, 1.0, ">=", 0.0, kind="paper", source="Table 2", reference_value=0.5,
              reference_source="spec prototype")
    assert c.to_dict()["source"] == "Table 2" and c.to_dict()["reference_source"] == "spec prototype"


def test_failed_precondition_makes_dependents_not_measured(tmp_path) -> None:
    r = Report("demo", "Demo", Scale.QUICK, 0)
    r.add_claim("F0", "reader is competent", None, 0.1, ">=", 0.6, kind="mechanism")
    r.add_claim("F1", "method beats baseline", None, 5.0, ">=", 1.0, kind="paper", requires=["F0"])
    r.add_claim("F2", "depends on F1", None, 5.0, ">=", 1.0, kind="paper", requires="F1")
    r.add_claim("G", "independent", None, 5.0, ">=", 1.0, kind="check")
    assert [c.status for c in r.claims] == ["failed", "not measured", "not measured", "held"]
    assert not r.claims[1].held and r.claims[1].measurement_passes
    assert "precondition F0 failed" in r.claims[1].status_text()
    assert r.counts()["paper"] == {"held": 0, "failed": 0, "not measured": 2, "total": 2}
    with pytest.raises(ValueError, match="requires"):
        r.add_claim("H", "later dependency", None, 1.0, ">=", 0.0, kind="check", requires=["Z"])
    write_report(r, tmp_path / "demo")
    back = read_report(tmp_path / "demo" / "report.json")
    assert [c.status for c in back.claims] == ["failed", "not measured", "not measured", "held"]
    md = (tmp_path / "demo" / "report.md").read_text()
    assert "paper claims: 0/2 held (2 not measured)" in md and "check: 1/1 held" in md


def test_aggregate_uses_each_claims_statistic() -> None:
    reps = []
    for s, v in enumerate([1.0, 3.0, 8.0]):
        r = Report("demo", "Demo", Scale.QUICK, s)
        r.add_claim("mean", "m", None, v, ">=", 0.0, kind="mechanism")
        r.add_claim("min", "worst seed", None, v, ">=", 2.0, kind="mechanism", aggregate="min")
        r.add_claim("med", "median", None, v, ">=", 0.0, kind="mechanism", aggregate="median")
        reps.append(r)
    agg = aggregate_reports(reps)
    assert [c.measured for c in agg.claims] == [4.0, 1.0, 3.0]
    assert not agg.claims[1].held  # the mean (4.0) would have passed
    assert "[min over 3 seeds]" in agg.claims[1].note
