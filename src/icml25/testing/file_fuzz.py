"""The file fuzz contract: every public loader of user files rejects a malformed file with a clean one-line error.

Beside the argument fuzz (:mod:`icml25.testing.fuzz`), this harness feeds each loader of user files (CSV, TSV, JSON,
JSON lines, bookshelf text, ``.npz``, model folders, image folders) the standard malformed variants of one valid file,
written by the case into an empty folder:

``empty``            the target file truncated to 0 bytes
``truncated``        the first half of its bytes
``wrong_delimiter``  CSV rewritten with ``;`` (with ``,`` when it uses ``;``), TSV with ``,`` (csv/tsv)
``latin1``           a non-ASCII letter added and the text encoded as Latin-1 (text kinds)
``utf16``            the text encoded as UTF-16 with a BOM (text kinds)
``binary``           4 KiB of random bytes
``missing_field``    one field of the middle data row (csv/tsv), one key of a record (json/jsonl), one array (npz)
``nan``              the last number of the file written as NaN (kinds with numbers)
``directory``        a directory in place of the target file
``missing:<file>``   a companion file deleted (one variant per companion)
``oversize_line``    the first line replaced by a 1 MB line (text kinds)

For each variant the loader must either raise, or -- only where the case documents it (``truncated`` and ``latin1``
always may, a truncated file can be a shorter valid file and a Latin-1 fallback is legitimate; ``nan`` where
``nan_ok``; others listed in ``tolerant``; a deleted *optional* companion must load) -- return an object that passes
the case's ``validate`` (a complete, valid object: never a partially loaded one). A raised exception must

1. be an instance of the case's ``errors`` (default ``ValueError`` or ``OSError``, which covers
   ``FileNotFoundError``, ``IsADirectoryError`` and the loaders' own ``ValueError`` subclasses);
2. have a one-line message of at most :data:`MAX_MESSAGE` characters that names the file (its name), gives the line
   number where the variant has one (``missing_field`` and ``nan`` in line-based kinds: ``line N`` or ``:N``), and
   says what was expected (``expected``, ``must``, ``needs``, ...);
3. come from the loader itself: the last traceback frame lies inside the ``icml25`` package (outside this module),
   not inside numpy, pandas, torch, json, csv, zipfile or another library -- the loader caught the library's error
   and re-raised it with context.

Self-check of a list of cases (prints every failing loader x variant)::

    python -c "from icml25.testing.file_fuzz import report; report(CASES)"
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import re
import shutil
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FileLoaderCase", "FileFuzzResult", "variants", "check_variant", "run_variant", "report", "KINDS",
           "MAX_MESSAGE", "OVERSIZE"]

#: formats a case can declare for its target file
KINDS = ("csv", "tsv", "json", "jsonl", "text", "npz", "binary")
_TEXT = ("csv", "tsv", "json", "jsonl", "text")
#: longest accepted error message (a message must not echo a megabyte of the file)
MAX_MESSAGE = 500
#: length of the ``oversize_line`` variant's first line
OVERSIZE = 1_000_000
_EXPECT = re.compile(r"\b(expect\w*|must|needs?|should|requires?)\b", re.I)
_NUMBER = re.compile(r"(?<![\w.+-])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
_PACKAGE = Path(__file__).resolve().parents[1]
_HERE = Path(__file__).resolve().parent


@dataclass
class FileLoaderCase:
    """One public loader of user files and one valid file (or folder) for it.

    Attributes
    ----------
    name : str
        Test id, e.g. ``"spikf.read_csv_series"``.
    loader : callable or str
        The loader, or its dotted name (``"icml25.teduo.OfflineDataset.load"``), imported when called.
    write_valid : callable ``(folder: Path) -> Path``
        Writes a valid file or folder into the empty ``folder`` and returns the path to give the loader.
    kind : str
        Format of the target file, one of :data:`KINDS`.
    target : str, optional
        The file the content variants corrupt, relative to the folder of the returned path (the returned folder
        itself when it is one). Default: the returned path.
    companions : tuple of str
        Further files the loader needs (same base folder); ``missing:<file>`` must raise naming the file.
    optional_companions : tuple of str
        Files present in the valid folder that this call does not need: ``missing:<file>`` must load.
    call : callable ``(loader, path) -> object``, optional
        How to call the loader (default ``loader(path)``), e.g. ``lambda f, p: f("ETTh1", path=p)``.
    validate : callable ``(object) -> None``, optional
        Raises (``AssertionError``) unless a returned object is complete and valid; runs on the valid file too.
    errors : tuple of exception types
        What the loader documents raising (default ``ValueError``, ``OSError``).
    nan_ok : bool
        The format tolerates NaN (missing values): the ``nan`` variant may load (and ``validate`` accepts it).
    numbers : bool
        The target holds numbers (else there is no ``nan`` variant).
    delimiter : str, optional
        CSV/TSV field separator of the valid file (default ``,`` for csv, a tab for tsv); ``wrong_delimiter``
        rewrites it with ``;`` (``,`` when the valid file already uses ``;``) or, for TSV, with ``,``.
    header : bool
        CSV/TSV: the first row is a header (``missing_field`` and ``nan`` use data rows only).
    required_field : str, optional
        The key/column/array ``missing_field`` removes (default: the last field of the row or record; the first
        array of an ``.npz``).
    tolerant : tuple of str
        Further variants the loader may load (documented behaviour, e.g. a sniffed delimiter).
    skip : dict variant -> reason
        Variants that do not apply to this loader (with the reason).
    requires : tuple of str
        Modules the case needs (tests skip when one is missing).
    """

    name: str
    loader: Callable[..., Any] | str
    write_valid: Callable[[Path], Path]
    kind: str
    target: str | None = None
    companions: tuple[str, ...] = ()
    optional_companions: tuple[str, ...] = ()
    call: Callable[[Callable[..., Any], Path], Any] | None = None
    validate: Callable[[Any], None] | None = None
    errors: tuple[type[BaseException], ...] = (ValueError, OSError)
    nan_ok: bool = False
    numbers: bool = True
    delimiter: str | None = None
    header: bool = True
    required_field: str | None = None
    tolerant: tuple[str, ...] = ()
    skip: dict[str, str] = field(default_factory=dict)
    requires: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")

    def resolve(self) -> Callable[..., Any]:
        """The loader callable (imports a dotted name: the longest importable module prefix, then attributes)."""
        if callable(self.loader):
            return self.loader
        parts = self.loader.split(".")
        for i in range(len(parts) - 1, 0, -1):
            try:
                obj: Any = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for attr in parts[i:]:
                obj = getattr(obj, attr)
            return obj
        raise ImportError(f"cannot import the loader {self.loader!r}")


def variants(case: FileLoaderCase) -> list[str]:
    """The variant names that apply to ``case`` (skipped ones excluded), in a fixed order."""
    out = ["empty", "truncated"]
    if case.kind in ("csv", "tsv"):
        out.append("wrong_delimiter")
    if case.kind in _TEXT:
        out += ["latin1", "utf16"]
    out.append("binary")
    if case.kind in ("csv", "tsv", "json", "jsonl", "npz"):
        out.append("missing_field")
    if case.numbers and case.kind in ("csv", "tsv", "json", "jsonl", "text", "npz"):
        out.append("nan")
    out.append("directory")
    out += [f"missing:{c}" for c in (*case.companions, *case.optional_companions)]
    if case.kind in _TEXT:
        out.append("oversize_line")
    return [v for v in out if v not in case.skip]


def _may_load(case: FileLoaderCase, variant: str) -> bool:
    if variant in ("truncated", "latin1") or variant in case.tolerant:
        return True
    if variant == "nan":
        return case.nan_ok
    return variant.startswith("missing:") and variant[len("missing:"):] in case.optional_companions


# ------------------------------------------------------------------------------------------------ the mutations
def _rows(text: str, delim: str) -> list[tuple[int, list[str]]]:
    """CSV/TSV rows with the line number each starts on."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim,
                        quoting=csv.QUOTE_NONE if delim == "\t" else csv.QUOTE_MINIMAL)
    out, start = [], 1
    for row in reader:
        out.append((start, row))
        start = reader.line_num + 1
    return out


def _write_rows(rows: list[list[str]], delim: str) -> str:
    if delim == "\t":
        return "".join("\t".join(r) + "\n" for r in rows)
    buf = io.StringIO()
    csv.writer(buf, delimiter=delim, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _last_number_path(obj: Any, path: tuple = ()) -> tuple | None:
    """Key path of the last numeric leaf of a JSON value."""
    items = list(obj.items()) if isinstance(obj, dict) else list(enumerate(obj)) if isinstance(obj, list) else []
    for k, v in reversed(items):
        if _is_number(v):
            return (*path, k)
        sub = _last_number_path(v, (*path, k))
        if sub is not None:
            return sub
    return None


def _set(obj: Any, path: tuple, value: Any) -> None:
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


def _drop_key(record: dict, key: str | None) -> None:
    if not isinstance(record, dict) or not record:
        raise AssertionError(f"missing_field: expected a JSON object record, got {type(record).__name__}")
    k = key if key is not None else list(record)[-1]
    if k not in record:
        raise AssertionError(f"missing_field: the record has no key {k!r} to drop (keys {sorted(record)})")
    del record[k]


def _first_record_list(obj: Any) -> list | None:
    if isinstance(obj, list) and obj and all(isinstance(x, dict) for x in obj):
        return obj
    for v in (obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else []):
        found = _first_record_list(v)
        if found is not None:
            return found
    return None


def _holder(obj: Any, key: str) -> Any:
    """The first JSON object (depth first) that has ``key`` (``obj`` itself when none has)."""
    if isinstance(obj, dict) and key in obj:
        return obj
    for v in (obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else []):
        found = _holder(v, key)
        if isinstance(found, dict) and key in found:
            return found
    return obj


def _mutate(case: FileLoaderCase, variant: str, root: Path, target: Path) -> tuple[Path, int | None]:
    """Apply ``variant`` in place; returns the file the message must name and the line it must give (or None)."""
    if variant.startswith("missing:"):
        comp = root / variant[len("missing:"):]
        if not comp.exists():
            raise AssertionError(f"companion {comp.name!r} was not written by write_valid")
        shutil.rmtree(comp) if comp.is_dir() else comp.unlink()
        return comp, None
    raw = target.read_bytes()
    if variant == "empty":
        target.write_bytes(b"")
    elif variant == "truncated":
        target.write_bytes(raw[: len(raw) // 2])
    elif variant == "binary":
        target.write_bytes(np.random.default_rng(46).bytes(4096))
    elif variant == "directory":
        target.unlink()
        target.mkdir()
        (target / "unrelated.txt").write_text("a folder where a file was expected\n")
    elif case.kind == "npz":
        with np.load(target, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        if variant == "missing_field":
            del arrays[case.required_field if case.required_field is not None else list(arrays)[0]]
        elif variant == "nan":
            key = next((k for k, a in arrays.items() if a.dtype.kind == "f" and a.size), None)
            if key is None:
                raise AssertionError("nan: the .npz holds no float array; declare numbers=False")
            arrays[key] = arrays[key].copy()
            arrays[key].flat[-1] = np.nan
        np.savez(target, **arrays)
        if target.suffix != ".npz":  # np.savez appends .npz to other names
            target.with_name(target.name + ".npz").replace(target)
    else:
        return _mutate_text(case, variant, target, raw.decode("utf-8-sig"))
    return target, None


def _mutate_text(case: FileLoaderCase, variant: str, target: Path, text: str) -> tuple[Path, int | None]:
    line = None
    delim = case.delimiter or ("\t" if case.kind == "tsv" else ",")
    if variant == "wrong_delimiter":
        rows = [r for _, r in _rows(text, delim)]
        text = _write_rows(rows, ";" if delim == "," else ",")
    elif variant == "latin1":
        m = re.compile(r"[A-Za-z]{2,}").search(text, len(text) // 2) or re.compile(r"[A-Za-z]{2,}").search(text)
        at = m.end() if m else len(text)
        target.write_bytes((text[:at] + "\u00e9" + text[at:]).encode("latin-1", errors="replace"))
        return target, None
    elif variant == "utf16":
        target.write_bytes(text.encode("utf-16"))
        return target, None
    elif variant == "oversize_line":
        lines = text.split("\n")
        text = "\n".join(["x" * OVERSIZE, *lines[1:]])
    elif variant == "missing_field" and case.kind in ("csv", "tsv"):
        rows = _rows(text, delim)
        data = rows[1:] if case.header else rows
        data = [(n, r) for n, r in data if r]
        if not data:
            raise AssertionError("missing_field: the valid file has no data row")
        line, row = data[len(data) // 2]
        col = len(row) - 1
        if case.required_field is not None:
            col = rows[0][1].index(case.required_field)
        del row[col]
        text = _write_rows([r for _, r in rows], delim)
    elif variant == "nan" and case.kind in ("csv", "tsv"):
        rows = _rows(text, delim)
        for n, row in reversed(rows[1:] if case.header else rows):
            hits = [j for j, v in enumerate(row) if _NUMBER.fullmatch(v.strip())]
            if hits:
                row[hits[-1]], line = "nan", n
                break
        else:
            raise AssertionError("nan: no number in the data rows; declare numbers=False")
        text = _write_rows([r for _, r in rows], delim)
    elif case.kind == "jsonl":
        lines = text.split("\n")
        idx = [i for i, s in enumerate(lines) if s.strip()]
        if variant == "missing_field":
            i = idx[len(idx) // 2]
            rec = json.loads(lines[i])
            _drop_key(rec, case.required_field)
        else:  # nan: the last record holding a number
            for i in reversed(idx):
                rec = json.loads(lines[i])
                p = _last_number_path(rec)
                if p is not None:
                    _set(rec, p, float("nan"))
                    break
            else:
                raise AssertionError("nan: no number in the records; declare numbers=False")
        lines[i], line = json.dumps(rec, ensure_ascii=False), i + 1
        text = "\n".join(lines)
    elif case.kind == "json":
        obj = json.loads(text)
        if variant == "missing_field":
            records = _first_record_list(obj)
            key = case.required_field
            if records is not None and (key is None or key in records[len(records) // 2]):
                _drop_key(records[len(records) // 2], key)
            else:
                _drop_key(_holder(obj, key) if key is not None else obj, key)
        else:
            p = _last_number_path(obj)
            if p is None:
                raise AssertionError("nan: no number in the document; declare numbers=False")
            _set(obj, p, float("nan"))
        text = json.dumps(obj, indent=1, ensure_ascii=False)
    elif variant == "nan":  # text: the last number token of the file
        lines = text.split("\n")
        for i in range(len(lines) - 1, -1, -1):
            hits = list(_NUMBER.finditer(lines[i]))
            if hits:
                h = hits[-1]
                lines[i] = lines[i][: h.start()] + "nan" + lines[i][h.end():]
                line = i + 1
                break
        else:
            raise AssertionError("nan: no number in the file; declare numbers=False")
        text = "\n".join(lines)
    else:
        raise AssertionError(f"variant {variant!r} does not apply to kind {case.kind!r}")
    target.write_text(text, encoding="utf-8")
    return target, line if case.kind != "json" else None


# ---------------------------------------------------------------------------------------------------- the checks
@dataclass
class FileFuzzResult:
    """What one loader did on one variant: ``outcome`` is ``"raised"`` or ``"loaded"``; ``problems`` lists every
    broken rule (empty when the contract holds)."""

    case: str
    variant: str
    outcome: str
    problems: list[str]
    exception: BaseException | None = None

    @property
    def leaked(self) -> str:
        """One line: the exception type, the last frame and the message (for reports)."""
        if self.exception is None:
            return self.outcome
        tb = traceback.extract_tb(self.exception.__traceback__)
        where = f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else "?"
        msg = " ".join(str(self.exception).split())
        return f"{type(self.exception).__name__} at {where}: {msg[:120]}"


def _last_frame_ok(exc: BaseException) -> str | None:
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    name = tb.tb_frame.f_code.co_filename
    file = Path(name).resolve()
    if name.startswith("<") or _PACKAGE not in file.parents or _HERE in file.parents:
        where = name if name.startswith("<") else f"{file.parent.name}/{file.name}"
        return (f"the traceback's last frame is {where}:{tb.tb_lineno}, not the loader (catch the library's error "
                f"and re-raise it with context)")
    return None


def _check_exception(case: FileLoaderCase, exc: BaseException, bad: Path, line: int | None) -> list[str]:
    problems = []
    if not isinstance(exc, case.errors):
        problems.append(f"raised {type(exc).__name__}, not one of {[e.__name__ for e in case.errors]}")
    msg = str(exc)
    if "\n" in msg.strip():
        problems.append("the message spans several lines")
    if not msg.strip():
        problems.append("the message is empty")
    if len(msg) > MAX_MESSAGE:
        problems.append(f"the message has {len(msg)} characters (> {MAX_MESSAGE})")
    if bad.name not in msg:
        problems.append(f"the message does not name the file {bad.name!r}")
    if line is not None and not re.search(rf"(?:\bline\s*|:){line}\b", msg):
        problems.append(f"the message does not give the line number {line}")
    if not _EXPECT.search(msg):
        problems.append("the message does not say what was expected")
    frame = _last_frame_ok(exc)
    if frame:
        problems.append(frame)
    return problems


def run_variant(case: FileLoaderCase, variant: str, folder: Path) -> FileFuzzResult:
    """Write the valid file into the empty ``folder``, apply ``variant`` (``"valid"`` for none), call the loader."""
    folder.mkdir(parents=True, exist_ok=True)
    path = case.write_valid(folder)
    root = path if path.is_dir() else path.parent
    target = root / case.target if case.target is not None else path
    loader = case.resolve()
    bad, line = (path, None) if variant == "valid" else _mutate(case, variant, root, target)
    try:
        obj = case.call(loader, path) if case.call is not None else loader(path)
    except Exception as exc:  # noqa: BLE001 (the contract classifies every exception)
        if variant == "valid":
            return FileFuzzResult(case.name, variant, "raised", [f"the valid file failed: {exc!r}"[:300]], exc)
        return FileFuzzResult(case.name, variant, "raised", _check_exception(case, exc, bad, line), exc)
    problems = []
    if variant != "valid" and not _may_load(case, variant):
        problems.append(f"returned a {type(obj).__name__} for a malformed file instead of raising")
    elif case.validate is not None:
        try:
            case.validate(obj)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"returned an invalid or partial {type(obj).__name__}: {exc}"[:300])
    return FileFuzzResult(case.name, variant, "loaded", problems)


def check_variant(case: FileLoaderCase, variant: str, folder: Path) -> FileFuzzResult:
    """:func:`run_variant`, raising ``AssertionError`` with every problem when the contract does not hold."""
    res = run_variant(case, variant, folder)
    if res.problems:
        raise AssertionError(f"{case.name} on {variant!r} ({res.leaked}): " + "; ".join(res.problems))
    return res


def report(cases: Iterable[FileLoaderCase], folder: str | Path | None = None) -> list[FileFuzzResult]:
    """Run every variant of every case and print one line per broken loader x variant; returns all results."""
    import tempfile

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(folder) if folder is not None else Path(tmp)
        for case in cases:
            for k, variant in enumerate(["valid", *variants(case)]):
                try:
                    res = run_variant(case, variant, base / f"{case.name}-{k}")
                except AssertionError as exc:  # the case itself is wrong (a variant that does not apply)
                    res = FileFuzzResult(case.name, variant, "case error", [str(exc)])
                results.append(res)
                if res.problems:
                    print(f"{case.name} x {variant}: {res.leaked} -- {'; '.join(res.problems)}")
    bad = sum(bool(r.problems) for r in results)
    print(f"{len(results)} loader x variant checks, {bad} broken")
    return results
