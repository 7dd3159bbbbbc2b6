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
    assert Claim("a", "s", None, m, ">=", t).held == (m >= t)
    assert Claim("a", "s", None, m, "<", t).held == (m < t)


def test_held_cannot_be_set() -> None:
    c = Claim("a", "s", 1.0, 0.5, ">=", 0.9)
    with pytest.raises(AttributeError):
        c.held = True  # type: ignore[misc]
    assert not c.held


def test_nan_and_none_never_hold() -> None:
    assert not Claim("a", "s", None, math.nan, "<=", 1.0).held
    assert not Claim("a", "s", None, None, "<=", 1.0).held


def test_within_and_is_true() -> None:
    assert Claim("a", "s", None, 0.5, "within", (0.4, 0.6)).held
    assert not Claim("a", "s", None, 0.7, "within", (0.4, 0.6)).held
    assert Claim("a", "s", None, True, "is_true", None).held
    with pytest.raises(ValueError, match="within"):
        Claim("a", "s", None, 0.5, "within", 0.4)
    with pytest.raises(ValueError, match="comparison"):
        Claim("a", "s", None, 0.5, "~", 0.4)


def test_report_roundtrip_and_index(tmp_path) -> None:
    r = Report("demo", "Demo", Scale.QUICK, 0)
    r.add_claim("Q1", "x is big", 3.0, 2.5, ">=", 2.0, unit="dB")
    r.add_claim("Q2", "y is small", 0.1, 0.3, "<=", 0.2)
    r.add_table("t", [{"a": 1, "b": 2.5}])
    with pytest.raises(ValueError, match="duplicate"):
        r.add_claim("Q1", "again", None, 1.0, ">=", 0.0)
    write_report(r, tmp_path / "demo")
    data = json.loads((tmp_path / "demo" / "report.json").read_text())
    assert [c["held"] for c in data["claims"]] == [True, False]
    back = read_report(tmp_path / "demo" / "report.json")
    assert [c.held for c in back.claims] == [True, False]
    idx = write_index(tmp_path).read_text()
    assert "1/2 claims held" in idx and "| Q2 |" in idx


def test_report_json_held_is_recomputed(tmp_path) -> None:
    r = Report("demo", "Demo")
    r.add_claim("Q1", "s", None, 0.1, ">=", 0.5)
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
        r.add_claim("Q1", "s", None, v, ">=", 1.5)
        r.add_claim("Q2", "b", None, v > 0, "is_true", None)
        reps.append(r)
    agg = aggregate_reports(reps)
    assert agg.claims[0].measured == pytest.approx(2.0)
    assert agg.claims[0].spread == pytest.approx(1.0)
    assert agg.claims[0].held and agg.claims[1].held
    assert agg.seed == [0, 1, 2]
