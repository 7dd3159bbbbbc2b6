"""Loaders of the shipped real data sets: UCI Adult and Pima Indians Diabetes (stand-ins, see data/SOURCE.md)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.data import resolve_data

__all__ = ["load_adult", "load_pima"]

ADULT_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data"
PIMA_URL = "https://raw.githubusercontent.com/jbrownlee/Datasets/master/pima-indians-diabetes.data.csv"


def _standardise(A: np.ndarray) -> np.ndarray:
    return (A - A.mean(0)) / A.std(0)


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


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
    rows = _read_csv(resolve_data("label_dp", "adult.csv", path=path, url=ADULT_URL))
    try:
        cont = np.array([[float(r["age"]), float(r["education_num"]), float(r["hr_per_week"])] for r in rows])
        male = np.array([1.0 if r["sex"].strip() == "Male" else 0.0 for r in rows])
        y = np.array([1 if r["income"].strip().startswith(">50K") else 0 for r in rows])
    except KeyError as exc:
        raise ValueError(f"adult.csv lacks column {exc}; expected the header of data/SOURCE.md") from None
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
    rows = _read_csv(resolve_data("label_dp", "pima_diabetes.csv", path=path, url=PIMA_URL))
    columns = list(columns)
    try:
        A = np.array([[float(r[c]) for c in columns] for r in rows])
        y = np.array([int(r["Outcome"]) for r in rows])
    except KeyError as exc:
        raise ValueError(f"pima_diabetes.csv lacks column {exc}") from None
    missing = np.zeros(len(rows), dtype=bool)
    for j, c in enumerate(columns):
        if c in ("Glucose", "BloodPressure", "SkinThickness", "Insulin", "BMI"):
            missing |= A[:, j] == 0
    A, y = A[~missing], y[~missing]
    if standardise:
        A = _standardise(A)
    return A, y, columns
