"""The reproduction's Config rejects bad fields (docstring examples run in tests/core/test_doctests.py)."""

from __future__ import annotations

import pytest


def test_config_validates_fields() -> None:
    from icml25.egplace.reproduce import Config

    with pytest.raises(ValueError, match="search_evals"):
        Config(search_evals=5, init_round=10)
    with pytest.raises(ValueError, match="p_swap"):
        Config(p_swap=1.5)
    with pytest.raises(TypeError, match="n_seeds"):
        Config(n_seeds=1.5)


def test_paper_preset_and_plans() -> None:
    """Config.paper() validates; every preset's dry run names its scale and --set changes the estimate."""
    import dataclasses

    from icml25.egplace.reproduce import ISPD_GRID, Config

    paper = Config.paper()
    assert paper.search_evals == 1000 and paper.init_round == 100 and set(paper.ispd_circuits) == set(ISPD_GRID)
    for name in ("quick", "full", "paper"):
        assert getattr(Config, name)().plan().scale == name
    quick = Config.quick()
    assert dataclasses.replace(quick, search_evals=400).plan().estimated_seconds > quick.plan().estimated_seconds
    with pytest.raises(ValueError, match="ispd_circuits"):
        Config(ispd_circuits=("bigblue2",))


def _write_ispd(folder, n_macros: int = 10, seed: int = 0) -> None:
    """A small ISPD2005-style bookshelf (terminal macros, /FIXED positions) from a synthetic netlist."""
    from icml25.egplace import synthetic_netlist

    nl = synthetic_netlist(n_macros, 0.3, seed=seed, size=200.0)
    folder.mkdir(parents=True)
    names = [f"m{i}" for i in range(nl.n_macros)]
    nodes = ["UCLA nodes 1.0", f"NumNodes : {nl.n_macros}", f"NumTerminals : {nl.n_macros}"]
    nodes += [f"\t{n}\t{w:.0f}\t{h:.0f}\tterminal" for n, w, h in zip(names, nl.w, nl.h)]
    nets = ["UCLA nets 1.0", f"NumNets : {nl.n_nets}", f"NumPins : {len(nl.pin_macro)}"]
    for e in range(nl.n_nets):
        lo, hi = nl.net_ptr[e], nl.net_ptr[e + 1]
        nets.append(f"NetDegree : {hi - lo} n{e}")
        nets += [f"\t{names[nl.pin_macro[p]]}\tI : {nl.pin_ox[p]:.3f}\t{nl.pin_oy[p]:.3f}" for p in range(lo, hi)]
    pl = ["UCLA pl 1.0"] + [f"{n}\t{(i % 4) * 50}\t{(i // 4) * 50}\t: N /FIXED" for i, n in enumerate(names)]
    for ext, lines in (("nodes", nodes), ("nets", nets), ("pl", pl)):
        (folder / f"adaptec1.{ext}").write_text("\n".join(lines) + "\n")
    (folder / "adaptec1.aux").write_text("RowBasedPlacement : adaptec1.nodes adaptec1.nets adaptec1.pl\n")


def test_ispd_claims_are_measured_on_user_netlists(tmp_path, monkeypatch) -> None:
    """Paper scale: with the user's ISPD2005 files the WireMask-EA claims are measured; EfficientPlace's only with the
    user's EfficientPlace results, against EGPlace's run here (its mean HPWL and wall time in the ISPD2005 table)."""
    import math

    from icml25.core import Report, Scale
    from icml25.egplace import experiment as ex
    from icml25.egplace import reproduce as rp

    _write_ispd(tmp_path / "adaptec1")
    monkeypatch.setitem(rp.ISPD_GRID, "adaptec1", 16)
    cfg = rp.Config(ispd_circuits=("adaptec1",), ispd_dir=str(tmp_path), search_evals=12, init_round=2, n_seeds=1)
    rep = Report(slug="egplace", title="t", scale=Scale.PAPER)
    ex.add_ispd_claims(rep, Scale.PAPER, cfg, 0, ex.guided_egplace)
    by = {c.id: c for c in rep.claims}
    assert math.isfinite(by["ispd_hpwl_ea"].measured) and by["ispd_hpwl_ea"].headline
    assert math.isnan(by["ispd_hpwl_efficientplace"].measured) and "EfficientPlace" in by["ispd_hpwl_efficientplace"].note
    assert any(name.startswith("ISPD2005") for name in rep.tables)
    assert math.isnan(by["ispd_speedup_ea"].measured) and "speedup_samples = 0" in by["ispd_speedup_ea"].note
    # the abstract's 7.8x measured as the paper does (loop-mask WireMask-EA, sampled) and the time-to-target ratio
    timed = rp.Config(ispd_circuits=("adaptec1",), ispd_dir=str(tmp_path), search_evals=12, init_round=2, n_seeds=2,
                      speedup_samples=2)
    rep = Report(slug="egplace", title="t", scale=Scale.PAPER)
    ex.add_ispd_claims(rep, Scale.PAPER, timed, 0, ex.guided_egplace)
    by = {c.id: c for c in rep.claims}
    (row,) = next(t for name, t in rep.tables.items() if name.startswith("ISPD2005 ("))
    speed, ttt = by["ispd_speedup_ea"], by["ispd_time_to_target_ea"]
    assert speed.measured == pytest.approx(row["speed-up (loop EA, budget)"]) and speed.headline
    assert row["speed-up (loop EA, budget)"] == pytest.approx(row["EA loop CPU s (estimate)"] / row["EGPlace CPU s"])
    assert speed.threshold == pytest.approx(7.8 * 0.75) and speed.paper_value == 7.8
    assert ttt.measured == pytest.approx(row["speed-up (time to target)"]) and ttt.kind == "mechanism"
    assert not ttt.headline and ttt.threshold == pytest.approx(3.9) and "time-to-target" in ttt.statement
    (tmp_path / "ep.csv").write_text("benchmark,hpwl,seconds\nadaptec1,1e9,7.5\n")
    with_ep = rp.Config(ispd_circuits=("adaptec1",), ispd_dir=str(tmp_path), search_evals=12, init_round=2, n_seeds=1,
                        efficientplace_results=str(tmp_path / "ep.csv"))
    rep = Report(slug="egplace", title="t", scale=Scale.PAPER)
    ex.add_ispd_claims(rep, Scale.PAPER, with_ep, 0, ex.guided_egplace)
    by = {c.id: c for c in rep.claims}
    (row,) = next(t for name, t in rep.tables.items() if name.startswith("ISPD2005 ("))
    assert by["ispd_hpwl_efficientplace"].measured == pytest.approx(100 * (1 - 1e5 * row["EGPlace (1e5)"] / 1e9))
    assert by["ispd_speedup_efficientplace"].measured == pytest.approx(7.5 / row["EGPlace s"])
    missing = rp.Config(ispd_circuits=("adaptec2",), ispd_dir=str(tmp_path))
    with pytest.raises(Exception, match="adaptec2"):
        ex.add_ispd_claims(Report(slug="egplace", title="t"), Scale.PAPER, missing, 0, ex.guided_egplace)


def test_abstract_claims_are_not_measured_at_quick_scale() -> None:
    """Without ISPD2005 files (quick/full) the abstract's claims are registered at paper scale, not measured here."""
    from icml25.core import Report, Scale
    from icml25.egplace import experiment as ex
    from icml25.egplace import reproduce as rp

    rep = Report(slug="egplace", title="t")
    ex.add_ispd_claims(rep, Scale.QUICK, rp.Config.quick(), 0, ex.guided_egplace)
    assert {c.id for c in rep.not_measured_here()} == {"ispd_hpwl_ea", "ispd_speedup_ea", "ispd_time_to_target_ea",
                                                        "ispd_hpwl_efficientplace", "ispd_speedup_efficientplace"}
