"""GLUE task loaders (SST-2, MRPC, RTE, CoLA, STS-B dev/train files) and WordPiece batching for Sorbet."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.data import DataNotFoundError, shipped_path
from icml25.core.files import FileFormatError, parse_number, read_csv
from icml25.core.validation import check_int, check_option

__all__ = ["GLUE_TASKS", "GlueData", "load_glue_task", "encode", "batches", "glue_metric"]

#: folder, has header, column(s) of the text(s), label column, label parser, metric, number of labels
GLUE_TASKS: dict[str, dict[str, Any]] = {
    "sst2": {"folder": "SST-2", "header": True, "text": (0,), "label": 1, "metric": "accuracy", "num_labels": 2},
    "mrpc": {"folder": "MRPC", "header": True, "text": (3, 4), "label": 0, "metric": "f1", "num_labels": 2},
    "rte": {"folder": "RTE", "header": True, "text": (1, 2), "label": 3, "metric": "accuracy", "num_labels": 2,
            "labels": {"entailment": 0, "not_entailment": 1}},
    "cola": {"folder": "CoLA", "header": False, "text": (3,), "label": 1, "metric": "mcc", "num_labels": 2},
    "stsb": {"folder": "STS-B", "header": True, "text": (7, 8), "label": 9, "metric": "pearson", "num_labels": 1},
}


@dataclass
class GlueData:
    """Sentences (and second sentences of pair tasks) with labels (int class, or float score for STS-B)."""

    task: str
    text_a: list[str]
    text_b: list[str] | None
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.text_a)

    def subset(self, idx: Any) -> GlueData:
        """The examples at the integer indices ``idx``."""
        idx = np.asarray(idx, dtype=int)
        return GlueData(self.task, [self.text_a[i] for i in idx],
                        None if self.text_b is None else [self.text_b[i] for i in idx], self.labels[idx])


def load_glue_task(task: str, split: str = "train", root: str | Path | None = None) -> GlueData:
    """Read a GLUE task's ``train`` or ``dev`` file.

    Parameters
    ----------
    task : {"sst2", "mrpc", "rte", "cola", "stsb"}
    split : {"train", "dev"}
        GLUE test labels are not public; the paper reports dev.
    root : path, optional
        A ``glue_data`` folder holding ``<Task>/<split>.tsv`` (e.g. ``SST-2/dev.tsv``); default: the unmodified
        copy shipped with icml25 (train and dev of all five tasks, SHA-256 in ``data/SHA256SUMS``).

    Returns
    -------
    GlueData

    Raises
    ------
    DataNotFoundError, ValueError
        A missing file, or a malformed one (one line naming the file and the line: a row with the wrong number of
        tab-separated fields, a label outside the task's classes, a non-numeric or NaN score); never a partial set.

    Examples
    --------
    >>> dev = load_glue_task("sst2", "dev")
    >>> len(dev), int(dev.labels.sum())
    (872, 444)
    """
    check_option(task, "task", tuple(GLUE_TASKS))
    check_option(split, "split", ("train", "dev"))
    spec = GLUE_TASKS[task]
    rel = f"{spec['folder']}/{split}.tsv"
    if root is not None:
        path = Path(root) / rel
        if path.is_dir():
            raise FileFormatError(f"{path}: is a directory; expected the tab-separated {rel} of a glue_data folder")
        if not path.is_file():
            raise DataNotFoundError(f"root must be a glue_data folder holding {rel}; {path} does not exist")
    else:
        path = shipped_path("sorbet", rel)
        if not path.is_file():
            raise DataNotFoundError(f"the shipped GLUE copy lacks {rel} (a damaged install?); pass root= a "
                                    "glue_data folder (GLUE's download_glue_data.py layout)")
    need = max(*spec["text"], spec["label"]) + 1
    what = f"GLUE {spec['folder']}/{split}.tsv: tab-separated rows of at least {need} fields"
    _, table = read_csv(path, what, delimiter="\t", header=spec["header"], quoting=csv.QUOTE_NONE)
    width = len(table[0][1])
    if width < need:
        raise FileFormatError(f"{path}:{table[0][0]}: {width} tab-separated field(s); expected {what}")
    rows = [r for _, r in table]
    labels = _labels(task, spec, table, path)
    cols = spec["text"]
    return GlueData(task, [r[cols[0]] for r in rows], [r[cols[1]] for r in rows] if len(cols) > 1 else None, labels)


def _labels(task: str, spec: dict[str, Any], table: list[tuple[int, list[str]]], path: Path) -> np.ndarray:
    """The label column: vectorised when every value is fine, else the first bad row's error."""
    raw = [r[spec["label"]] for _, r in table]
    if "labels" not in spec:
        try:
            v = np.asarray(raw, dtype=float)
        except ValueError:
            v = None
        if v is not None and np.isfinite(v).all() and (task == "stsb" or (
                np.all(v == np.round(v)) and v.min() >= 0 and v.max() < max(spec["num_labels"], 2))):
            return v if task == "stsb" else v.astype(int)
    return np.asarray([_label(task, spec, x, path, no) for x, (no, _) in zip(raw, table)],
                      dtype=float if task == "stsb" else int)


def _label(task: str, spec: dict[str, Any], value: str, path: Path, line: int) -> float:
    """One label: a finite score (STS-B), a name of ``spec["labels"]``, or a class index."""
    if "labels" in spec:
        if value not in spec["labels"]:
            raise FileFormatError(f"{path}:{line}: label {value[:40]!r}; expected one of {sorted(spec['labels'])}")
        return spec["labels"][value]
    if task == "stsb":
        return parse_number(value, path, line, "the score")
    v = parse_number(value, path, line, "the label", integer=True)
    if not 0 <= v < max(spec["num_labels"], 2):
        raise FileFormatError(f"{path}:{line}: label {value[:40]!r}; expected a class index below {spec['num_labels']}")
    return v


def encode(data: GlueData, tokenizer: Any, max_length: int = 64) -> list[tuple[list[int], list[int]]]:
    """WordPiece-encode with the teacher's own tokenizer: ``[CLS] a [SEP] (b [SEP])``, truncated to ``max_length``.

    Returns a list of ``(input_ids, token_type_ids)`` per example (no padding; see :func:`batches`).
    """
    if not isinstance(data, GlueData):
        raise TypeError(f"data must be a GlueData from load_glue_task, got {type(data).__name__}")
    check_int(max_length, "max_length", low=3)
    enc = tokenizer(data.text_a, data.text_b, truncation=True, max_length=max_length) if data.text_b is not None \
        else tokenizer(data.text_a, truncation=True, max_length=max_length)
    types = enc.get("token_type_ids") or [[0] * len(x) for x in enc["input_ids"]]
    return list(zip(enc["input_ids"], types))


def batches(encoded: list[tuple[list[int], list[int]]], labels: np.ndarray, batch_size: int, shuffle: bool = False,
            seed: int = 0, sort_by_length: bool = False) -> list[dict[str, Any]]:
    """Padded batches ``{"input_ids", "attention_mask", "token_type_ids", "labels", "index"}`` (torch tensors).

    ``shuffle`` permutes with ``seed``; ``sort_by_length`` groups similar lengths (less padding, for evaluation).
    """
    import torch

    check_int(batch_size, "batch_size", low=1)
    n = len(encoded)
    if len(labels) != n:
        raise ValueError(f"labels must have one entry per example ({n}), got {len(labels)}")
    order = np.arange(n)
    if shuffle:
        order = np.random.default_rng(seed).permutation(n)
    if sort_by_length:
        order = np.array(sorted(order, key=lambda i: len(encoded[i][0])), dtype=int)
    out = []
    for s in range(0, n, batch_size):
        idx = order[s:s + batch_size]
        L = max(len(encoded[i][0]) for i in idx)
        ids = torch.zeros(len(idx), L, dtype=torch.long)
        tt = torch.zeros(len(idx), L, dtype=torch.long)
        am = torch.zeros(len(idx), L, dtype=torch.long)
        for r, i in enumerate(idx):
            a, t = encoded[i]
            ids[r, :len(a)] = torch.tensor(a)
            tt[r, :len(a)] = torch.tensor(t)
            am[r, :len(a)] = 1
        lab = torch.as_tensor(np.asarray(labels)[idx])
        out.append({"input_ids": ids, "attention_mask": am, "token_type_ids": tt, "labels": lab,
                    "index": torch.as_tensor(idx)})
    return out


def glue_metric(task: str, predictions: Any, labels: Any) -> float:
    """The task's GLUE dev metric: accuracy (SST-2, RTE), F1 (MRPC), Matthews corr. (CoLA), Pearson (STS-B).

    >>> glue_metric("sst2", [1, 0, 1], [1, 1, 1])
    0.6666666666666666
    """
    check_option(task, "task", tuple(GLUE_TASKS))
    try:
        p, y = np.asarray(predictions, dtype=float), np.asarray(labels, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("predictions and labels must be numeric arrays, got "
                        f"{type(predictions).__name__} and {type(labels).__name__}") from None
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(y))):
        raise ValueError("predictions and labels must be finite")
    if p.shape != y.shape or p.ndim != 1 or len(p) == 0:
        raise ValueError(f"predictions and labels must be equal-length 1-D arrays, got shapes {p.shape}, {y.shape}")
    metric = GLUE_TASKS[task]["metric"]
    if metric == "accuracy":
        return float(np.mean(p == y))
    if metric == "f1":
        from sklearn.metrics import f1_score

        return float(f1_score(y, p))
    if metric == "mcc":
        from sklearn.metrics import matthews_corrcoef

        return float(matthews_corrcoef(y, p))
    from scipy.stats import pearsonr

    return float(pearsonr(p.astype(float), y.astype(float))[0])
