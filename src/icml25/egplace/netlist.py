"""Macro netlists: the bookshelf reader/writer, a synthetic generator and the shipped ibm01 benchmark.

A :class:`Netlist` holds only what macro placement needs (WireMask-BBO conventions, spec §2.1): the macros'
sizes and reference positions, and the macro-only nets as CSR arrays of pins ``(macro, ox, oy)`` where ``(ox, oy)``
is the pin's offset from the macro centre. Nets with fewer than two distinct macros are dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int, check_real

from .bookshelf import BookshelfError, read_aux, read_nets, read_nodes, read_pl, read_scl

__all__ = ["Netlist", "read_bookshelf", "write_bookshelf_pl", "synthetic_netlist", "load_ibm01", "BookshelfError"]


@dataclass
class Netlist:
    """Macros and macro-only nets of a placement instance.

    Attributes
    ----------
    names : list of str, length M
    w, h : (M,) float arrays
        Macro widths and heights (layout units).
    ref_x, ref_y : (M,) float arrays
        Lower-left reference positions (from the ``.pl`` file; zeros for synthetic instances).
    net_ptr : (E+1,) int array
        CSR pointer: the pins of net ``e`` are ``net_ptr[e]:net_ptr[e+1]``.
    pin_macro : (P,) int array
        Macro index of every pin.
    pin_ox, pin_oy : (P,) float arrays
        Pin offsets from the macro centre.
    size : float
        Side of the square canvas (layout units).
    name : str
        Instance name.
    """

    names: list[str]
    w: np.ndarray
    h: np.ndarray
    ref_x: np.ndarray
    ref_y: np.ndarray
    net_ptr: np.ndarray
    pin_macro: np.ndarray
    pin_ox: np.ndarray
    pin_oy: np.ndarray
    size: float
    name: str = "netlist"
    net_names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if isinstance(self.names, str) or not all(isinstance(n, str) for n in self.names):
            raise TypeError("names must be a list of macro names (str)")
        M = len(self.names)
        if M == 0:
            raise ValueError("names must name at least one macro")
        for arr_name in ("w", "h"):
            arr = check_array(getattr(self, arr_name), arr_name, shape=(M,))
            if np.any(arr <= 0):
                raise ValueError(f"{arr_name} must hold positive macro sizes, got min {arr.min()}")
            setattr(self, arr_name, arr)
        self.ref_x = check_array(self.ref_x, "ref_x", shape=(M,))
        self.ref_y = check_array(self.ref_y, "ref_y", shape=(M,))
        self.net_ptr = check_array(self.net_ptr, "net_ptr", ndim=1, dtype=np.int64, min_size=2)
        self.pin_macro = check_array(self.pin_macro, "pin_macro", ndim=1, dtype=np.int64)
        P = len(self.pin_macro)
        self.pin_ox = check_array(self.pin_ox, "pin_ox", shape=(P,))
        self.pin_oy = check_array(self.pin_oy, "pin_oy", shape=(P,))
        if self.net_ptr.ndim != 1 or self.net_ptr[0] != 0 or self.net_ptr[-1] != P or np.any(np.diff(self.net_ptr) < 1):
            raise ValueError("net_ptr must be a CSR pointer from 0 to the number of pins, every net non-empty")
        if self.pin_macro.min() < 0 or self.pin_macro.max() >= M:
            raise ValueError(f"pin_macro must index the {M} macros, got values in "
                             f"[{self.pin_macro.min()}, {self.pin_macro.max()}]")
        self.size = check_real(self.size, "size", low=0.0, low_open=True)

    @property
    def n_macros(self) -> int:
        """Number of macros M."""
        return len(self.names)

    @property
    def n_nets(self) -> int:
        """Number of macro-only nets E."""
        return len(self.net_ptr) - 1

    @property
    def pin_net(self) -> np.ndarray:
        """(P,) net index of every pin."""
        return np.repeat(np.arange(self.n_nets), np.diff(self.net_ptr))

    @property
    def utilisation(self) -> float:
        """Total macro area over canvas area."""
        return float(np.sum(self.w * self.h) / self.size**2)


def read_bookshelf(aux_path: str | Path, macro_rule: str = "terminals") -> Netlist:
    """Read a bookshelf benchmark (``.aux`` naming ``.nodes/.nets/.pl/.scl/.wts``) as a macro netlist.

    Parameters
    ----------
    aux_path : path
        The ``.aux`` file.
    macro_rule : {"terminals", "taller_than_rows"}
        Which nodes are macros: ``"terminals"`` (ISPD2005, the WireMask/MaskPlace convention: nodes flagged
        ``terminal``) or ``"taller_than_rows"`` (IBM-MS: non-terminal nodes taller than the row height).

    Returns
    -------
    Netlist
        Macro-only nets (pins on macros; nets with < 2 distinct macros dropped; one pin per macro per net). The
        canvas side is the largest extent of the terminals in the ``.pl`` (``"terminals"``) or of the core rows
        (``"taller_than_rows"``), and at least the largest macro extent.

    Raises
    ------
    FileNotFoundError, BookshelfError
        Missing files, or malformed lines (the one-line message names file and line and what was expected).

    Notes
    -----
    The files are read as real tools write them (:mod:`icml25.egplace.bookshelf`: keywords in any case such as
    ``NumSites``/``Numsites``, ``#`` comments, CRLF, tabs, optional fields). Only the files the rule needs are
    required and parsed: ``.nodes``, ``.nets`` and ``.pl`` always, the ``.scl`` only for ``"taller_than_rows"``,
    the ``.wts`` never. The ``.pl`` must give a position to every macro (and, under ``"terminals"``, every
    terminal). A malformed file always raises: a partial netlist is never returned.
    """
    if macro_rule not in ("terminals", "taller_than_rows"):
        raise ValueError(f"macro_rule must be 'terminals' or 'taller_than_rows', got {macro_rule!r}")
    aux = Path(aux_path)
    if aux.is_dir():
        raise BookshelfError(f"{aux}: is a directory, expected the bookshelf .aux file")
    if not aux.is_file():
        raise FileNotFoundError(f"bookshelf .aux file not found: {aux}; expected an existing .aux file")
    files = read_aux(aux)
    scl = None
    if macro_rule == "taller_than_rows":  # the only rule that needs the rows; .wts is never needed
        if files.scl is None:
            raise BookshelfError(f"{aux}: macro_rule='taller_than_rows' needs the .scl file for the row height; "
                                 f"expected the .aux file to name one")
        scl = read_scl(files.scl)
    names, w, h, term, node_lines = read_nodes(files.nodes)
    index = {n: i for i, n in enumerate(names)}
    if macro_rule == "terminals":
        is_macro = term
    else:
        assert scl is not None
        is_macro = (~term) & (h > scl[0])
    xy = read_pl(files.pl, index, is_macro, names)
    if macro_rule == "terminals":
        size = float(np.max(np.maximum(xy[term, 0] + w[term], xy[term, 1] + h[term]))) if term.any() else 0.0
    else:
        assert scl is not None
        size = scl[1]
    macros = np.flatnonzero(is_macro)
    if len(macros) == 0:
        rule = "flagged 'terminal'" if macro_rule == "terminals" else "taller than the rows"
        raise BookshelfError(f"{files.nodes}: no macros found under macro_rule={macro_rule!r}; expected nodes {rule}")
    flat = macros[(w[macros] <= 0) | (h[macros] <= 0)]
    if len(flat):
        m = int(flat[0])
        raise BookshelfError(f"{files.nodes}:{node_lines[m]}: macro {names[m]!r} has size {w[m]:g} x {h[m]:g}; "
                             f"expected a positive width and height")
    size = max(size, float(np.max(w[macros])), float(np.max(h[macros])))
    new_index = -np.ones(len(names), dtype=np.int64)
    new_index[macros] = np.arange(len(macros))
    ptr, pm, pox, poy, net_names = [0], [], [], [], []
    for net_name, pins in read_nets(files.nets, index):
        seen: dict[int, tuple[float, float]] = {}
        for node, ox, oy in pins:
            j = int(new_index[node])
            if j >= 0 and j not in seen:
                seen[j] = (ox, oy)
        if len(seen) < 2:
            continue
        for j, (ox, oy) in seen.items():
            pm.append(j)
            pox.append(ox)
            poy.append(oy)
        ptr.append(len(pm))
        net_names.append(net_name)
    if len(ptr) < 2:
        raise BookshelfError(f"{files.nets}: no net joins two macros (of {len(macros)}); expected nets between "
                             f"the macros of macro_rule={macro_rule!r}")
    for no_name, (mw, mh) in ((names[m], (w[m], h[m])) for m in macros):
        if mw > size or mh > size:
            raise BookshelfError(f"{files.nodes}: macro {no_name!r} ({mw} x {mh}) is larger than the canvas {size}; "
                                 f"expected macros that fit the core")
    return Netlist(names=[names[m] for m in macros], w=w[macros], h=h[macros], ref_x=xy[macros, 0],
                   ref_y=xy[macros, 1], net_ptr=np.array(ptr), pin_macro=np.array(pm, dtype=np.int64),
                   pin_ox=np.array(pox), pin_oy=np.array(poy), size=size, name=aux.stem, net_names=net_names)


def write_bookshelf_pl(netlist: Netlist, x: Any, y: Any, path: str | Path, overwrite: bool = False) -> Path:
    """Write macro lower-left positions ``x, y`` (layout units, shape (M,)) as a bookshelf ``.pl`` file.

    Macros are written ``/FIXED`` so that a downstream standard-cell placer keeps them. Refuses to overwrite an
    existing file unless ``overwrite=True``.
    """
    M = netlist.n_macros
    x = check_array(x, "x", shape=(M,))
    y = check_array(y, "y", shape=(M,))
    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; pass overwrite=True or choose another path")
    lines = ["UCLA pl 1.0", f"# macro placement of {netlist.name} written by icml25.egplace", ""]
    lines += [f"{n}\t{xi:.4f}\t{yi:.4f}\t: N /FIXED" for n, xi, yi in zip(netlist.names, x, y)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def synthetic_netlist(n_macros: int = 30, utilisation: float = 0.4, seed: int = 0, size: float = 1000.0,
                      mean_extra_degree: float = 1.5) -> Netlist:
    """A synthetic macro netlist with local connectivity, so that good layouts exist (spec §5).

    Macro sides are log-uniform in [0.02, 0.15] × ``size`` and rescaled to the target ``utilisation`` (macro area
    over canvas area). Each macro has a hidden 2-D embedding; a net of degree 2 + Poisson(``mean_extra_degree``)
    joins a random macro with its nearest neighbours in that embedding. Pins sit at macro centres plus a random
    offset within the macro.
    """
    n_macros = check_int(n_macros, "n_macros", low=2)
    utilisation = check_real(utilisation, "utilisation", low=0.0, high=0.8, low_open=True)
    size = check_real(size, "size", low=0.0, low_open=True)
    mean_extra_degree = check_real(mean_extra_degree, "mean_extra_degree", low=0.0)
    rng = np.random.default_rng(check_int(seed, "seed", low=0))
    w = size * np.exp(rng.uniform(np.log(0.02), np.log(0.15), n_macros))
    h = size * np.exp(rng.uniform(np.log(0.02), np.log(0.15), n_macros))
    scale = math.sqrt(utilisation * size**2 / float(np.sum(w * h)))
    w, h = np.minimum(w * scale, 0.5 * size), np.minimum(h * scale, 0.5 * size)
    emb = rng.uniform(size=(n_macros, 2))
    dist = np.linalg.norm(emb[:, None] - emb[None], axis=2)
    near = np.argsort(dist, axis=1)
    ptr, pm, pox, poy = [0], [], [], []
    n_nets = int(round(1.5 * n_macros))
    for _ in range(n_nets):
        deg = min(n_macros, 2 + int(rng.poisson(mean_extra_degree)))
        root = int(rng.integers(n_macros))
        members = near[root, : min(n_macros, deg + 2)]
        members = rng.choice(members, size=deg, replace=False)
        for j in members:
            pm.append(int(j))
            pox.append(float(rng.uniform(-0.4, 0.4) * w[j]))
            poy.append(float(rng.uniform(-0.4, 0.4) * h[j]))
        ptr.append(len(pm))
    return Netlist(names=[f"m{i}" for i in range(n_macros)], w=w, h=h, ref_x=np.zeros(n_macros),
                   ref_y=np.zeros(n_macros), net_ptr=np.array(ptr), pin_macro=np.array(pm), pin_ox=np.array(pox),
                   pin_oy=np.array(poy), size=size, name=f"synthetic-M{n_macros}-u{utilisation:g}-s{seed}")


def load_ibm01(path: str | Path | None = None) -> Netlist:
    """The IBM-MS ibm01 mixed-size benchmark (246 macros, 908 macro-only nets), shipped with icml25.

    ``path`` may name a user copy of ``ibm01.aux``; otherwise the shipped copy is read (see ``data/SOURCE.md``).
    """
    from icml25.core.data import resolve_data

    aux = Path(path) if path is not None else resolve_data("egplace", "ibm01/ibm01.aux")
    return read_bookshelf(aux, macro_rule="taller_than_rows")
