"""Reader for the ImCLEF07 ARFF files (hierarchical single-path labels; spec §5 and §8 'ARFF parsing').

``scipy.io.arff`` rejects the ``hierarchical`` attribute type, so this is a small dedicated reader: numeric
attributes, then ``@ATTRIBUTE class hierarchical a,a/b,a/b/c,...`` (every node as a path; the parent is the
prefix; the root is implicit; names may repeat — deduplicated in order), and data rows ending with the label
``a@a/b@a/b/c`` (the root-to-leaf path; the deepest element is the leaf).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from icml25.core.data import resolve_data
from icml25.core.files import read_text, snippet

from .hierarchy import Hierarchy

__all__ = ["read_hierarchical_arff", "load_imclef"]

#: the shipped copies' commit (data/SOURCE.md); pinned so that the download is the file whose hash is below
_URL = ("https://raw.githubusercontent.com/EGiunchiglia/C-HMCNN/e887855ab4b3b8f22e4fafc80a0a33c1d1ac0041/"
        "HMC_data/others/{name}_{split}.arff")
#: SHA-256 of the files shipped in data/ (unchanged copies of the download): a download is checked against them
SHA256 = {"ImCLEF07A_Train.arff": "fe240039db5272579924897bcac6c0c38b6cb117277aa49281a2ec936b01e7c9",
          "ImCLEF07A_Test.arff": "e95c33e0bc8a23be9b093bc34268404c47f304739bd73eceda58f8cbc42a90fb"}


def read_hierarchical_arff(path: str | Path) -> tuple[np.ndarray, list[str], list[str]]:
    """Parse a hierarchical ARFF file.

    Parameters
    ----------
    path : path-like

    Returns
    -------
    (X, labels, node_paths) : ndarray (n_rows, n_features) float, list of str (deepest label path per row),
        list of str (declared node paths, deduplicated in order)

    Raises
    ------
    FileNotFoundError, ValueError
        A missing file, or a malformed one (one line naming the file, the line and what was expected). Missing
        feature values (``?``, or a literal ``nan``) are NaN: the format is NaN-tolerant.
    """
    import os

    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a path (str or os.PathLike), got {type(path).__name__}")
    if not str(path).strip():
        raise ValueError("path must name a file, got an empty string")
    what = "a hierarchical ARFF file (numeric @ATTRIBUTEs, one 'hierarchical' class attribute, then @DATA rows)"
    # UTF-8, else Latin-1: the header and the numbers are ASCII, a stray byte elsewhere is harmless
    lines = read_text(path, what, encodings=("utf-8", "latin-1")).splitlines()
    n_num = 0
    node_paths: list[str] | None = None
    data_start = None
    for i, raw in enumerate(lines):
        line = raw.strip()
        low = line.lower()
        if low.startswith("@attribute"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[2].lower() == "hierarchical":
                spec = parts[3] if len(parts) > 3 else ""
                node_paths = list(dict.fromkeys(p.strip() for p in spec.split(",") if p.strip()))
            elif len(parts) >= 3 and parts[2].lower() in ("numeric", "real", "integer"):
                n_num += 1
            else:
                raise ValueError(f"{path}: unsupported attribute on line {i + 1}: {snippet(line)}; expected "
                                 f"'@ATTRIBUTE name numeric' or '@ATTRIBUTE class hierarchical a,a/b,...'")
        elif low.startswith("@data"):
            data_start = i + 1
            break
        elif line and not line.startswith("%") and not low.startswith("@relation"):
            raise ValueError(f"{path}: line {i + 1} is {snippet(line)}; expected @RELATION, @ATTRIBUTE, @DATA or a "
                             f"% comment in the ARFF header")
    if node_paths is None or data_start is None:
        raise ValueError(f"{path}: not a hierarchical ARFF file (no 'hierarchical' attribute or no @DATA section); "
                         f"expected {what}")
    X_rows: list[list[float]] = []
    labels: list[str] = []
    for i, raw in enumerate(lines[data_start:], start=data_start + 1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        fields = line.split(",")
        if len(fields) != n_num + 1:
            raise ValueError(f"{path}: line {i}: a data row has {len(fields)} fields, expected {n_num + 1}")
        try:  # '?' is ARFF's missing value: NaN (and so is a literal nan)
            X_rows.append([float(v) if v.strip() != "?" else np.nan for v in fields[:n_num]])
        except ValueError:
            bad = next(v for v in fields[:n_num] if v.strip() != "?" and not _is_float(v))
            raise ValueError(f"{path}: line {i}: feature value {snippet(bad)}; expected a number or '?'") from None
        path_set = [p for p in fields[n_num].split("@") if p]
        if not path_set:
            raise ValueError(f"{path}: line {i}: empty label; expected the label path 'a@a/b@...' last")
        labels.append(max(path_set, key=lambda p: p.count("/")))
    if not labels:
        raise ValueError(f"{path}: no data rows after @DATA; expected {what}")
    return np.asarray(X_rows, dtype=np.float64), labels, node_paths


def _is_float(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def load_imclef(name: str = "ImCLEF07A", split: str = "train", path: str | Path | None = None,
                hierarchy: Hierarchy | None = None) -> tuple[np.ndarray, np.ndarray, Hierarchy]:
    """Load an ImCLEF07 split: features, leaf indices and the label tree.

    Parameters
    ----------
    name : str
        ``"ImCLEF07A"`` (shipped) or ``"ImCLEF07D"`` (pass ``path``).
    split : {"train", "test"}
    path : path-like, optional
        A local ARFF file instead of the shipped copy.
    hierarchy : Hierarchy, optional
        Reuse the tree of another split (so that both splits share leaf indices).

    Returns
    -------
    (X, y, hierarchy) : ndarray (n, 80), ndarray of int (n,), Hierarchy
        ``y`` are leaf indices of ``hierarchy``; leaves are numbered in depth-first order of the header.
    """
    from icml25.core.validation import check_option

    if path is None:  # the shipped copy, or a copy in the data cache
        check_option(name, "name", ("ImCLEF07A", "ImCLEF07D"))
    elif not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    fname = f"{name}_{split.capitalize()}.arff"
    file = resolve_data("hier_decoding", fname, path=path, url=_URL.format(name=name, split=split.capitalize()),
                        sha256=SHA256.get(fname))
    X, labels, node_paths = read_hierarchical_arff(file)
    h = hierarchy if hierarchy is not None else Hierarchy.from_paths(node_paths)
    y = h.leaf_indices(labels)
    return X, y, h

