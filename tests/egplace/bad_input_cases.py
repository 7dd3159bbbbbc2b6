"""Bad-input registry of ``icml25.egplace`` for the fuzz contract (tests/core/test_bad_input.py)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, SIZE, TEXT, BadInputCase


@functools.cache
def _nl():
    from icml25.egplace import synthetic_netlist

    return synthetic_netlist(8, 0.3, seed=0)


def _dec():
    from icml25.egplace import Canvas, GreedyDecoder

    return GreedyDecoder(_nl(), Canvas(10, _nl().size))


def _netlist_kwargs():
    nl = _nl()
    return {"names": list(nl.names), "w": nl.w.copy(), "h": nl.h.copy(), "ref_x": nl.ref_x.copy(),
            "ref_y": nl.ref_y.copy(), "net_ptr": nl.net_ptr.copy(), "pin_macro": nl.pin_macro.copy(),
            "pin_ox": nl.pin_ox.copy(), "pin_oy": nl.pin_oy.copy(), "size": nl.size}


def _xy():
    return {"netlist": _nl(), "x": np.linspace(0, 500, 8), "y": np.linspace(0, 400, 8)}


def _ep_results():
    path = Path(tempfile.mkdtemp(prefix="icml25-egplace-")) / "ep.csv"
    path.write_text("benchmark,hpwl,seconds,seed\nadaptec1,6.0e5,300,0\n")
    return {"path": str(path), "benchmarks": ("adaptec1",)}


def _guides():
    return _dec().random_guides(0)


CASES = [
    BadInputCase("Netlist", _netlist_kwargs, bad={"w": ARRAY, "h": ARRAY, "ref_x": ARRAY, "ref_y": ARRAY,
                                                  "pin_ox": ARRAY, "pin_oy": ARRAY, "size": POSITIVE}),
    BadInputCase("read_bookshelf", skip="takes a file path; malformed files are tested in test_netlist_and_wirelength"),
    BadInputCase("load_ibm01", skip="takes an optional file path; a missing file raises DataNotFoundError (tested)"),
    BadInputCase("write_bookshelf_pl", lambda: {**_xy(), "path": Path(tempfile.mkdtemp(prefix="icml25-egplace-")) / "out.pl"},
                 bad={"x": ARRAY, "y": ARRAY}),
    BadInputCase("synthetic_netlist", lambda: {"n_macros": 6, "utilisation": 0.3, "seed": 0, "size": 100.0},
                 bad={"n_macros": SIZE, "utilisation": PROB, "size": POSITIVE}),
    BadInputCase("hpwl", _xy, bad={"x": ARRAY, "y": ARRAY}),
    BadInputCase("overlap_area", _xy, bad={"x": ARRAY, "y": ARRAY}),
    BadInputCase("Canvas", lambda: {"grid": 16, "size": 100.0}, bad={"grid": SIZE, "size": POSITIVE}),
    BadInputCase("Layout", skip="a result container built by GreedyDecoder.decode, not from user numbers"),
    BadInputCase("SearchResult", skip="a result container built by the optimisers' run()"),
    BadInputCase("GreedyDecoder", lambda: {"netlist": _nl(), "canvas": _dec().canvas, "order": np.arange(8)},
                 bad={"order": ARRAY}),
    BadInputCase("GreedyDecoder.decode", lambda: {"guides": _guides()}, obj=_dec, bad={"guides": ARRAY}),
    BadInputCase("GreedyDecoder.decode_from", lambda: {"layout": _dec().decode(_guides()), "guides": _guides()},
                 obj=_dec, bad={"guides": ARRAY}),
    BadInputCase("GreedyDecoder.decode_loop", lambda: {"guides": _guides()}, obj=_dec, bad={"guides": ARRAY}),
    BadInputCase("rank_macros", skip="takes a Netlist, validated when the Netlist is built"),
    BadInputCase("loop_decode", lambda: {"netlist": _nl(), "canvas": _dec().canvas, "guides": _guides()},
                 bad={"guides": ARRAY}),
    BadInputCase("WireMaskRS", lambda: {"decoder": _dec(), "init_round": 2, "random_state": 0},
                 bad={"init_round": SIZE}),
    BadInputCase("WireMaskEA", lambda: {"decoder": _dec(), "init_round": 2, "random_state": 0, "masks": "loop"},
                 bad={"init_round": SIZE, "masks": TEXT}),
    BadInputCase("EGPlace", lambda: {"decoder": _dec(), "m": 2, "p_swap": 0.5, "init_round": 2, "random_state": 0},
                 bad={"m": SIZE, "p_swap": PROB, "init_round": SIZE}),
    BadInputCase("EGPlace.run", lambda: {"budget_evals": 4, "budget_seconds": 5.0},
                 obj=lambda: __import__("icml25.egplace", fromlist=["EGPlace"]).EGPlace(_dec(), init_round=2,
                                                                                        random_state=0),
                 bad={"budget_evals": SIZE, "budget_seconds": POSITIVE}),
    # malformed files (missing columns, non-positive numbers, unknown benchmarks) are tested in test_efficientplace
    BadInputCase("load_efficientplace_results", _ep_results, bad={"path": TEXT}),
]
