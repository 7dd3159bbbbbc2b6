"""Bookshelf files as real tools write them: ISPD2005 (``NumSites``, tabs, ``/FIXED``), IBM-MS (``Numsites``,
``Numrows``), CRLF, lower-case keywords, ``#`` comments anywhere, optional fields; files a rule does not need; errors
naming file, line and what was expected. The headers below are hand-written imitations of the published files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from icml25.egplace import BookshelfError, load_ibm01, read_bookshelf

# ISPD2005 style (adaptec1 layout): tabs, 'NumSites', pin directions and offsets, '/FIXED' terminals
ISPD_NODES = """UCLA nodes 1.0
# Created\t:\tNov  7 2005
# User\t:\tGi-Joon Nam & Mehmet Yildiz at IBM Austin Research({gnam, mcyildiz}@us.ibm.com)

NumNodes : \t6
NumTerminals : \t3
\to0\t8\t12
\to1\t8\t12
\to2\t4\t12
\tp0\t40\t40\tterminal
\tp1\t30\t50\tterminal
\tp2\t20\t20\tterminal_NI
"""
ISPD_NETS = """UCLA nets 1.0
# Created\t:\tNov  7 2005

NumNets : 3
NumPins : 8
NetDegree : 3   n0
\to0\tI : -0.500000\t-6.000000
\tp0\tO : 10.000000\t-2.000000
\tp1\tI : -5.000000\t4.000000
NetDegree : 3   n1
\tp1\tI : 0.000000\t0.000000
\tp2\tB : 1.000000\t1.000000
\to1\tO : 0.000000\t0.000000
NetDegree : 2   n2
\to1\tI : 0.000000\t0.000000
\to2\tO : 0.000000\t0.000000
"""
ISPD_PL = """UCLA pl 1.0
# Created\t:\tNov  7 2005

o0\t0\t0\t: N
o1\t8\t0\t: N
o2\t16\t0\t: N
p0\t100\t0\t: N /FIXED
p1\t0\t100\t: N /FIXED
p2\t150\t150\t: FS /FIXED_NI
"""
ISPD_SCL = """UCLA scl 1.0
# Created\t:\tNov  7 2005

NumRows : \t2

CoreRow Horizontal
  Coordinate    :   0
  Height        :   12
  Sitewidth     :    1
  Sitespacing   :    1
  Siteorient    :    1
  Sitesymmetry  :    1
  SubrowOrigin  :   0\tNumSites  :  200
End
CoreRow Horizontal
  Coordinate    :   12
  Height        :   12
  Sitewidth     :    1
  Sitespacing   :    1
  Siteorient    :    1
  Sitesymmetry  :    1
  SubrowOrigin  :   0\tNumSites  :  200
End
"""
ISPD_AUX = "RowBasedPlacement :  t.nodes  t.nets  t.wts  t.pl  t.scl\n"

# IBM-MS style (ibm01 layout): 'Numsites', 'Numrows', no terminal macros; macros are taller than the 16-unit rows
IBM_NODES = """UCLA nodes 1.0
# Created      : Thu May 23 15:26:23 2002
# User         : someone@umich.edu

NumNodes :          5
NumTerminals :        1
        p1           1          1 terminal
        a0          20         32
        a1          10         48
        a2           4         16
        a3           6         16
"""
IBM_NETS = """UCLA nets 1.0

NumNets : 2
NumPins : 5
NetDegree : 2
      a0 B
      a1 B
NetDegree : 3
      p1 B
      a1 I
      a2 O
"""
IBM_PL = """UCLA pl 1.0

p1           0        96 : FS
a0           0         0 : N
a1          20         0 : N
a2          40         0 : N
a3          44         0 : N
"""
IBM_SCL = """UCLA scl 1.0
# Created      : Thu May 23 15:26:25 2002


Numrows : 2

CoreRow Horizontal
 Coordinate   :          0
 Height       :         16
 Sitewidth    :          1
 Sitespacing  :          1
 Siteorient   :         N
 Sitesymmetry :         Y
 SubrowOrigin :          0 Numsites :       96
End
CoreRow Horizontal
 Coordinate   :         16
 Height       :         16
 Sitewidth    :          1
 Sitespacing  :          1
 Siteorient   :         N
 Sitesymmetry :         Y
 SubrowOrigin :          0 Numsites :       96
End
"""


def _write(tmp: Path, files: dict[str, str], aux: str = ISPD_AUX, newline: str = "\n") -> Path:
    for ext, text in files.items():
        (tmp / f"t.{ext}").write_bytes(text.replace("\n", newline).encode())
    (tmp / "t.aux").write_bytes(aux.replace("\n", newline).encode())
    return tmp / "t.aux"


def _same(a, b) -> None:
    assert a.names == b.names and a.net_names == b.net_names and a.size == b.size
    for k in ("w", "h", "ref_x", "ref_y", "net_ptr", "pin_macro", "pin_ox", "pin_oy"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k))


ISPD = {"nodes": ISPD_NODES, "nets": ISPD_NETS, "pl": ISPD_PL, "scl": ISPD_SCL}
IBM = {"nodes": IBM_NODES, "nets": IBM_NETS, "pl": IBM_PL, "scl": IBM_SCL}


def test_ispd2005_terminals_reads_the_macros(tmp_path: Path) -> None:
    nl = read_bookshelf(_write(tmp_path, ISPD))
    assert nl.names == ["p0", "p1", "p2"] and nl.net_names == ["n0", "n1"]
    assert nl.size == 170.0  # p2 at (150, 150), 20 x 20
    np.testing.assert_array_equal(nl.pin_ox, [10.0, -5.0, 0.0, 1.0])


def test_ispd2005_numsites_is_read_under_taller_than_rows(tmp_path: Path) -> None:
    # o0/o1/o2 are 12 high, the row height: no node is taller than the rows
    with pytest.raises(BookshelfError, match=r"t\.nodes: no macros found .* expected nodes taller than the rows"):
        read_bookshelf(_write(tmp_path, ISPD), macro_rule="taller_than_rows")
    nodes = ISPD_NODES.replace("\to1\t8\t12", "\to1\t8\t36").replace("\to2\t4\t12", "\to2\t4\t30")
    nl = read_bookshelf(_write(tmp_path, {**ISPD, "nodes": nodes}), macro_rule="taller_than_rows")
    assert nl.names == ["o1", "o2"] and nl.net_names == ["n2"]
    assert nl.size == 200.0  # 200 sites of width 1 (NumSites) wide, 2 x 12 high


def test_numsites_spellings_give_the_same_netlist(tmp_path: Path) -> None:
    ref = read_bookshelf(_write(tmp_path, IBM), macro_rule="taller_than_rows")
    assert ref.names == ["a0", "a1"] and ref.size == 96.0 and ref.n_nets == 1
    for spelling in ("NumSites", "NUMSITES", "numsites"):
        scl = IBM_SCL.replace("Numsites", spelling).replace("Numrows", "NumRows")
        _same(read_bookshelf(_write(tmp_path, {**IBM, "scl": scl}), macro_rule="taller_than_rows"), ref)


def test_crlf_tabs_comments_and_lower_case_keywords(tmp_path: Path) -> None:
    ref = read_bookshelf(_write(tmp_path, ISPD))
    messy = {
        "nodes": ISPD_NODES.replace("NumNodes : \t6", "numnodes:6  # six nodes").replace("NumTerminals", "NUMTERMINALS"),
        "nets": ISPD_NETS.replace("NetDegree : 3   n0", "netdegree:3 n0 # first net").replace("NumPins", "numpins"),
        "pl": "\ufeff" + ISPD_PL.replace("p0\t100\t0\t: N /FIXED", "p0 100 0 # a comment after the fields"),
        "scl": ISPD_SCL.replace("CoreRow Horizontal", "corerow horizontal").replace("End", "end"),
    }
    _same(read_bookshelf(_write(tmp_path, messy, newline="\r\n")), ref)
    _same(read_bookshelf(_write(tmp_path, messy, aux="RowBasedPlacement:t.nodes t.nets t.pl\n", newline="\r\n")),
          ref)


def test_optional_fields(tmp_path: Path) -> None:
    """Net names, pin directions, pin offsets, orientations and the Num... counts may all be left out."""
    nets = ("UCLA nets 1.0\nNetDegree : 3\n o0\n p0 : 10 -2\n p1 I : -5 4\nNetDegree : 3\n p1\n p2 B : 1 1\n o1\n")
    nodes = "\n".join(line for line in ISPD_NODES.splitlines() if not line.startswith("Num"))
    pl = ISPD_PL.replace(": N /FIXED", "").replace(": FS /FIXED_NI", "")
    nl = read_bookshelf(_write(tmp_path, {"nodes": nodes, "nets": nets, "pl": pl}, aux="RowBasedPlacement : "
                               "t.nodes t.nets t.pl\n"))
    assert nl.names == ["p0", "p1", "p2"] and nl.net_names == ["net0", "net1"]
    np.testing.assert_array_equal(nl.pin_ox, [10.0, -5.0, 0.0, 1.0])


def test_files_the_rule_does_not_need_are_not_required_nor_parsed(tmp_path: Path) -> None:
    aux = _write(tmp_path, {**ISPD, "scl": "UCLA scl 1.0\nCoreRow Horizontal\n SubrowOrigin : zero\nEnd\n"})
    ref = read_bookshelf(aux)  # a broken .scl is not read under "terminals"
    (tmp_path / "t.scl").unlink()  # nor needed; the .wts named by the .aux never existed
    _same(read_bookshelf(aux), ref)
    with pytest.raises(FileNotFoundError, match=r"t\.scl: no such file; expected the bookshelf \.scl file"):
        read_bookshelf(aux, macro_rule="taller_than_rows")


@pytest.mark.parametrize("ext,old,new,match", [
    ("scl", "SubrowOrigin :          0 Numsites :       96", "SubrowOrigin : 0 Numsites 96",
     r"t\.scl:14: expected 'SubrowOrigin : x NumSites : n', got"),
    ("scl", " Height       :         16", " Height       :         nan", r"t\.scl:9: Height must be finite"),
    ("scl", "Numrows : 2", "Numrows : 3", r"t\.scl:5: the header declares 3 rows \(NumRows\) but the file lists 2"),
    ("nodes", "        a1          10         48", "        a1          10", r"t\.nodes:9: expected 'name width "
     r"height \[terminal\]', got 'a1 10'"),
    ("nets", "NumPins : 5", "NumPins : 6", r"t\.nets:4: the header declares 6 pins .* expected the counts to match"),
    ("nets", "NetDegree : 3\n", "NetDegree : 3\n      zz B\n", r"t\.nets:9: unknown node name 'zz'.*expected"),
    ("pl", "a1          20         0 : N\n", "", r"t\.pl: no position for node 'a1'.*expected"),
])
def test_errors_name_file_line_and_expectation(tmp_path: Path, ext: str, old: str, new: str, match: str) -> None:
    assert old in IBM[ext]
    aux = _write(tmp_path, {**IBM, ext: IBM[ext].replace(old, new)})
    with pytest.raises(BookshelfError, match=match) as info:
        read_bookshelf(aux, macro_rule="taller_than_rows")
    assert "\n" not in str(info.value) and "expected" in str(info.value)


def test_error_messages_stay_short_on_a_huge_line(tmp_path: Path) -> None:
    aux = _write(tmp_path, {**IBM, "nodes": "x" * 1_000_000 + "\n" + IBM_NODES})
    with pytest.raises(BookshelfError, match=r"t\.nodes:1: expected") as info:
        read_bookshelf(aux, macro_rule="taller_than_rows")
    assert len(str(info.value)) < 400


def test_shipped_ibm01_parses_as_before() -> None:
    nl = load_ibm01()
    assert (nl.n_macros, nl.n_nets, len(nl.pin_macro), nl.size) == (246, 908, 1928, 2304.0)
    assert nl.names[:3] == ["a22", "a23", "a26"] and nl.net_names[:3] == ["net351", "net352", "net353"]
    assert float(nl.w.sum()) == 21188.0
