"""Reading user files with clean errors: every failure is one line naming the file, the line and what was expected.

The loaders of the papers (CSV/TSV tables, JSON and JSON-lines question sets, ``.npz`` archives) read through these
helpers so that a malformed file never leaks a ``UnicodeDecodeError``, ``json.JSONDecodeError``, ``csv.Error``,
``zipfile.BadZipFile``, ``KeyError`` or a numpy traceback, and never yields a half-read object. The contract is
checked by :mod:`icml25.testing.file_fuzz`.

Examples
--------
>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
>>> _ = p.write_text("a,b\\n1,2\\n3\\n")
>>> read_csv(p, "a table with columns a, b")
Traceback (most recent call last):
...
icml25.core.files.FileFormatError: .../t.csv:3: 1 fields where the header 'a,b' has 2; expected a table with columns a, b
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from .data import DataNotFoundError
from .errors import UsageError

__all__ = ["FileFormatError", "check_file", "read_text", "decode_text", "read_csv", "read_json", "read_jsonl", "read_npz",
           "parse_number", "numeric_column", "snippet"]

#: longest excerpt of the file quoted in a message
_SNIP = 40


class FileFormatError(UsageError):
    """A user file that is not in the expected format; the one-line message names the file, the line where there
    is one, and what was expected (a ``ValueError``; the CLI reports it as a user error)."""


class _NonFinite(ValueError):
    pass


def snippet(value: Any, limit: int = _SNIP) -> str:
    """``repr`` of ``value`` (a string or a list of fields) on one line, cut to about ``limit`` characters."""
    text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    text = " ".join(text.split()) if "\n" in text or "\r" in text else text
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 80 else text[:77] + "..."


def check_file(path: str | Path, what: str) -> Path:
    """``path`` as a Path naming an existing regular file; :class:`~icml25.core.data.DataNotFoundError` (a
    ``FileNotFoundError``) or :class:`FileFormatError` (a directory) otherwise.

    ``what`` describes the expected content (``"a CSV with columns date, OT"``) and ends every message.
    """
    p = Path(path).expanduser()
    if p.is_dir():
        raise FileFormatError(f"{p}: is a directory; expected a file: {what}")
    if not p.is_file():
        raise DataNotFoundError(f"{p} does not exist; expected {what}")
    return p


def read_text(path: str | Path, what: str, encodings: tuple[str, ...] = ("utf-8",)) -> str:
    """The text of a non-empty file (a UTF-8 BOM dropped), decoded with the first of ``encodings`` that works.

    Raises :class:`FileFormatError` for an empty file, NUL bytes (UTF-16 or binary data) or undecodable bytes,
    naming the line.
    """
    p = check_file(path, what)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise OSError(f"{p}: cannot be read ({exc.strerror or exc}); expected a readable file: {what}") from None
    return decode_text(raw, p, what, encodings)


def decode_text(raw: bytes, path: str | Path, what: str, encodings: tuple[str, ...] = ("utf-8",)) -> str:
    """:func:`read_text` for bytes already read (a decompressed file); ``path`` names it in messages."""
    p = path
    if not raw.strip():
        raise FileFormatError(f"{p}: the file is empty; expected {what}")
    if b"\x00" in raw:
        line = raw[: raw.index(b"\x00")].count(b"\n") + 1
        raise FileFormatError(f"{p}:{line}: NUL byte (a UTF-16 or binary file?); expected {what} as "
                              f"{encodings[0]} text")
    err: UnicodeDecodeError | None = None
    for enc in encodings:
        try:
            return raw.decode("utf-8-sig" if enc.lower().replace("-", "") == "utf8" else enc)
        except UnicodeDecodeError as exc:
            err = err or exc
    assert err is not None
    line = raw[: err.start].count(b"\n") + 1
    raise FileFormatError(f"{p}:{line}: byte 0x{raw[err.start]:02x} is not {' or '.join(encodings)}; expected {what} "
                          f"as {encodings[0]} text (re-save the file as UTF-8)")


def read_csv(path: str | Path, what: str, delimiter: str = ",", required: tuple[str, ...] = (), header: bool = True,
             encodings: tuple[str, ...] = ("utf-8",), quoting: int = csv.QUOTE_MINIMAL, text: str | None = None
             ) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """A delimited table: ``(header, [(line number, fields), ...])`` with every data row as wide as the header.

    Blank lines are skipped. ``required`` columns must be in the header (a missing one usually means a wrong
    delimiter: the message shows the header as read). Without ``header`` the first row sets the width and is
    returned among the data rows (the returned header is empty). ``text``: the file's content already read (a
    decompressed file; ``path`` then only names it in messages).
    """
    p = Path(path)
    if text is None:
        text = read_text(p, what, encodings)
    elif not text.strip():
        raise FileFormatError(f"{p}: the file is empty; expected {what}")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting)
    rows: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for row in reader:
            if row and (len(row) > 1 or row[0].strip()):
                rows.append((start, row))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise FileFormatError(f"{p}:{reader.line_num}: {_one_line(exc)}; expected {what}") from None
    if not rows:
        raise FileFormatError(f"{p}: no rows; expected {what}")
    names = [c.strip() for c in rows[0][1]] if header else []
    if header:
        missing = [c for c in required if c not in names]
        if missing:
            raise FileFormatError(f"{p}:{rows[0][0]}: the header {snippet(rows[0][1])} lacks column(s) "
                                  f"{', '.join(map(repr, missing))}; expected {what} separated by {delimiter!r}")
        rows = rows[1:]
        if not rows:
            raise FileFormatError(f"{p}: a header but no data rows; expected {what}")
    width = len(names) if header else len(rows[0][1])
    for line, row in rows:
        if len(row) != width:
            shown = f"the header {snippet(names)}" if header else f"line {rows[0][0]}"
            raise FileFormatError(f"{p}:{line}: {len(row)} fields where {shown} has {width}; expected {what}")
    return names, rows


def parse_number(value: Any, path: str | Path, line: int | None, column: str, integer: bool = False,
                 finite: bool = True) -> float:
    """``float(value)``, or a :class:`FileFormatError` naming file, line and column (non-numbers; NaN/inf unless
    ``finite=False``; non-integers when ``integer``)."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise FileFormatError(f"{where}: {column} is {snippet(value)}; expected a number") from None
    if finite and not math.isfinite(v):
        raise FileFormatError(f"{where}: {column} is {snippet(value)}; expected a finite number")
    if integer and math.isfinite(v) and v != int(v):
        raise FileFormatError(f"{where}: {column} is {snippet(value)}; expected an integer")
    return v


def numeric_column(rows: list[tuple[int, list[str]]], index: int, path: str | Path, name: str,
                   integer: bool = False) -> np.ndarray:
    """Column ``index`` of :func:`read_csv` rows as a float array; the first non-numeric, NaN/inf (or, with
    ``integer``, non-integral) value raises :class:`FileFormatError` naming the file, its line and ``name``."""
    try:
        v = np.array([r[index] for _, r in rows], dtype=float)
    except ValueError:
        v = None
    if v is not None and np.isfinite(v).all() and (not integer or np.all(v == np.round(v))):
        return v
    for line, r in rows:
        parse_number(r[index], path, line, name, integer=integer)
    raise AssertionError("unreachable")  # pragma: no cover


def _reject_constant(name: str) -> Any:
    raise _NonFinite(name)


def _constant_line(text: str, name: str) -> int:
    """Line of the first bare ``NaN``/``Infinity`` outside JSON strings (strings cannot span lines)."""
    for no, line in enumerate(text.splitlines(), start=1):
        if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w.])", re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)):
            return no
    return 1


def _loads(text: str, p: Path, what: str, line0: int | None = None) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        line = line0 if line0 is not None else exc.lineno
        raise FileFormatError(f"{p}:{line}: invalid JSON ({exc.msg} at column {exc.colno}); expected {what}") from None
    except _NonFinite as exc:
        line = line0 if line0 is not None else _constant_line(text, str(exc))
        raise FileFormatError(f"{p}:{line}: {exc} is not a JSON number; expected {what} with finite numbers") from None
    except RecursionError:
        raise FileFormatError(f"{p}: JSON nested too deeply; expected {what}") from None


def read_json(path: str | Path, what: str, encodings: tuple[str, ...] = ("utf-8",)) -> Any:
    """A JSON document (bare ``NaN``/``Infinity`` are rejected: they are not JSON)."""
    p = check_file(path, what)
    return _loads(read_text(p, what, encodings), p, what)


def read_jsonl(path: str | Path, what: str, required: tuple[str, ...] = (),
               encodings: tuple[str, ...] = ("utf-8",)) -> list[tuple[int, dict[str, Any]]]:
    """JSON lines: ``[(line number, object), ...]``; every non-blank line one JSON object holding ``required``."""
    p = check_file(path, what)
    out = []
    for no, line in enumerate(read_text(p, what, encodings).splitlines(), start=1):
        if not line.strip():
            continue
        if len(line) > 100_000 and not line.lstrip().startswith("{"):
            raise FileFormatError(f"{p}:{no}: a {len(line)}-character line {snippet(line)}; expected {what}")
        rec = _loads(line, p, f"one JSON object per line ({what})", no)
        if not isinstance(rec, dict):
            raise FileFormatError(f"{p}:{no}: a JSON {type(rec).__name__}, expected a JSON object ({what})")
        missing = [k for k in required if k not in rec]
        if missing:
            raise FileFormatError(f"{p}:{no}: the record lacks {', '.join(map(repr, missing))}; expected keys "
                                  f"{', '.join(required)} ({what})")
        out.append((no, rec))
    if not out:
        raise FileFormatError(f"{p}: no records; expected {what}")
    return out


def read_npz(path: str | Path, what: str, required: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` archive, read in full (no pickles); ``required`` arrays must be present."""
    p = check_file(path, what)
    try:
        z = np.load(p, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise FileFormatError(f"{p}: a single .npy array, not an .npz archive; expected {what}")
        with z:
            data = {k: z[k] for k in z.files}
    except FileFormatError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error, RuntimeError) as exc:
        raise FileFormatError(f"{p}: not a readable .npz archive ({type(exc).__name__}: {_one_line(exc)}); "
                              f"expected {what}") from None
    missing = [k for k in required if k not in data]
    if missing:
        raise FileFormatError(f"{p}: no {', '.join(map(repr, missing))} array (it holds {snippet(sorted(data), 80)}); "
                              f"expected {what}")
    return data
