"""The WireMask greedy decoder with EGPlace's fast masks, incremental re-decoding and repositioning gains.

A genotype gives every macro a *guide* cell on a G×G grid. The decoder places macros one by one in a fixed order
(descending "area_sum"), each at the legal cell that adds the least HPWL given the macros already placed (the wire
mask), ties broken by distance to the guide, then row-major order (spec §2.2). EGPlace's speed-ups (spec §2.4–2.5,
reconstructed): the wire mask is separable, W(a, b) = F(a) + H(b), computed with broadcasting over (pins ×
columns); legality comes from a summed-area table of the occupancy grid; decoding can resume at any step from a
cached state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int, check_positive

from .netlist import Netlist
from .wirelength import hpwl

__all__ = ["Canvas", "Layout", "GreedyDecoder", "rank_macros", "loop_decode"]

#: relative tolerance within which two wire-mask values count as a tie
TIE_RTOL = 1e-9


@dataclass(frozen=True)
class Canvas:
    """A square canvas of side ``size`` (layout units) cut into ``grid`` × ``grid`` cells of side ``size/grid``."""

    grid: int
    size: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "grid", check_int(self.grid, "grid", low=2))
        object.__setattr__(self, "size", check_positive(self.size, "size"))

    @property
    def cell(self) -> float:
        """Side of one grid cell."""
        return float(self.size) / int(self.grid)


@dataclass
class Layout:
    """A decoded layout: macro cells, HPWL and (for resuming) the decoder state before every step.

    Attributes
    ----------
    cells : (M, 2) int array
        Lower-left grid cell ``(a, b)`` of every macro (-1 when not placed: infeasible layout).
    x, y : (M,) float arrays
        Lower-left positions in layout units (``a * cell``).
    hpwl : float
        Total half-perimeter wirelength (``inf`` when infeasible).
    guides : (M, 2) int array
        The genotype that produced the layout.
    feasible : bool
    """

    cells: np.ndarray
    hpwl: float
    guides: np.ndarray
    feasible: bool
    cell_size: float
    #: per step t: (occupancy before step t, net bounding boxes before step t, HPWL so far); None if not cached
    states: list[tuple[np.ndarray, np.ndarray, float]] | None = field(default=None, repr=False)

    @property
    def x(self) -> np.ndarray:
        """Lower-left x of every macro (layout units)."""
        return self.cells[:, 0] * self.cell_size

    @property
    def y(self) -> np.ndarray:
        """Lower-left y of every macro (layout units)."""
        return self.cells[:, 1] * self.cell_size


def rank_macros(netlist: Netlist) -> np.ndarray:
    """Placement order: macros by descending area_sum = Σ over their nets of the summed area of the net's macros.

    Stable sort, so equal area_sums keep index order (WireMask ``rank_macros``).
    """
    area = netlist.w * netlist.h
    net_area = np.add.reduceat(area[netlist.pin_macro], netlist.net_ptr[:-1])
    area_sum = np.zeros(netlist.n_macros)
    np.add.at(area_sum, netlist.pin_macro, net_area[netlist.pin_net])
    return np.argsort(-area_sum, kind="stable")


def _pick(W: np.ndarray, guide: np.ndarray) -> tuple[int, int, float]:
    """Argmin of W (inf = illegal) with ties broken by squared distance to ``guide``, then row-major order."""
    wmin = W.min()
    if not np.isfinite(wmin):
        return -1, -1, float("inf")
    tie = np.argwhere(W <= wmin + TIE_RTOL * max(1.0, abs(wmin)))  # rows in row-major order
    d = (tie[:, 0] - guide[0]) ** 2 + (tie[:, 1] - guide[1]) ** 2
    a, b = tie[int(np.argmin(d))]
    return int(a), int(b), float(W[a, b])


class GreedyDecoder:
    """Decode guide genotypes into overlap-free layouts (WireMask greedy decoder, EGPlace fast masks).

    Parameters
    ----------
    netlist : Netlist
    canvas : Canvas
        Grid and canvas side; the canvas must hold every macro footprint (``ceil(w / cell) <= grid``).
    order : "area_sum" or (M,) int array
        Placement order.

    Examples
    --------
    >>> from icml25.egplace import synthetic_netlist, GreedyDecoder, Canvas, hpwl
    >>> nl = synthetic_netlist(12, 0.3, seed=0)
    >>> dec = GreedyDecoder(nl, Canvas(grid=16, size=nl.size))
    >>> lay = dec.decode(dec.random_guides(0))
    >>> bool(lay.feasible), abs(lay.hpwl - hpwl(nl, lay.x, lay.y)) < 1e-6 * lay.hpwl
    (True, True)
    """

    def __init__(self, netlist: Netlist, canvas: Canvas, order: Any = "area_sum") -> None:
        if not isinstance(netlist, Netlist):
            raise TypeError(f"netlist must be a Netlist, got {type(netlist).__name__}")
        if not isinstance(canvas, Canvas):
            raise TypeError(f"canvas must be a Canvas, got {type(canvas).__name__}")
        self.netlist, self.canvas = netlist, canvas
        G, s = int(canvas.grid), canvas.cell
        self.G = G
        self.fw = np.ceil(netlist.w / s - 1e-9).astype(np.int64)
        self.fh = np.ceil(netlist.h / s - 1e-9).astype(np.int64)
        too_big = np.flatnonzero((self.fw > G) | (self.fh > G))
        if len(too_big):
            i = int(too_big[0])
            raise ValueError(f"macro {netlist.names[i]!r} ({netlist.w[i]:g} x {netlist.h[i]:g}) does not fit the "
                             f"canvas of side {canvas.size:g}; enlarge size or check the units")
        M = netlist.n_macros
        if isinstance(order, str):
            if order != "area_sum":
                raise ValueError(f"order must be 'area_sum' or a permutation of range({M}), got {order!r}")
            self.order = rank_macros(netlist)
        else:
            o = check_array(order, "order", shape=(M,), dtype=np.int64)
            if not np.array_equal(np.sort(o), np.arange(M)):
                raise ValueError(f"order must be a permutation of range({M})")
            self.order = o
        self.position = np.empty(M, dtype=np.int64)
        self.position[self.order] = np.arange(M)
        # pins of every macro (CSR over macros): net and offset from the macro's lower-left corner
        pin_net = netlist.pin_net
        by_macro = np.argsort(netlist.pin_macro, kind="stable")
        self._mptr = np.concatenate([[0], np.cumsum(np.bincount(netlist.pin_macro, minlength=M))])
        self._mnet = pin_net[by_macro]
        self._mdx = (netlist.w / 2)[netlist.pin_macro][by_macro] + netlist.pin_ox[by_macro]
        self._mdy = (netlist.h / 2)[netlist.pin_macro][by_macro] + netlist.pin_oy[by_macro]
        self._cols = np.arange(G) * s

    # -- genotypes ----------------------------------------------------------------------------------------------
    def random_guides(self, seed: Any = None) -> np.ndarray:
        """(M, 2) guide cells drawn uniformly over the grid."""
        rng = np.random.default_rng(seed)
        return rng.integers(0, self.G, size=(self.netlist.n_macros, 2))

    def _check_guides(self, guides: Any) -> np.ndarray:
        g = check_array(guides, "guides", shape=(self.netlist.n_macros, 2), dtype=np.int64)
        if g.min() < 0 or g.max() >= self.G:
            raise ValueError(f"guides must be grid cells in [0, {self.G}), got values in [{g.min()}, {g.max()}]")
        return g

    # -- masks --------------------------------------------------------------------------------------------------
    def _legal(self, occ: np.ndarray, fw: int, fh: int) -> np.ndarray:
        """(G-fw+1, G-fh+1) bool: footprint fits without overlapping occupied cells (summed-area table)."""
        S = np.zeros((self.G + 1, self.G + 1), dtype=np.int32)
        np.cumsum(np.cumsum(occ, axis=0, dtype=np.int32), axis=1, out=S[1:, 1:])
        blocked = S[fw:, fh:] - S[:-fw, fh:] - S[fw:, :-fh] + S[:-fw, :-fh]
        return blocked == 0

    def _wire(self, i: int, box: np.ndarray, fw: int, fh: int) -> np.ndarray:
        """(G-fw+1, G-fh+1) HPWL increase of placing macro i at every cell, given net boxes ``box`` (E, 4)."""
        lo, hi = self._mptr[i], self._mptr[i + 1]
        nets = self._mnet[lo:hi]
        b = box[nets]
        placed = np.isfinite(b[:, 0])
        na, nb = self.G - fw + 1, self.G - fh + 1
        if not placed.any():
            return np.zeros((na, nb))
        b = b[placed]
        X = self._cols[None, :na] + self._mdx[lo:hi][placed][:, None]
        Y = self._cols[None, :nb] + self._mdy[lo:hi][placed][:, None]
        F = (np.maximum(0.0, b[:, 0:1] - X) + np.maximum(0.0, X - b[:, 1:2])).sum(0)
        H = (np.maximum(0.0, b[:, 2:3] - Y) + np.maximum(0.0, Y - b[:, 3:4])).sum(0)
        return F[:, None] + H[None, :]

    def cell_costs(self, i: int, occ: np.ndarray, box: np.ndarray) -> np.ndarray:
        """(G-fw+1, G-fh+1) wire mask of macro ``i`` with illegal cells set to ``inf`` (spec §2.4)."""
        fw, fh = int(self.fw[i]), int(self.fh[i])
        W = self._wire(i, box, fw, fh)
        W[~self._legal(occ, fw, fh)] = np.inf
        return W

    def _place(self, i: int, a: int, b: int, occ: np.ndarray, box: np.ndarray) -> None:
        occ[a:a + self.fw[i], b:b + self.fh[i]] = 1
        lo, hi = self._mptr[i], self._mptr[i + 1]
        nets = self._mnet[lo:hi]
        px = a * self.canvas.cell + self._mdx[lo:hi]
        py = b * self.canvas.cell + self._mdy[lo:hi]
        box[nets, 0] = np.fmin(box[nets, 0], px)  # fmin/fmax treat the +-inf of an empty box correctly
        box[nets, 1] = np.fmax(box[nets, 1], px)
        box[nets, 2] = np.fmin(box[nets, 2], py)
        box[nets, 3] = np.fmax(box[nets, 3], py)

    def _empty_state(self) -> tuple[np.ndarray, np.ndarray]:
        E = self.netlist.n_nets
        box = np.empty((E, 4))
        box[:, [0, 2]] = np.inf
        box[:, [1, 3]] = -np.inf
        return np.zeros((self.G, self.G), dtype=np.int8), box

    # -- decoding -----------------------------------------------------------------------------------------------
    def decode(self, guides: Any, cache: bool = True) -> Layout:
        """Decode a genotype ``guides`` ((M, 2) int cells) into a :class:`Layout` (spec §2.2).

        With ``cache=True`` the decoder state before every step is kept so that :meth:`decode_from` can resume.
        """
        g = self._check_guides(guides)
        occ, box = self._empty_state()
        cells = -np.ones((self.netlist.n_macros, 2), dtype=np.int64)
        return self._run(g, 0, occ, box, 0.0, cells, [] if cache else None)

    def decode_from(self, layout: Layout, guides: Any, t0: int | None = None) -> Layout:
        """Re-decode ``guides`` reusing ``layout``'s cached prefix (spec §2.5, reconstructed).

        ``t0`` is the first step whose macro's guide changed (computed when None). Steps before ``t0`` depend only
        on unchanged guides, so their state is restored from the cache; the result equals :meth:`decode`.
        """
        if not isinstance(layout, Layout) or layout.states is None:
            raise ValueError("layout must be a Layout decoded with cache=True")
        g = self._check_guides(guides)
        changed = np.flatnonzero(np.any(g != layout.guides, axis=1))
        first = int(self.position[changed].min()) if len(changed) else self.netlist.n_macros
        t0 = first if t0 is None else min(check_int(t0, "t0", low=0), first)
        # states[t] is the state before step t; an infeasible layout stopped early, so resume at most at its last
        t0 = min(t0, len(layout.states) - 1)
        if t0 <= 0:
            return self.decode(g)
        occ, box, h = layout.states[t0]
        cells = layout.cells.copy()
        cells[self.order[t0:]] = -1
        return self._run(g, t0, occ.copy(), box.copy(), h, cells, list(layout.states[:t0]))

    def _run(self, g: np.ndarray, t0: int, occ: np.ndarray, box: np.ndarray, h: float, cells: np.ndarray,
             states: list | None) -> Layout:
        for t in range(t0, self.netlist.n_macros):
            i = int(self.order[t])
            if states is not None:
                states.append((occ.copy(), box.copy(), h))
            a, b, inc = _pick(self.cell_costs(i, occ, box), g[i])
            if a < 0:
                return Layout(cells=cells, hpwl=float("inf"), guides=g.copy(), feasible=False,
                              cell_size=self.canvas.cell, states=states)
            cells[i] = (a, b)
            h += inc
            self._place(i, a, b, occ, box)
        return Layout(cells=cells, hpwl=float(h), guides=g.copy(), feasible=True, cell_size=self.canvas.cell,
                      states=states)

    def decode_loop(self, guides: Any) -> Layout:
        """Decode ``guides`` with WireMask-BBO's loop masks (:func:`loop_cell_costs`), as its official code does.

        The same cells and HPWL as :meth:`decode` (the masks have the same argmins), at the cost of the official
        implementation: Python loops over the placed macros (legality) and over the grid columns of every net (wire
        mask), and a full decode every time (no cached states, so no :meth:`decode_from`). Used to run and time
        WireMask-EA as the paper ran it (``WireMaskEA(..., masks="loop")``).
        """
        g = self._check_guides(guides)
        cells, total = _loop_run(self, g)
        feasible = bool(np.isfinite(total))
        return Layout(cells=cells, hpwl=float(total), guides=g.copy(), feasible=feasible, cell_size=self.canvas.cell,
                      states=None)

    # -- repositioning analysis (spec §2.6, reconstructed) ---------------------------------------------------------
    def reposition_gains(self, layout: Layout) -> tuple[np.ndarray, np.ndarray]:
        """For every macro, the HPWL saved by moving it alone to its best legal cell, all others fixed.

        Returns ``(gains (M,), best_cells (M, 2))``; gains are >= 0 (0 when the macro already sits at a best cell;
        ties prefer the current cell).
        """
        if not isinstance(layout, Layout) or not layout.feasible:
            raise ValueError("reposition_gains needs a feasible Layout")
        nl, M = self.netlist, self.netlist.n_macros
        occ = np.zeros((self.G, self.G), dtype=np.int16)
        for i in range(M):
            a, b = layout.cells[i]
            occ[a:a + self.fw[i], b:b + self.fh[i]] += 1
        s = self.canvas.cell
        px = layout.cells[nl.pin_macro, 0] * s + nl.w[nl.pin_macro] / 2 + nl.pin_ox
        py = layout.cells[nl.pin_macro, 1] * s + nl.h[nl.pin_macro] / 2 + nl.pin_oy
        gains, best = np.zeros(M), layout.cells.copy()
        for i in range(M):
            a0, b0 = layout.cells[i]
            fw, fh = int(self.fw[i]), int(self.fh[i])
            occ[a0:a0 + fw, b0:b0 + fh] -= 1
            box = self._other_pins_box(i, px, py)
            W = self._wire(i, box, fw, fh)
            W[~self._legal((occ > 0).astype(np.int8), fw, fh)] = np.inf
            a, b, wmin = _pick(W, np.array([a0, b0]))
            gains[i] = max(0.0, W[a0, b0] - wmin)
            if gains[i] > 0:
                best[i] = (a, b)
            occ[a0:a0 + fw, b0:b0 + fh] += 1
        return gains, best

    def _other_pins_box(self, i: int, px: np.ndarray, py: np.ndarray) -> np.ndarray:
        """Net boxes (E, 4) of the pins not on macro ``i`` (only the nets of ``i`` are filled)."""
        nl = self.netlist
        box = np.empty((nl.n_nets, 4))
        box[:, [0, 2]] = np.inf
        box[:, [1, 3]] = -np.inf
        for e in self._mnet[self._mptr[i]:self._mptr[i + 1]]:
            lo, hi = nl.net_ptr[e], nl.net_ptr[e + 1]
            keep = nl.pin_macro[lo:hi] != i
            if keep.any():
                xs, ys = px[lo:hi][keep], py[lo:hi][keep]
                box[e] = (xs.min(), xs.max(), ys.min(), ys.max())
        return box


def loop_decode(netlist: Netlist, canvas: Canvas, guides: Any, order: Any = "area_sum") -> tuple[np.ndarray, float]:
    """Reference decoder written the way WireMask-BBO's is: masks stamped and summed with Python loops.

    Independent of :class:`GreedyDecoder`'s vectorised masks (only the order and tie rule are shared), it exists to
    test and benchmark them. Returns ``(cells (M, 2), hpwl)``; cells are -1 and hpwl inf when infeasible.
    """
    dec = GreedyDecoder(netlist, canvas, order)
    return _loop_run(dec, dec._check_guides(guides))


def _loop_run(dec: GreedyDecoder, g: np.ndarray) -> tuple[np.ndarray, float]:
    """Decode the checked genotype ``g`` with the loop masks of :func:`loop_cell_costs` (a full decode, no cache)."""
    s, M = dec.canvas.cell, dec.netlist.n_macros
    cells = -np.ones((M, 2), dtype=np.int64)
    boxes: dict[int, list[float]] = {}
    total = 0.0
    for i in dec.order:
        W = loop_cell_costs(dec, int(i), cells, boxes)
        a, b, inc = _pick(W, g[i])
        if a < 0:
            return cells, float("inf")
        cells[i] = (a, b)
        total += inc
        for k in range(dec._mptr[i], dec._mptr[i + 1]):
            e = int(dec._mnet[k])
            x, y = a * s + dec._mdx[k], b * s + dec._mdy[k]
            if e not in boxes:
                boxes[e] = [x, x, y, y]
            else:
                bx = boxes[e]
                boxes[e] = [min(bx[0], x), max(bx[1], x), min(bx[2], y), max(bx[3], y)]
    return cells, total


def loop_cell_costs(dec: GreedyDecoder, i: int, cells: np.ndarray, boxes: dict[int, list[float]]) -> np.ndarray:
    """The wire mask of macro ``i`` built the WireMask way (loop over placed macros and over columns per net)."""
    G, s = dec.G, dec.canvas.cell
    fw, fh = int(dec.fw[i]), int(dec.fh[i])
    na, nb = G - fw + 1, G - fh + 1
    illegal = np.zeros((na, nb), dtype=bool)
    for j in np.flatnonzero(cells[:, 0] >= 0):  # stamp every placed macro's exclusion rectangle
        aj, bj = cells[j]
        illegal[max(0, aj - fw + 1):min(na, aj + dec.fw[j]), max(0, bj - fh + 1):min(nb, bj + dec.fh[j])] = True
    F = np.zeros(na)
    H = np.zeros(nb)
    for k in range(dec._mptr[i], dec._mptr[i + 1]):
        e = int(dec._mnet[k])
        if e not in boxes:
            continue
        xmin, xmax, ymin, ymax = boxes[e]
        for a in range(na):
            X = a * s + dec._mdx[k]
            F[a] += max(0.0, xmin - X) + max(0.0, X - xmax)
        for b in range(nb):
            Y = b * s + dec._mdy[k]
            H[b] += max(0.0, ymin - Y) + max(0.0, Y - ymax)
    W = F[:, None] + H[None, :]
    W[illegal] = np.inf
    return W


def layout_hpwl(netlist: Netlist, layout: Layout) -> float:
    """HPWL of a layout recomputed from positions (``inf`` when infeasible)."""
    if not layout.feasible:
        return float("inf")
    return hpwl(netlist, layout.x, layout.y)
