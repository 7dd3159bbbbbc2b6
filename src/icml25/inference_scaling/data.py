"""Loaders for the real repeated-sampling data shipped with the package (see ``data/SOURCE.md``).

- :func:`load_llmonkeys_pythia_math` -- Large Language Monkeys, 7 Pythia models x 128 MATH problems x 10,000
  samples (per-problem success counts).
- :func:`load_pythia_checkpoints` -- Pythia checkpoints (8 sizes x up to 9 token counts) on MATH and GSM8K with
  adaptive sample counts.
- :func:`load_digitized_curve` -- aggregate MATH coverage curves digitised from Brown et al. (2024) for
  Gemma-2B, Llama-3-8B and Pythia-2.8B (sorted by k, duplicates averaged).
- :func:`load_digit_images` -- scikit-learn's 8x8 digits, the "problems" of the VAE check (a seeded subset).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.data import resolve_data
from icml25.core.files import (
    FileFormatError,
    check_file,
    decode_text,
    numeric_column,
    read_csv,
    snippet,
)

__all__ = ["load_llmonkeys_pythia_math", "load_pythia_checkpoints", "load_digitized_curve", "DIGITIZED_CURVES"]

SLUG = "inference_scaling"
_DIGITIZED_COMMIT = "7b7fb7310dcf62fd70f724d5fbdf8843e28ba9dd"
#: display name -> file stem of the digitised Brown et al. (2024) MATH coverage curves
DIGITIZED_CURVES = {"Gemma-2B": "gemma2B", "Llama-3-8B": "llama8BpassN", "Pythia-2.8B": "pythia28B"}
#: SHA-256 of the digitised curves shipped in data/ (unchanged copies of the files at _DIGITIZED_COMMIT): a download
#: is checked against them
SHA256 = {
    "brown2024_digitized_math_coverage/gemma2B.csv": "22835de174784def159b966800e72c999bc66140bee72747f2ed086cbedb9fa8",
    "brown2024_digitized_math_coverage/llama8BpassN.csv":
        "ea084bf293dfe471ffdc05f4532109f9b1539114eb6c3e8d921f051c99574091",
    "brown2024_digitized_math_coverage/pythia28B.csv": "bb246be5d16276145d113ddde50cb830d3327325e564c693781da127e3033d1f",
}


def _user_path(path: str | Path | None, what: str) -> str | Path | None:
    if path is not None and Path(path).is_dir():
        check_file(path, what)  # one line: a directory, expected the file
    return path


def _read_table(path: Path, what: str, required: tuple[str, ...]
                ) -> tuple[list[tuple[int, list[str]]], dict[str, int]]:
    """Rows (line number, fields) of a CSV (optionally gzipped) and the index of each required column."""
    text = None
    if path.suffix == ".gz":
        try:
            with gzip.open(check_file(path, what), "rb") as f:
                raw = f.read()
        except (OSError, EOFError, zlib.error) as exc:
            raise FileFormatError(f"{path}: not a readable gzip file ({type(exc).__name__}: {str(exc)[:60]}); "
                                  f"expected {what}") from None
        text = decode_text(raw, path, what)
    header, rows = read_csv(path, what, required=required, text=text)
    return rows, {c: header.index(c) for c in required}


def _counts(rows: list[tuple[int, list[str]]], col: dict[str, int], path: Path) -> dict[str, np.ndarray]:
    """The integer columns problem_idx, num_samples, num_correct (0 <= num_correct <= num_samples)."""
    out = {k: numeric_column(rows, col[c], path, c, integer=True).astype(np.int64)
           for k, c in (("problem_idx", "problem_idx"), ("n", "num_samples"), ("c", "num_correct"))}
    bad = np.flatnonzero((out["c"] < 0) | (out["c"] > out["n"]))
    if len(bad):
        line = rows[bad[0]][0]
        raise FileFormatError(f"{path}:{line}: num_correct {out['c'][bad[0]]} of num_samples {out['n'][bad[0]]}; "
                              f"expected 0 <= num_correct <= num_samples")
    return out


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
    what = "a CSV with columns model, params, benchmark, problem_idx, num_samples, num_correct"
    p = resolve_data(SLUG, "llmonkeys_pythia_math_per_problem.csv", path=_user_path(path, what))
    rows, col = _read_table(p, what, ("model", "params", "problem_idx", "num_samples", "num_correct"))
    params = numeric_column(rows, col["params"], p, "params")
    counts = _counts(rows, col, p)
    groups: dict[str, dict[str, Any]] = {}
    for i, (_, r) in enumerate(rows):
        g = groups.setdefault(r[col["model"]], {"params": int(params[i]), "problem_idx": [], "n": [], "c": []})
        for k in ("problem_idx", "n", "c"):
            g[k].append(int(counts[k][i]))
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
    what = ("a CSV (optionally gzipped) with columns model_nickname, params, train_tokens, benchmark, problem_idx, "
            "level, num_samples, num_correct")
    p = resolve_data(SLUG, "pythia_checkpoints_math_gsm8k_per_problem.csv.gz", path=_user_path(path, what))
    rows, col = _read_table(p, what, ("model_nickname", "params", "train_tokens", "benchmark", "problem_idx",
                                      "num_samples", "num_correct"))
    params = numeric_column(rows, col["params"], p, "params")
    tokens = numeric_column(rows, col["train_tokens"], p, "train_tokens")
    counts = _counts(rows, col, p)
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for i, (_, r) in enumerate(rows):
        if benchmark is not None and r[col["benchmark"]] != benchmark:
            continue
        key = (r[col["model_nickname"]], r[col["benchmark"]])
        g = groups.setdefault(key, {"checkpoint": key[0], "benchmark": key[1], "params": int(params[i]),
                                    "train_tokens": int(tokens[i]), "problem_idx": [], "n": [], "c": []})
        for k in ("problem_idx", "n", "c"):
            g[k].append(int(counts[k][i]))
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
    what = "a two-column CSV 'x,y' (k, coverage) with a header row"
    fname = f"brown2024_digitized_math_coverage/{stem}.csv"
    p = resolve_data(SLUG, fname, path=_user_path(path, what),
                     url=f"https://raw.githubusercontent.com/austine4/Inference-Compute-Scaling-Laws/"
                         f"{_DIGITIZED_COMMIT}/{stem}.csv", sha256=SHA256[fname])
    header, rows = read_csv(p, what)
    if len(header) < 2:
        raise FileFormatError(f"{p}:{rows[0][0] - 1}: the header {snippet(header)} has {len(header)} column(s); "
                              f"expected {what}")
    k, y = numeric_column(rows, 0, p, "x (k)"), numeric_column(rows, 1, p, "y (coverage)")
    order = np.argsort(k, kind="stable")
    k, y = k[order], y[order]
    uk, inv = np.unique(k, return_inverse=True)
    uy = np.bincount(inv, weights=y) / np.bincount(inv)
    return uk, uy


def load_digit_images(n_digits: int, seed: int) -> np.ndarray:
    """``n_digits`` of scikit-learn's 8x8 digits (a seeded subset; all 1,797 when ``n_digits >= 1797``), in [0, 1]."""
    from sklearn.datasets import load_digits

    X = load_digits().data.astype(np.float32) / 16.0
    if n_digits < X.shape[0]:
        idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], n_digits, replace=False))
        X = X[idx]
    return X
