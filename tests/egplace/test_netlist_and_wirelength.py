"""Bookshelf reading/writing, the shipped ibm01 benchmark, HPWL and overlap against brute force."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from icml25.egplace import (
    BookshelfError,
    hpwl,
    load_ibm01,
    overlap_area,
    read_bookshelf,
    synthetic_netlist,
    write_bookshelf_pl,
)


def _brute_hpwl(nl, x, y) -> float:
    total = 0.0
    for e in range(nl.n_nets):
        xs, ys = [], []
        for p in range(nl.net_ptr[e], nl.net_ptr[e + 1]):
            i = nl.pin_macro[p]
            xs.append(x[i] + nl.w[i] / 2 + nl.pin_ox[p])
            ys.append(y[i] + nl.h[i] / 2 + nl.pin_oy[p])
        total += max(xs) - min(xs) + max(ys) - min(ys)
    return total


def test_ibm01_matches_its_published_statistics() -> None:
    nl = load_ibm01()  # SOURCE.md: 246 macros, 908 macro-only nets, 1928 pins, core 2304 high, utilisation 0.43
    assert (nl.n_macros, nl.n_nets, len(nl.pin_macro)) == (246, 908, 1928)
    assert nl.size == 2304.0
    assert abs(nl.utilisation - 0.43) < 0.01
    assert set(np.diff(nl.net_ptr)) >= {2}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hpwl_and_overlap_match_brute_force(seed: int) -> None:
    nl = synthetic_netlist(15, 0.3, seed=seed)
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0, nl.size, 15), rng.uniform(0, nl.size, 15)
    assert hpwl(nl, x, y) == pytest.approx(_brute_hpwl(nl, x, y), rel=1e-12)
    brute = 0.0
    for i, j in itertools.combinations(range(15), 2):
        ox = min(x[i] + nl.w[i], x[j] + nl.w[j]) - max(x[i], x[j])
        oy = min(y[i] + nl.h[i], y[j] + nl.h[j]) - max(y[i], y[j])
        brute += max(ox, 0) * max(oy, 0)
    assert overlap_area(nl, x, y) == pytest.approx(brute, rel=1e-12)


def test_synthetic_netlist_hits_its_utilisation() -> None:
    nl = synthetic_netlist(40, 0.35, seed=3)
    assert abs(nl.utilisation - 0.35) < 0.02
    assert nl.n_nets > 0 and np.all(np.diff(nl.net_ptr) >= 2)


def _write(tmp: Path, nodes: str, nets: str, pl: str) -> Path:
    (tmp / "t.nodes").write_text("UCLA nodes 1.0\n" + nodes)
    (tmp / "t.nets").write_text("UCLA nets 1.0\n" + nets)
    (tmp / "t.pl").write_text("UCLA pl 1.0\n" + pl)
    (tmp / "t.aux").write_text("RowBasedPlacement : t.nodes t.nets t.pl\n")
    return tmp / "t.aux"


GOOD_NODES = "NumNodes : 3\nNumTerminals : 3\n a 10 10 terminal\n b 20 10 terminal\n c 5 5 terminal\n"
GOOD_NETS = "NumNets : 1\nNetDegree : 3 n0\n a B : 1 2\n b B : -1 0\n c B\n"
GOOD_PL = "a 0 0 : N\nb 30 0 : N\nc 0 40 : N\n"


def test_bookshelf_roundtrip(tmp_path: Path) -> None:
    nl = read_bookshelf(_write(tmp_path, GOOD_NODES, GOOD_NETS, GOOD_PL))
    assert nl.names == ["a", "b", "c"] and nl.size == 50.0  # max extent of the terminals: 30 + 20, 40 + 5
    assert list(nl.pin_ox) == [1.0, -1.0, 0.0] and list(nl.pin_oy) == [2.0, 0.0, 0.0]
    out = write_bookshelf_pl(nl, nl.ref_x + 1, nl.ref_y, tmp_path / "out.pl")
    (tmp_path / "t.pl").write_text(out.read_text())
    again = read_bookshelf(tmp_path / "t.aux")
    np.testing.assert_allclose(again.ref_x, nl.ref_x + 1)
    with pytest.raises(FileExistsError, match="overwrite"):
        write_bookshelf_pl(nl, nl.ref_x, nl.ref_y, out)


@pytest.mark.parametrize("nodes,nets,pl,match", [
    (GOOD_NODES, GOOD_NETS.replace(" c B\n", " zz B\n"), GOOD_PL, r"t\.nets:6: unknown node name 'zz'"),
    (GOOD_NODES, GOOD_NETS.replace("NetDegree : 3", "NetDegree : 4"), GOOD_PL, r"t\.nets:3: net declares 4"),
    (GOOD_NODES.replace(" b 20 10", " b twenty 10"), GOOD_NETS, GOOD_PL, r"t\.nodes:5: expected a number"),
    (GOOD_NODES, GOOD_NETS, GOOD_PL.replace("c 0 40", "q 0 40"), r"t\.pl:4: unknown node name 'q'"),
    (GOOD_NODES, " a B\n" + GOOD_NETS, GOOD_PL, r"t\.nets:2: pin line before any 'NetDegree'"),
])
def test_malformed_files_name_file_and_line(tmp_path: Path, nodes: str, nets: str, pl: str, match: str) -> None:
    with pytest.raises(BookshelfError, match=match):
        read_bookshelf(_write(tmp_path, nodes, nets, pl))


def test_missing_files_and_bad_rule(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.aux"):
        read_bookshelf(tmp_path / "nope.aux")
    (tmp_path / "x.aux").write_text("RowBasedPlacement : x.nodes x.pl\n")
    with pytest.raises(BookshelfError, match="names no .nets"):
        read_bookshelf(tmp_path / "x.aux")
    with pytest.raises(ValueError, match="macro_rule"):
        read_bookshelf(tmp_path / "x.aux", macro_rule="big")
    aux = _write(tmp_path, GOOD_NODES, GOOD_NETS, GOOD_PL)
    with pytest.raises(BookshelfError, match="needs the .scl"):
        read_bookshelf(aux, macro_rule="taller_than_rows")
