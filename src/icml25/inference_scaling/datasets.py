"""Loaders for the real repeated-sampling data shipped with the package (see ``data/SOURCE.md``).

- :func:`load_llmonkeys_pythia_math` -- Large Language Monkeys, 7 Pythia models x 128 MATH problems x 10,000
  samples (per-problem success counts).
- :func:`load_pythia_checkpoints` -- Pythia checkpoints (8 sizes x up to 9 token counts) on MATH and GSM8K with
  adaptive sample counts.
- :func:`load_digitized_curve` -- aggregate MATH coverage curves digitised from Brown et al. (2024) for
  Gemma-2B, Llama-3-8B and Pythia-2.8B (sorted by k, duplicates averaged).
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.data import resolve_data

__all__ = ["load_llmonkeys_pythia_math", "load_pythia_checkpoints", "load_digitized_curve", "DIGITIZED_CURVES"]

SLUG = "inference_scaling"
_DIGITIZED_COMMIT = "7b7fb7310dcf62fd70f724d5fbdf8843e28ba9dd"
#: display name -> file stem of the digitised Brown et al. (2024) MATH coverage curves
DIGITIZED_CURVES = {"Gemma-2B": "gemma2B", "Llama-3-8B": "llama8BpassN", "Pythia-2.8B": "pythia28B"}


def _read_rows(path: Path) -> list[dict[str, str]]:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def load_llmonkeys_pythia_math(path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Per-problem success counts of 7 Pythia models on 128 MATH problems with 10,000 samples each.

    Parameters
    ----------
    path : path-like, optional
        A CSV with columns ``model, params, benchmark, problem_idx, num_samples, num_correct`` (default: the
        shipped copy).

    Returns
    -------
    dict model name -> dict
        Ordered by model size; each value has ``params`` (int), ``problem_idx``, ``n`` and ``c`` (int arrays of
        shape (128,)).
    """
    p = resolve_data(SLUG, "llmonkeys_pythia_math_per_problem.csv", path=path)
    groups: dict[str, dict[str, Any]] = {}
    for r in _read_rows(p):
        g = groups.setdefault(r["model"], {"params": int(float(r["params"])), "problem_idx": [], "n": [], "c": []})
        g["problem_idx"].append(int(r["problem_idx"]))
        g["n"].append(int(float(r["num_samples"])))
        g["c"].append(int(float(r["num_correct"])))
    out = {}
    for name in sorted(groups, key=lambda m: groups[m]["params"]):
        g = groups[name]
        out[name] = {"params": g["params"], **{k: np.asarray(g[k], dtype=np.int64) for k in ("problem_idx", "n", "c")}}
    return out


def load_pythia_checkpoints(path: str | Path | None = None, benchmark: str | None = None) -> list[dict[str, Any]]:
    """Per-problem counts of Pythia checkpoints (model size x training tokens) on MATH and GSM8K.

    Parameters
    ----------
    path : path-like, optional
        A CSV (optionally gzipped) with columns ``model_nickname, params, train_tokens, benchmark, problem_idx,
        level, num_samples, num_correct`` (default: the shipped copy).
    benchmark : {"MATH", "GSM8K"}, optional
        Keep only this benchmark.

    Returns
    -------
    list of dict
        One entry per (checkpoint, benchmark), sorted by (benchmark, params, train_tokens): ``checkpoint``,
        ``benchmark``, ``params``, ``train_tokens`` and int arrays ``problem_idx``, ``n``, ``c``.
    """
    if benchmark is not None and benchmark not in ("MATH", "GSM8K"):
        raise ValueError(f"benchmark must be 'MATH', 'GSM8K' or None, got {benchmark!r}")
    p = resolve_data(SLUG, "pythia_checkpoints_math_gsm8k_per_problem.csv.gz", path=path)
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for r in _read_rows(p):
        if benchmark is not None and r["benchmark"] != benchmark:
            continue
        key = (r["model_nickname"], r["benchmark"])
        g = groups.setdefault(key, {"checkpoint": key[0], "benchmark": key[1], "params": int(float(r["params"])),
                                    "train_tokens": int(float(r["train_tokens"])), "problem_idx": [], "n": [],
                                    "c": []})
        g["problem_idx"].append(int(r["problem_idx"]))
        g["n"].append(int(float(r["num_samples"])))
        g["c"].append(int(float(r["num_correct"])))
    out = []
    for g in sorted(groups.values(), key=lambda g: (g["benchmark"], g["params"], g["train_tokens"])):
        out.append({**g, **{k: np.asarray(g[k], dtype=np.int64) for k in ("problem_idx", "n", "c")}})
    return out


def load_digitized_curve(name: str, path: str | Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Aggregate MATH coverage curve digitised from Brown et al. (2024), sorted by k with duplicates averaged.

    Parameters
    ----------
    name : {"Gemma-2B", "Llama-3-8B", "Pythia-2.8B"} (or the file stems "gemma2B", "llama8BpassN", "pythia28B")
        Which curve.
    path : path-like, optional
        A two-column CSV ``x, y`` with a header row.

    Returns
    -------
    k, coverage : ndarray of float
    """
    stems = {**DIGITIZED_CURVES, **{v: v for v in DIGITIZED_CURVES.values()}}
    if name not in stems:
        raise ValueError(f"name must be one of {sorted(DIGITIZED_CURVES)}, got {name!r}")
    stem = stems[name]
    p = resolve_data(SLUG, f"brown2024_digitized_math_coverage/{stem}.csv", path=path,
                     url=f"https://raw.githubusercontent.com/austine4/Inference-Compute-Scaling-Laws/"
                         f"{_DIGITIZED_COMMIT}/{stem}.csv")
    arr = np.loadtxt(p, delimiter=",", skiprows=1, ndmin=2)
    k, y = arr[:, 0], arr[:, 1]
    order = np.argsort(k, kind="stable")
    k, y = k[order], y[order]
    uk, inv = np.unique(k, return_inverse=True)
    uy = np.bincount(inv, weights=y) / np.bincount(inv)
    return uk, uy
