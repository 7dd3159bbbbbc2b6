"""EGPlace (ICML 2025): evolutionary macro placement with greedy-repositioning-guided mutation, incremental
layout reconstruction and fast mask computation, on the WireMask-BBO greedy decoder.

Library: :func:`read_bookshelf`, :func:`load_ibm01`, :func:`synthetic_netlist`, :func:`hpwl`,
:class:`GreedyDecoder`, and the optimisers :class:`WireMaskEA`, :class:`WireMaskRS`, :class:`EGPlace`;
:func:`load_efficientplace_results` reads the results of the user's own EfficientPlace run (the paper's RL baseline).
"""

from .data import load_efficientplace_results
from .decoder import Canvas, GreedyDecoder, Layout, loop_decode, rank_macros
from .netlist import (
    BookshelfError,
    Netlist,
    load_ibm01,
    read_bookshelf,
    synthetic_netlist,
    write_bookshelf_pl,
)
from .optimizers import EGPlace, SearchResult, WireMaskEA, WireMaskRS
from .wirelength import hpwl, overlap_area

__all__ = [
    "Netlist", "BookshelfError", "read_bookshelf", "write_bookshelf_pl", "synthetic_netlist", "load_ibm01",
    "hpwl", "overlap_area", "Canvas", "Layout", "GreedyDecoder", "rank_macros", "loop_decode",
    "WireMaskEA", "WireMaskRS", "EGPlace", "SearchResult", "load_efficientplace_results",
]
