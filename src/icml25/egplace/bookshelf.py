"""Tolerant readers of the UCLA bookshelf placement files (``.aux .nodes .nets .pl .scl``), as real tools write them.

What is accepted (ISPD2005, IBM-MS/ICCAD'04, DREAMPlace, NTUplace and Capo outputs): keywords in any case
(``NumNodes``/``numnodes``, ``NumSites``/``Numsites``, ``CoreRow Horizontal``, ``End`` ...), ``:`` with or without
spaces, ``#`` comments anywhere on a line, CRLF or LF line endings, tabs, ``UCLA <kind> 1.0`` headers, a UTF-8 byte
order mark, and optional fields (the ``terminal``/``terminal_NI`` flag, the net name after ``NetDegree``, the pin
direction and offsets, the orientation and ``/FIXED`` flags of a ``.pl`` line, the site fields of a row). The
``Num...`` header counts are optional; when present they must match what the file lists (a truncated file is caught).
The ``.scl`` keywords the reader does not use (``Sitewidth``, ``Siteorient``, ``Sitesymmetry``) are skipped; any
other line of a ``.scl`` is an error.

Every error is a :class:`BookshelfError` (a ``ValueError``) whose one-line message is ``<file>:<line>: expected ...,
got ...`` (or ``<file>: ...`` when no single line is at fault).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["BookshelfError", "BookshelfFiles", "read_aux", "read_nodes", "read_pl", "read_nets", "read_scl"]

#: longest excerpt of an offending line quoted in an error message
_SNIP = 60
#: the keywords of a ``.scl`` file (any case)
_SCL_KEYS = {"numrows", "corerow", "coordinate", "height", "sitewidth", "sitespacing", "siteorient", "sitesymmetry",
             "subroworigin", "end"}
#: the ``<kind>`` of a ``UCLA <kind> 1.0`` header line
_KINDS = {"aux", "nodes", "nets", "wts", "pl", "scl", "shapes", "route"}


class BookshelfError(ValueError):
    """A malformed bookshelf file; the message names the file and the line."""


def _snip(tokens: list[str] | str) -> str:
    text = tokens if isinstance(tokens, str) else " ".join(tokens)
    return repr(text if len(text) <= _SNIP else text[:_SNIP] + "...")


def _lines(path: Path, what: str) -> list[tuple[int, list[str]]]:
    """Non-empty lines of a bookshelf file without comments and ``UCLA`` headers, as (line number, tokens).

    ``:`` is always its own token (``NumNodes:5`` -> ``['NumNodes', ':', '5']``).
    """
    if path.is_dir():
        raise BookshelfError(f"{path}: is a directory, expected the bookshelf {what} file")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file; expected the bookshelf {what} file {path.name!r} "
                                f"next to the .aux file")
    raw = path.read_bytes()
    if b"\x00" in raw:
        no = raw[: raw.index(b"\x00")].count(b"\n") + 1
        raise BookshelfError(f"{path}:{no}: NUL byte (UTF-16 or binary file?); expected a plain-text {what} file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:  # a Latin-1 comment or name: every byte is a character
        text = raw.decode("latin-1")
    out = []
    for no, line in enumerate(text.splitlines(), start=1):
        tok = line.split("#", 1)[0].replace(":", " : ").split()
        if tok and not (tok[0].upper() == "UCLA" and len(tok) >= 2 and tok[1].lower() in _KINDS):
            out.append((no, tok))
    return out


def _num(tok: str, path: Path, no: int, what: str) -> float:
    try:
        v = float(tok)
    except ValueError:
        raise BookshelfError(f"{path}:{no}: expected a number for {what}, got {_snip(tok)}") from None
    if not math.isfinite(v):
        raise BookshelfError(f"{path}:{no}: {what} must be finite, got {tok!r}; expected a number")
    return v


def _count(tok: list[str], path: Path, no: int) -> int:
    """The value of a ``Keyword : n`` line."""
    if len(tok) != 3 or tok[1] != ":":
        raise BookshelfError(f"{path}:{no}: expected '{tok[0]} : <count>', got {_snip(tok)}")
    v = _num(tok[2], path, no, tok[0])
    if v < 0 or v != int(v):
        raise BookshelfError(f"{path}:{no}: expected a non-negative integer for {tok[0]}, got {tok[2]!r}")
    return int(v)


def _is_key(tok: list[str], *keys: str) -> bool:
    """Whether the line is ``<key> : ...`` for one of ``keys`` (case-insensitive)."""
    return len(tok) >= 2 and tok[1] == ":" and tok[0].lower() in keys


def _check_declared(path: Path, declared: tuple[int, int] | None, found: int, what: str) -> None:
    if declared is not None and declared[1] != found:
        raise BookshelfError(f"{path}:{declared[0]}: the header declares {declared[1]} {what} but the file lists "
                             f"{found} (truncated?); expected the counts to match")


@dataclass
class BookshelfFiles:
    """The files an ``.aux`` names (absolute paths; ``scl`` and ``wts`` may be None)."""

    aux: Path
    nodes: Path
    nets: Path
    pl: Path
    scl: Path | None = None
    wts: Path | None = None
    line: dict[str, int] = field(default_factory=dict)


def read_aux(aux: Path) -> BookshelfFiles:
    """Read ``RowBasedPlacement : x.nodes x.nets x.wts x.pl x.scl`` (file order free; the kind token optional)."""
    lines = _lines(aux, ".aux")
    expect = "'RowBasedPlacement : x.nodes x.nets x.wts x.pl x.scl'"
    if not lines:
        raise BookshelfError(f"{aux}: empty .aux file; expected {expect}")
    files: dict[str, Path] = {}
    where: dict[str, int] = {}
    for no, tok in lines:
        for t in tok:
            suffix = Path(t).suffix.lower()
            if suffix in (".nodes", ".nets", ".wts", ".pl", ".scl") and suffix[1:] not in files:
                files[suffix[1:]] = aux.parent / t
                where[suffix[1:]] = no
    for need in ("nodes", "nets", "pl"):
        if need not in files:
            raise BookshelfError(f"{aux}:{lines[0][0]}: the .aux file names no .{need} file; expected {expect}")
    return BookshelfFiles(aux, files["nodes"], files["nets"], files["pl"], files.get("scl"), files.get("wts"), where)


def read_nodes(path: Path) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """``name width height [terminal|terminal_NI]`` lines: names, widths, heights, terminal flags, line numbers."""
    names, w, h, term, nos = [], [], [], [], []
    n_nodes = n_term = None
    for no, tok in _lines(path, ".nodes"):
        if _is_key(tok, "numnodes"):
            n_nodes = (no, _count(tok, path, no))
            continue
        if _is_key(tok, "numterminals"):
            n_term = (no, _count(tok, path, no))
            continue
        if len(tok) < 3 or ":" in tok:
            raise BookshelfError(f"{path}:{no}: expected 'name width height [terminal]', got {_snip(tok)}")
        wi, hi = _num(tok[1], path, no, "width"), _num(tok[2], path, no, "height")
        if wi < 0 or hi < 0:
            raise BookshelfError(f"{path}:{no}: expected a non-negative width and height, got {_snip(tok)}")
        names.append(tok[0])
        w.append(wi)
        h.append(hi)
        term.append(len(tok) > 3 and tok[3].lower().startswith("terminal"))
        nos.append(no)
    if not names:
        raise BookshelfError(f"{path}: no nodes found; expected 'name width height [terminal]' lines")
    _check_declared(path, n_nodes, len(names), "nodes (NumNodes)")
    _check_declared(path, n_term, int(sum(term)), "terminals (NumTerminals)")
    return names, np.array(w), np.array(h), np.array(term, dtype=bool), nos


def read_pl(path: Path, index: dict[str, int], need: np.ndarray, names: list[str]) -> np.ndarray:
    """``name x y [: orient] [/FIXED]`` lines: (N, 2) lower-left positions; every node flagged in ``need`` must
    have one."""
    xy = np.zeros((len(index), 2))
    seen = np.zeros(len(index), dtype=bool)
    for no, tok in _lines(path, ".pl"):
        if len(tok) < 3:
            raise BookshelfError(f"{path}:{no}: expected 'name x y : orient', got {_snip(tok)}")
        if tok[0] not in index:
            raise BookshelfError(f"{path}:{no}: unknown node name {_snip(tok[0])} (not in the .nodes file); expected "
                                 f"'name x y : orient' for a node of the .nodes file")
        i = index[tok[0]]
        xy[i] = (_num(tok[1], path, no, "x"), _num(tok[2], path, no, "y"))
        seen[i] = True
    missing = np.flatnonzero(need & ~seen)
    if len(missing):
        raise BookshelfError(f"{path}: no position for node {names[missing[0]]!r} ({len(missing)} nodes lack one; "
                             f"truncated?); expected a 'name x y : orient' line for every node it places")
    return xy


def read_nets(path: Path, index: dict[str, int]) -> list[tuple[str, list[tuple[int, float, float]]]]:
    """``NetDegree : k [name]`` sections of ``node [dir] [: ox oy]`` pin lines (offsets from the node centre)."""
    nets: list[tuple[str, list[tuple[int, float, float]]]] = []
    expected = 0
    cur: list[tuple[int, float, float]] | None = None
    start_no = 0
    n_nets = n_pins = None
    total = 0

    def close() -> None:
        if cur is not None and len(cur) != expected:
            raise BookshelfError(f"{path}:{start_no}: net declares {expected} pins but lists {len(cur)}; expected "
                                 f"{expected} pin lines after 'NetDegree : {expected}'")

    for no, tok in _lines(path, ".nets"):
        if _is_key(tok, "numnets"):
            n_nets = (no, _count(tok, path, no))
            continue
        if _is_key(tok, "numpins"):
            n_pins = (no, _count(tok, path, no))
            continue
        if tok[0].lower() == "netdegree":
            close()
            if len(tok) < 3 or tok[1] != ":":
                raise BookshelfError(f"{path}:{no}: expected 'NetDegree : k [name]', got {_snip(tok)}")
            k = _num(tok[2], path, no, "NetDegree")
            if k < 1 or k != int(k):
                raise BookshelfError(f"{path}:{no}: expected a positive integer NetDegree, got {tok[2]!r}")
            expected, cur, start_no = int(k), [], no
            nets.append((tok[3] if len(tok) > 3 else f"net{len(nets)}", cur))
            continue
        if cur is None:
            raise BookshelfError(f"{path}:{no}: pin line before any 'NetDegree' line; expected 'NetDegree : k'")
        if tok[0] not in index:
            raise BookshelfError(f"{path}:{no}: unknown node name {_snip(tok[0])} (not in the .nodes file); "
                                 f"expected 'node dir : ox oy' for a node of the .nodes file")
        ox = oy = 0.0
        if ":" in tok:
            k = tok.index(":")
            if len(tok) < k + 3:
                raise BookshelfError(f"{path}:{no}: expected 'node dir : ox oy', got {_snip(tok)}")
            ox, oy = _num(tok[k + 1], path, no, "pin x offset"), _num(tok[k + 2], path, no, "pin y offset")
        cur.append((index[tok[0]], ox, oy))
        total += 1
    close()
    if not nets:
        raise BookshelfError(f"{path}: no nets found; expected 'NetDegree : k' sections")
    _check_declared(path, n_nets, len(nets), "nets (NumNets)")
    _check_declared(path, n_pins, total, "pins (NumPins)")
    return nets


def read_scl(path: Path) -> tuple[float, float]:
    """``CoreRow Horizontal ... End`` blocks: the first row's height and the core's extent (the largest
    ``Coordinate + Height`` and ``SubrowOrigin + NumSites * Sitespacing``; ``Sitespacing`` defaults to 1)."""
    height: float | None = None
    extent = 0.0
    n_rows = None
    rows = 0
    coord = 0.0
    spacing = 1.0
    for no, tok in _lines(path, ".scl"):
        key = tok[0].lower()
        if key not in _SCL_KEYS:
            raise BookshelfError(f"{path}:{no}: expected a .scl keyword (NumRows, CoreRow, Coordinate, Height, "
                                 f"Sitewidth, Sitespacing, Siteorient, Sitesymmetry, SubrowOrigin, End), got "
                                 f"{_snip(tok)}")
        if _is_key(tok, "numrows"):
            n_rows = (no, _count(tok, path, no))
        elif key == "corerow":
            rows += 1
            coord, spacing = 0.0, 1.0
        elif _is_key(tok, "coordinate"):
            coord = _num(tok[-1], path, no, "Coordinate")
        elif _is_key(tok, "height"):
            hgt = _num(tok[-1], path, no, "Height")
            if hgt <= 0:
                raise BookshelfError(f"{path}:{no}: expected a positive row Height, got {tok[-1]!r}")
            height = hgt if height is None else height
            extent = max(extent, coord + hgt)
        elif _is_key(tok, "sitespacing"):
            spacing = _num(tok[-1], path, no, "Sitespacing")
        elif _is_key(tok, "subroworigin"):
            low = [t.lower() for t in tok]
            k = low.index("numsites") if "numsites" in low else -1
            if k < 3 or len(tok) < k + 3 or tok[k + 1] != ":":
                raise BookshelfError(f"{path}:{no}: expected 'SubrowOrigin : x NumSites : n', got {_snip(tok)}")
            origin = _num(tok[2], path, no, "SubrowOrigin")
            n_sites = _num(tok[k + 2], path, no, "NumSites")
            extent = max(extent, origin + n_sites * spacing)
    if height is None:
        raise BookshelfError(f"{path}: no row found; expected 'CoreRow Horizontal' blocks with a 'Height : h' line")
    _check_declared(path, n_rows, rows, "rows (NumRows)")
    return height, extent
