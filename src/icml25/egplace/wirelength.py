"""Half-perimeter wirelength and overlap of macro layouts, vectorised over CSR nets (spec §2.1)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.validation import check_array

from .netlist import Netlist

__all__ = ["hpwl", "overlap_area"]


def hpwl(netlist: Netlist, x: Any, y: Any) -> float:
    """Total HPWL ``Σ_e (max x_p − min x_p) + (max y_p − min y_p)`` over the macro-only nets.

    Parameters
    ----------
    netlist : Netlist
    x, y : (M,) arrays
        Lower-left macro positions (layout units); pin ``p`` sits at the macro centre plus its offset.

    Returns
    -------
    float
        The wirelength in layout units (WireMask ``cal_hpwl``).
    """
    M = netlist.n_macros
    x = check_array(x, "x", shape=(M,))
    y = check_array(y, "y", shape=(M,))
    px = (x + netlist.w / 2)[netlist.pin_macro] + netlist.pin_ox
    py = (y + netlist.h / 2)[netlist.pin_macro] + netlist.pin_oy
    starts = netlist.net_ptr[:-1]
    span_x = np.maximum.reduceat(px, starts) - np.minimum.reduceat(px, starts)
    span_y = np.maximum.reduceat(py, starts) - np.minimum.reduceat(py, starts)
    return float(span_x.sum() + span_y.sum())


def overlap_area(netlist: Netlist, x: Any, y: Any) -> float:
    """Total pairwise overlap area of the macros' rectangles (0 for a legal layout), O(M²) vectorised."""
    M = netlist.n_macros
    x = check_array(x, "x", shape=(M,))
    y = check_array(y, "y", shape=(M,))
    ox = np.minimum(x[:, None] + netlist.w[:, None], x[None] + netlist.w[None]) - np.maximum(x[:, None], x[None])
    oy = np.minimum(y[:, None] + netlist.h[:, None], y[None] + netlist.h[None]) - np.maximum(y[:, None], y[None])
    area = np.clip(ox, 0, None) * np.clip(oy, 0, None)
    return float(np.triu(area, k=1).sum())
