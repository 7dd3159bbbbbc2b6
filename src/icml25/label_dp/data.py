"""Loaders of the shipped real data sets: UCI Adult and Pima Indians Diabetes (stand-ins, see data/SOURCE.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.data import resolve_data
from icml25.core.files import FileFormatError, check_file, parse_number, read_csv

__all__ = ["load_adult", "load_pima"]

ADULT_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data"
PIMA_URL = "https://raw.githubusercontent.com/jbrownlee/Datasets/master/pima-indians-diabetes.data.csv"
#: complete rows of the shipped Adult copy (the largest subsample E5 can draw without replacement)
ADULT_ROWS = 30162


#: columns of the shipped Adult copy, in the order of UCI's ``adult.data`` (which has no header row)
ADULT_COLUMNS = ("age", "type_employer", "fnlwgt", "education", "education_num", "marital", "occupation",
                 "relationship", "race", "sex", "capital_gain", "capital_loss", "hr_per_week", "country", "income")
#: columns of the shipped Pima copy, in the order of the header-less CSV at :data:`PIMA_URL`
PIMA_COLUMNS = ("Pregnancies", "Glucose", "BloodPressure", "SkinThickness", "Insulin", "BMI",
                "DiabetesPedigreeFunction", "Age", "Outcome")


def _headerless_to_csv(raw: Path, out: Path, columns: tuple[str, ...], drop_missing: bool) -> None:
    """Write the header-less comma-separated ``raw`` to ``out`` with a header row, fields stripped, blank lines (and,
    with ``drop_missing``, rows with a ``?`` field) dropped; ``ValueError`` when a row has another field count."""
    lines = []
    for no, line in enumerate(raw.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        fields = [f.strip() for f in line.split(",")]
        if fields == [""]:
            continue
        if len(fields) != len(columns):
            raise ValueError(f"line {no} has {len(fields)} fields, expected {len(columns)}")
        if drop_missing and "?" in fields:
            continue
        lines.append(",".join(fields))
    if not lines:
        raise ValueError("no data rows")
    out.write_text(",".join(columns) + "\n" + "\n".join(lines) + "\n", encoding="utf-8")


def adult_from_uci(raw: Path, out: Path) -> None:
    """UCI's ``adult.data`` (no header, ``", "``-separated, ``?`` for missing) as the shipped ``adult.csv``: a header
    row (:data:`ADULT_COLUMNS`) and the complete rows only (30,162 of the 32,561 training rows)."""
    _headerless_to_csv(Path(raw), Path(out), ADULT_COLUMNS, drop_missing=True)


def pima_from_raw(raw: Path, out: Path) -> None:
    """The header-less Pima CSV at :data:`PIMA_URL` as the shipped ``pima_diabetes.csv`` (header row
    :data:`PIMA_COLUMNS`, all 768 rows)."""
    _headerless_to_csv(Path(raw), Path(out), PIMA_COLUMNS, drop_missing=False)


def _standardise(A: np.ndarray) -> np.ndarray:
    return (A - A.mean(0)) / A.std(0)


def _read_csv(path: Path, what: str, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    """Rows as (line number, {column: value}); a malformed file raises one line naming it, the line, the fix."""
    header, rows = read_csv(path, what, required=required)
    return [(no, dict(zip(header, r))) for no, r in rows]


def _numbers(rows: list[tuple[int, dict[str, str]]], columns: list[str], path: Path) -> np.ndarray:
    """The ``columns`` as a float matrix; a non-numeric or NaN value raises naming file, line and column."""
    try:
        A = np.array([[float(r[c]) for c in columns] for _, r in rows], dtype=float).reshape(len(rows), len(columns))
        if np.isfinite(A).all():
            return A
    except ValueError:
        pass
    for no, r in rows:  # the first bad value, for the message
        for c in columns:
            parse_number(r[c], path, no, f"column {c!r}")
    raise AssertionError("unreachable")  # pragma: no cover


def load_adult(path: str | Path | None = None, standardise: bool = True) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """UCI Adult (30,162 complete rows): covariates age, education_num, hr_per_week (standardised) and
    male (0/1); response income > 50K.

    Parameters
    ----------
    path : path, optional
        A local ``adult.csv`` with a header row (the shipped copy is used otherwise).

    Returns
    -------
    X : ndarray (n, 4), y : ndarray (n,) of 0/1, names : list of str
    """
    what = "adult.csv with a header row and columns age, education_num, hr_per_week, sex, income (data/SOURCE.md)"
    if path is not None and Path(path).is_dir():
        check_file(path, what)
    p = resolve_data("label_dp", "adult.csv", path=path, url=ADULT_URL, convert=adult_from_uci)
    rows = _read_csv(p, what, ("age", "education_num", "hr_per_week", "sex", "income"))
    cont = _numbers(rows, ["age", "education_num", "hr_per_week"], p)
    male = np.array([1.0 if r["sex"].strip() == "Male" else 0.0 for _, r in rows])
    y = np.array([1 if r["income"].strip().startswith(">50K") else 0 for _, r in rows])
    if standardise:
        cont = _standardise(cont)
    return np.column_stack([cont, male]), y, ["age", "education_num", "hr_per_week", "male"]


def load_pima(path: str | Path | None = None, standardise: bool = True,
              columns: Any = ("Glucose", "BMI", "Age", "DiabetesPedigreeFunction", "Pregnancies")
              ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Pima Indians Diabetes (768 rows; rows with a 0 missing-code in Glucose or BMI dropped); response Outcome.

    Returns
    -------
    X : ndarray (n, len(columns)), y : ndarray (n,) of 0/1, names : list of str
    """
    columns = list(columns)
    what = f"pima_diabetes.csv with a header row and columns {', '.join(columns)}, Outcome (0/1)"
    if path is not None and Path(path).is_dir():
        check_file(path, what)
    p = resolve_data("label_dp", "pima_diabetes.csv", path=path, url=PIMA_URL, convert=pima_from_raw)
    rows = _read_csv(p, what, (*columns, "Outcome"))
    A = _numbers(rows, columns, p)
    y = _numbers(rows, ["Outcome"], p)[:, 0]
    bad = np.flatnonzero((y != 0) & (y != 1))
    if len(bad):
        raise FileFormatError(f"{p}:{rows[bad[0]][0]}: Outcome is {rows[bad[0]][1]['Outcome']!r}; expected 0 or 1")
    y = y.astype(int)
    missing = np.zeros(len(rows), dtype=bool)
    for j, c in enumerate(columns):
        if c in ("Glucose", "BloodPressure", "SkinThickness", "Insulin", "BMI"):
            missing |= A[:, j] == 0
    A, y = A[~missing], y[~missing]
    if standardise:
        A = _standardise(A)
    return A, y, columns
