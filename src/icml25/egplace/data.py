"""Data of the EGPlace reproduction: the ISPD2005 bookshelf netlists the user provides (paper scale) and the results
of the user's own EfficientPlace run (:func:`load_efficientplace_results`, the baseline of the abstract's −9.3 % and
2.8x, which is not re-implemented here). The shipped IBM-MS ibm01 netlist is read by
:func:`icml25.egplace.netlist.load_ibm01`; the synthetic netlists are :func:`icml25.egplace.netlist.synthetic_netlist`
(seeded)."""

from __future__ import annotations

from pathlib import Path


def ispd_aux(circuit: str, ispd_dir: str = "") -> Path:
    """``<ispd_dir>/<circuit>/<circuit>.aux``, or the same under the icml25 cache (``core.data.resolve_data``)."""
    from icml25.core.data import DataNotFoundError, cache_dir, resolve_data

    if ispd_dir:
        aux = Path(ispd_dir).expanduser() / circuit / f"{circuit}.aux"
        if not aux.exists():
            raise DataNotFoundError(f"{aux} does not exist: put the ISPD2005 bookshelf files of {circuit} "
                                    f"(.aux/.nodes/.nets/.pl/.scl) in {aux.parent}")
        return aux
    try:
        return resolve_data("egplace", f"ispd2005/{circuit}/{circuit}.aux")
    except DataNotFoundError:
        raise DataNotFoundError(f"ISPD2005 {circuit} is not shipped: put its bookshelf files in "
                                f"{cache_dir('egplace') / 'ispd2005' / circuit} or pass --set ispd_dir=<folder> "
                                f"holding {circuit}/{circuit}.aux") from None


#: the columns of an EfficientPlace results file: required, then optional
EP_COLUMNS, EP_OPTIONAL = ("benchmark", "hpwl", "seconds"), ("seed", "evaluations")


def load_efficientplace_results(path: str | Path, benchmarks: tuple[str, ...] | list[str] | None = None
                                ) -> dict[str, dict[str, float]]:
    """Read EfficientPlace's results from the user's own run of the official code and average them over seeds.

    Parameters
    ----------
    path : str or Path
        A ``.csv`` file with a header row, or a ``.json`` file holding a list of objects (or ``{"results": [...]}``),
        one row per benchmark and seed with the columns ``benchmark`` (e.g. ``adaptec1``), ``hpwl`` (the final
        macro HPWL, in the benchmark's own units as EGPlace reports it), ``seconds`` (the run's wall time), and
        optionally ``seed`` and ``evaluations`` (the run's budget). Other columns are ignored.
    benchmarks : sequence of str, optional
        The benchmarks the run places (default: the six ISPD2005 circuits of the paper preset); a row naming any
        other benchmark is an error.

    Returns
    -------
    dict
        benchmark -> ``{"hpwl": mean HPWL, "seconds": mean wall time, "runs": rows averaged, "evaluations": mean
        budget (NaN when not given)}``.

    Raises
    ------
    DataNotFoundError
        The file does not exist.
    ValueError
        An unknown suffix, unreadable content, no rows, missing columns, a non-positive or non-numeric ``hpwl``,
        ``seconds`` or ``evaluations``, a repeated (benchmark, seed), or a benchmark the run does not place; the
        one-line message names the file, the row and the known benchmarks.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "ep.csv"
    >>> _ = f.write_text("benchmark,hpwl,seconds,seed\\nadaptec1,6.0e5,300,0\\nadaptec1,5.8e5,340,1\\n")
    >>> load_efficientplace_results(f)["adaptec1"]["seconds"]
    320.0
    """
    from ._plan import ISPD_GRID

    if not isinstance(path, (str, Path)) or not str(path):
        raise TypeError(f"path must be a CSV or JSON file path (non-empty str or Path), got {path!r}")
    known = tuple(ISPD_GRID) if benchmarks is None else tuple(benchmarks)
    if not all(isinstance(b, str) for b in known):
        raise TypeError(f"benchmarks must be a sequence of benchmark names (str), got {benchmarks!r}")
    file = Path(path).expanduser()
    rows = _read_rows(file)
    runs: dict[str, list[dict[str, float]]] = {}
    seen: set[tuple[str, str]] = set()
    for k, row in enumerate(rows, start=1):
        name = str(row.get("benchmark") or "").strip().lower()
        if not name:
            raise ValueError(f"{file}: row {k}: benchmark is empty")
        if name not in known:
            raise ValueError(f"{file}: row {k}: benchmark {name!r} is not placed by this run; known: "
                             f"{', '.join(known) or 'none (ispd_circuits is empty)'}")
        vals = {c: _positive(row.get(c), c, file, k, name) for c in ("hpwl", "seconds")}
        ev = row.get("evaluations")
        vals["evaluations"] = float("nan") if ev in (None, "") else _positive(ev, "evaluations", file, k, name)
        seed = row.get("seed")
        if seed not in (None, ""):
            if (name, str(seed).strip()) in seen:
                raise ValueError(f"{file}: row {k}: benchmark {name!r} seed {seed} appears twice")
            seen.add((name, str(seed).strip()))
        runs.setdefault(name, []).append(vals)
    out = {}
    for name, rs in runs.items():
        evs = [r["evaluations"] for r in rs if r["evaluations"] == r["evaluations"]]
        out[name] = {"hpwl": sum(r["hpwl"] for r in rs) / len(rs), "seconds": sum(r["seconds"] for r in rs) / len(rs),
                     "runs": float(len(rs)), "evaluations": sum(evs) / len(evs) if evs else float("nan")}
    return out


def _read_rows(file: Path) -> list[dict]:
    """The rows of a results file as dicts (CSV header keys or JSON object keys, lower-cased)."""
    import csv
    import json

    from icml25.core.data import DataNotFoundError

    if not file.is_file():
        raise DataNotFoundError(f"EfficientPlace results file not found: {file}; expected a CSV or JSON file with "
                                f"columns {', '.join(EP_COLUMNS)} (optional {', '.join(EP_OPTIONAL)})")
    suffix = file.suffix.lower()
    if suffix == ".csv":
        with file.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(line for line in fh if line.strip() and not line.lstrip().startswith("#"))
            columns = [c.strip().lower() for c in (reader.fieldnames or [])]
            rows = [{(c or "").strip().lower(): (v.strip() if isinstance(v, str) else v) for c, v in r.items()}
                    for r in reader]
    elif suffix == ".json":
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{file}: not valid JSON ({err})") from None
        data = data.get("results") if isinstance(data, dict) else data
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ValueError(f"{file}: expected a JSON list of objects (or {{\"results\": [...]}}), one per "
                             f"benchmark and seed")
        rows = [{str(c).strip().lower(): v for c, v in r.items()} for r in data]
        columns = sorted(set().union(*rows)) if rows else []
    else:
        raise ValueError(f"{file}: expected a .csv or .json file, got suffix {file.suffix!r}")
    if not rows:
        raise ValueError(f"{file}: no rows; expected one row per benchmark and seed")
    missing = [c for c in EP_COLUMNS if c not in columns or (suffix == ".json" and any(c not in r for r in rows))]
    if missing:
        raise ValueError(f"{file}: missing column(s) {', '.join(missing)}; expected {', '.join(EP_COLUMNS)} "
                         f"(optional {', '.join(EP_OPTIONAL)})")
    return rows


def _positive(value: object, column: str, file: Path, k: int, name: str) -> float:
    """``value`` as a finite positive float, or a one-line ValueError naming file, row, benchmark and column."""
    import math

    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        x = float("nan")
    if isinstance(value, bool) or not math.isfinite(x) or x <= 0:
        raise ValueError(f"{file}: row {k} ({name}): {column} must be a positive number, got {value!r}")
    return x
