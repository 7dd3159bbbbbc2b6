"""The user's EfficientPlace results file (issue 45): the loader on good and bad files, the two abstract claims against
a hand computation, and the not-measured path without the file."""

from __future__ import annotations

import json
import math

import pytest

from icml25.core import Report, Scale
from icml25.core.data import DataNotFoundError
from icml25.egplace import experiment as ex
from icml25.egplace import load_efficientplace_results
from icml25.egplace.reproduce import Config

#: 2 benchmarks x 2 seeds: adaptec1 means 5.5e5 HPWL, 320 s; adaptec2 means 4.0e5, 100 s
GOOD_CSV = ("benchmark,hpwl,seconds,seed,evaluations\n"
            "adaptec1,6.0e5,300,0,1000\nadaptec1,5.0e5,340,1,1000\n"
            "adaptec2,4.4e5,90,0,\nadaptec2,3.6e5,110,1,\n")


def _write(tmp_path, text: str, name: str = "ep.csv") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_loader_averages_seeds_csv_and_json(tmp_path) -> None:
    res = load_efficientplace_results(_write(tmp_path, GOOD_CSV))
    assert set(res) == {"adaptec1", "adaptec2"}
    assert res["adaptec1"]["hpwl"] == pytest.approx(5.5e5) and res["adaptec1"]["seconds"] == pytest.approx(320.0)
    assert res["adaptec2"]["hpwl"] == pytest.approx(4.0e5) and res["adaptec2"]["seconds"] == pytest.approx(100.0)
    assert res["adaptec1"]["runs"] == 2 and res["adaptec1"]["evaluations"] == 1000
    assert math.isnan(res["adaptec2"]["evaluations"])
    rows = [{"benchmark": "Adaptec1", "hpwl": 6.0e5, "seconds": 300}, {"benchmark": "adaptec1", "hpwl": 5.0e5,
                                                                        "seconds": 340, "note": "ignored"}]
    for payload in (rows, {"results": rows}):
        js = load_efficientplace_results(_write(tmp_path, json.dumps(payload), "ep.json"), benchmarks=["adaptec1"])
        assert js["adaptec1"]["hpwl"] == pytest.approx(5.5e5) and js["adaptec1"]["runs"] == 2


@pytest.mark.parametrize("text, name, match", [
    ("benchmark,hpwl\nadaptec1,5e5\n", "ep.csv", "missing column.*seconds"),
    ('[{"benchmark": "adaptec1", "seconds": 3}]', "ep.json", "missing column.*hpwl"),
    ("benchmark,hpwl,seconds\nadaptec1,0,300\n", "ep.csv", "row 1 .adaptec1.: hpwl must be a positive number"),
    ("benchmark,hpwl,seconds\nadaptec1,5e5,-3\n", "ep.csv", "seconds must be a positive number"),
    ("benchmark,hpwl,seconds\nadaptec1,5e5,abc\n", "ep.csv", "seconds must be a positive number"),
    ("benchmark,hpwl,seconds\nadaptec1,nan,3\n", "ep.csv", "hpwl must be a positive number"),
    ("benchmark,hpwl,seconds,evaluations\nadaptec1,5e5,3,-1\n", "ep.csv", "evaluations must be a positive"),
    ("benchmark,hpwl,seconds\nariane,5e5,300\n", "ep.csv", "'ariane' is not placed by this run; known: adaptec1"),
    ("benchmark,hpwl,seconds\n,5e5,300\n", "ep.csv", "benchmark is empty"),
    ("benchmark,hpwl,seconds,seed\nadaptec1,5e5,3,0\nadaptec1,5e5,3,0\n", "ep.csv", "seed 0 appears twice"),
    ("benchmark,hpwl,seconds\n", "ep.csv", "no rows"),
    ("{not json", "ep.json", "not valid JSON"),
    ('{"adaptec1": 3}', "ep.json", "expected a JSON list of objects"),
    ("benchmark\thpwl\tseconds\n", "ep.tsv", "expected a .csv or .json file"),
])
def test_loader_rejects_bad_files(tmp_path, text: str, name: str, match: str) -> None:
    with pytest.raises(ValueError, match=match) as err:
        load_efficientplace_results(_write(tmp_path, text, name))
    assert "\n" not in str(err.value)


def test_loader_missing_file_and_bad_arguments(tmp_path) -> None:
    with pytest.raises(DataNotFoundError, match="not found.*benchmark, hpwl, seconds"):
        load_efficientplace_results(tmp_path / "absent.csv")
    with pytest.raises(TypeError, match="path"):
        load_efficientplace_results("")
    with pytest.raises(TypeError, match="benchmarks"):
        load_efficientplace_results(_write(tmp_path, GOOD_CSV), benchmarks=[1, 2])
    with pytest.raises(ValueError, match="known: adaptec1$"):  # the run places adaptec1 only
        load_efficientplace_results(_write(tmp_path, GOOD_CSV), benchmarks=("adaptec1",))


def _rows() -> list[dict]:
    """What ``_ispd_rows`` returns for EGPlace: adaptec1 5.0e5 in 100 s, adaptec2 4.0e5 in 50 s, adaptec3 3.0e5."""
    return [{"circuit": c, "EGPlace (1e5)": h, "EGPlace s": s, "reduction %": 1.0, "speed-up (time to target)": 1.0}
            for c, h, s in (("adaptec1", 5.0, 100.0), ("adaptec2", 4.0, 50.0), ("adaptec3", 3.0, 10.0))]


def test_claims_match_a_hand_computation(tmp_path, monkeypatch) -> None:
    """reduction = mean(100 (1 − 5/5.5), 100 (1 − 4/4)) = 4.545 %; speed-up = mean(320/100, 100/50) = 2.6x over the
    two circuits both have (adaptec3 has no EfficientPlace row)."""
    monkeypatch.setattr(ex, "_ispd_rows", lambda cfg, seed, guided: _rows())
    path = _write(tmp_path, GOOD_CSV)
    cfg = Config(ispd_circuits=("adaptec1", "adaptec2", "adaptec3"), efficientplace_results=path)
    rep = Report(slug="egplace", title="t", scale=Scale.PAPER)
    ex.add_ispd_claims(rep, Scale.PAPER, cfg, 0, ex.guided_egplace)
    by = {c.id: c for c in rep.claims}
    red, spd = by["ispd_hpwl_efficientplace"], by["ispd_speedup_efficientplace"]
    assert red.measured == pytest.approx((100 * (1 - 5 / 5.5) + 0.0) / 2)
    assert spd.measured == pytest.approx((320 / 100 + 100 / 50) / 2)
    assert red.threshold == pytest.approx(9.3 - 3.0) and spd.threshold == pytest.approx(1.4)
    assert red.held is False and spd.held is True
    for claim in (red, spd):
        assert f"{cfg.search_evals} evaluations x {cfg.n_seeds} seeds" in claim.note
        assert path in claim.note and "their hardware" in claim.note and "adaptec1, adaptec2" in claim.note
    table = rep.tables["ISPD2005 vs EfficientPlace (the user's results)"]
    assert [r["benchmark"] for r in table] == ["adaptec1", "adaptec2"]


def test_compare_with_efficientplace_directly() -> None:
    ours = {"a": {"hpwl": 90.0, "seconds": 2.0}, "b": {"hpwl": 50.0, "seconds": 4.0}}
    theirs = {"a": {"hpwl": 100.0, "seconds": 6.0}, "c": {"hpwl": 1.0, "seconds": 1.0}}
    rows, red, spd = ex.compare_with_efficientplace(ours, theirs)
    assert [r["benchmark"] for r in rows] == ["a"] and red == pytest.approx(10.0) and spd == pytest.approx(3.0)
    rows, red, spd = ex.compare_with_efficientplace(ours, {})
    assert rows == [] and math.isnan(red) and math.isnan(spd)


def test_not_measured_without_the_file(monkeypatch) -> None:
    """Paper scale without the file: NaN with a note naming the field and the format; quick: not measured here."""
    monkeypatch.setattr(ex, "_ispd_rows", lambda cfg, seed, guided: _rows())
    rep = Report(slug="egplace", title="t", scale=Scale.PAPER)
    ex.add_ispd_claims(rep, Scale.PAPER, Config(ispd_circuits=("adaptec1",)), 0, ex.guided_egplace)
    by = {c.id: c for c in rep.claims}
    for cid in ("ispd_hpwl_efficientplace", "ispd_speedup_efficientplace"):
        assert math.isnan(by[cid].measured)
        assert "efficientplace_results is empty" in by[cid].note and "benchmark, hpwl, seconds" in by[cid].note
    assert math.isfinite(by["ispd_hpwl_ea"].measured)
    quick = Report(slug="egplace", title="t")
    ex.add_ispd_claims(quick, Scale.QUICK, Config.quick(), 0, ex.guided_egplace)
    notes = {c.id: c.note for c in quick.not_measured_here()}
    assert "efficientplace_results" in notes["ispd_speedup_efficientplace"]


def test_config_and_dry_run(tmp_path) -> None:
    """The field needs ispd_circuits; a bad file fails before any search; the dry run says found / missing."""
    with pytest.raises(ValueError, match="efficientplace_results needs ispd_circuits"):
        Config(efficientplace_results="ep.csv")
    with pytest.raises(TypeError, match="efficientplace_results"):
        Config(efficientplace_results=3)
    assert ex.load_efficientplace(Config.paper()) is None
    bad = Config(ispd_circuits=("adaptec1",), efficientplace_results=_write(tmp_path, GOOD_CSV))
    with pytest.raises(ValueError, match="'adaptec2' is not placed by this run"):
        ex.load_efficientplace(bad)
    import dataclasses

    found = dataclasses.replace(Config.paper(), efficientplace_results=_write(tmp_path, GOOD_CSV))
    missing = dataclasses.replace(Config.paper(), efficientplace_results=str(tmp_path / "absent.csv"))
    assert any("(found)" in d for d in found.plan().datasets if "EfficientPlace" in d)
    assert any("(missing)" in d for d in missing.plan().datasets if "EfficientPlace" in d)
    assert any("not given" in d for d in Config.paper().plan().datasets if "EfficientPlace" in d)
