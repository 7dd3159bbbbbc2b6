"""Long-term forecasting benchmark data: CSV loading, Time-Series-Library splits, train-fitted scaling, windows.

Splits (Informer/Autoformer/Time-Series-Library conventions, spec §2): ``"ett_hour"`` 12/4/4 months of hourly
rows (8640/2880/2880), ``"ett_minute"`` the same at 15 min (x4), ``"ratio"`` 70/10/20 % chronological. The val and
test parts start ``seq_len`` rows before their border so that their first target starts at the border. A
standard scaler is fitted on the training rows only.

Examples
--------
>>> import numpy as np
>>> series = np.sin(np.arange(200.0))[:, None] * np.ones((1, 2))
>>> ds = LTSFDataset(series, flag="test", seq_len=24, pred_len=12, split="ratio")
>>> len(ds), ds[0][0].shape, ds[0][1].shape
(29, (24, 2), (12, 2))
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.data import resolve_data
from icml25.core.files import FileFormatError, read_text, snippet
from icml25.core.validation import check_array, check_int, check_option

__all__ = ["LTSFDataset", "load_benchmark", "read_csv_series", "split_borders", "BENCHMARKS"]

#: name -> (file name, split convention, canonical download URL or None, sha256 of the standard file)
BENCHMARKS: dict[str, tuple[str, str, str | None, str | None]] = {
    "ETTh1": ("ETTh1.csv", "ett_hour", "https://raw.githubusercontent.com/zhouhaoyi/ETDataset/main/ETT-small/ETTh1.csv",
              "f18de3ad269cef59bb07b5438d79bb3042d3be49bdeecf01c1cd6d29695ee066"),
    "ETTh2": ("ETTh2.csv", "ett_hour", "https://raw.githubusercontent.com/zhouhaoyi/ETDataset/main/ETT-small/ETTh2.csv",
              "a3dc2c597b9218c7ce1cd55eb77b283fd459a1d09d753063f944967dd6b9218b"),
    "ETTm1": ("ETTm1.csv", "ett_minute",
              "https://raw.githubusercontent.com/zhouhaoyi/ETDataset/main/ETT-small/ETTm1.csv",
              "6ce1759b1a18e3328421d5d75fadcb316c449fcd7cec32820c8dafda71986c9e"),
    "ETTm2": ("ETTm2.csv", "ett_minute",
              "https://raw.githubusercontent.com/zhouhaoyi/ETDataset/main/ETT-small/ETTm2.csv",
              "db973ca252c6410a30d0469b13d696cf919648d0f3fd588c60f03fdbdbadd1fd"),
    # the Autoformer benchmark bundle (Google Drive, no stable raw URL): pass path=... to a local copy
    "weather": ("weather.csv", "ratio", None, None),
    "exchange_rate": ("exchange_rate.csv", "ratio", None,
                      "d55e7aa2641009814a18ba3279431b13f6d413b0eab195b9ff21988d8cf94e97"),
    "national_illness": ("national_illness.csv", "ratio", None, None),
    "electricity": ("electricity.csv", "ratio", None, None),
    "traffic": ("traffic.csv", "ratio", None, None),
}

_FLAGS = ("train", "val", "test")


def read_csv_series(path: str | Path, n_columns: int | None = None) -> tuple[np.ndarray, list[str]]:
    """Read a benchmark CSV (first column a date, then numeric variables) into ``[rows, D]`` float32.

    Raises ``ValueError`` (one line naming the file and the line, and what was expected) for a file that is not UTF-8
    text, a header without variable columns (a wrong delimiter), a row with the wrong number of fields, a
    non-numeric or NaN/inf value (naming row and column), or a variable count different from ``n_columns`` when
    given; ``FileNotFoundError`` for a missing file. A malformed file is never partly read.
    """
    if n_columns is not None:
        n_columns = check_int(n_columns, "n_columns", low=1)
    path = Path(path)
    what = "a CSV whose first column is a date, then numeric variables, separated by ','"
    text = read_text(path, what)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise FileFormatError(f"{path.name}: line {reader.line_num}: {str(exc)[:80]}; expected {what}") from None
    if len(rows) < 2:
        raise ValueError(f"{path.name}: expected a header and at least one data row, got {len(rows)} lines")
    header = rows[0][1:]
    if not header:
        raise FileFormatError(f"{path.name}: line 1: the header {snippet(rows[0][0])} has no variable column; "
                              f"expected {what}")
    if n_columns is not None and len(header) != n_columns:
        raise ValueError(f"{path.name}: expected {n_columns} variable columns after the date, got {len(header)}")
    width = len(header) + 1
    out = np.empty((len(rows) - 1, len(header)), dtype=np.float64)
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != width:
            raise ValueError(f"{path.name}: line {i} has {len(row)} fields, expected {width} (date + {len(header)})")
        try:
            out[i - 2] = [float(v) for v in row[1:]]
        except ValueError:
            bad = next(v for v in row[1:] if not _is_float(v))
            raise ValueError(f"{path.name}: line {i} has a non-numeric value {snippet(bad)}; expected numbers "
                             f"after the date") from None
    bad = np.argwhere(~np.isfinite(out))
    if len(bad):
        r, c = bad[0]
        raise ValueError(f"{path.name}: NaN or inf at line {r + 2}, column {header[c]!r}; expected finite values "
                         f"(impute or drop it first)")
    return out.astype(np.float32), header


def _is_float(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def load_benchmark(name: str, path: str | Path | None = None, allow_download: bool | None = None
                   ) -> tuple[np.ndarray, list[str], str]:
    """Load a standard LTSF benchmark: ``(values [rows, D], column names, split convention)``.

    ETTh1 and ETTh2 are shipped (unmodified, CC BY-ND 4.0); ETTm1/ETTm2 download from the ETDataset repository when
    allowed; the other sets need ``path`` to a local copy (Autoformer bundle).
    """
    check_option(name, "name", BENCHMARKS)
    filename, split, url, sha = BENCHMARKS[name]
    p = resolve_data("spikf", filename, path=path, url=url, allow_download=allow_download, sha256=sha)
    values, cols = read_csv_series(p)
    return values, cols, split


def split_borders(n_rows: int, seq_len: int, split: str) -> tuple[list[int], list[int]]:
    """Start and end rows ``(border1s, border2s)`` of train/val/test (Time-Series-Library ``Dataset_*``)."""
    n_rows = check_int(n_rows, "n_rows", low=1)
    seq_len = check_int(seq_len, "seq_len", low=1)
    check_option(split, "split", ("ett_hour", "ett_minute", "ratio"))
    if split == "ratio":
        n_train, n_test = int(n_rows * 0.7), int(n_rows * 0.2)
        n_val = n_rows - n_train - n_test
        b1 = [0, n_train - seq_len, n_rows - n_test - seq_len]
        b2 = [n_train, n_train + n_val, n_rows]
    else:
        unit = 30 * 24 * (4 if split == "ett_minute" else 1)
        b1 = [0, 12 * unit - seq_len, 16 * unit - seq_len]
        b2 = [12 * unit, 16 * unit, 20 * unit]
        if n_rows < b2[2]:
            raise ValueError(f"split {split!r} needs at least {b2[2]} rows, the series has {n_rows}")
    return b1, b2


class LTSFDataset:
    """Sliding windows ``(x [seq_len, D], y [pred_len, D])`` of one split of a standardised multivariate series.

    Parameters
    ----------
    data : array [rows, D] or path
        The raw series, or a CSV path read with :func:`read_csv_series`.
    flag : {"train", "val", "test"}
        Which split.
    seq_len, pred_len : int
        Look-back L and horizon H.
    split : {"ett_hour", "ett_minute", "ratio"}
        Border convention (see the module docstring).
    scale : bool
        Standardise with mean/std of the training rows (population std, as ``sklearn.StandardScaler``).
    """

    def __init__(self, data: Any, flag: str = "train", seq_len: int = 96, pred_len: int = 96,
                 split: str = "ett_hour", scale: bool = True) -> None:
        if isinstance(data, (str, Path)):
            try:
                exists = Path(data).is_file()
            except OSError:
                exists = False
            if not exists:
                raise ValueError(f"data must be an array [rows, D] or the path of an existing CSV file, got "
                                 f"{str(data)[:60]!r}")
            data, _ = read_csv_series(data)
        values = check_array(data, "data", ndim=2)
        self.flag = check_option(flag, "flag", _FLAGS)
        self.seq_len = check_int(seq_len, "seq_len", low=1)
        self.pred_len = check_int(pred_len, "pred_len", low=1)
        b1, b2 = split_borders(len(values), self.seq_len, split)
        if b1[1] < 0:
            raise ValueError(f"seq_len={self.seq_len} is longer than the training part ({b2[0]} rows)")
        train = values[b1[0]:b2[0]]
        self.mean = train.mean(axis=0) if scale else np.zeros(values.shape[1])
        self.std = train.std(axis=0) if scale else np.ones(values.shape[1])
        self.std = np.where(self.std > 0, self.std, 1.0)
        i = _FLAGS.index(self.flag)
        self.border = (b1[i], b2[i])
        self.data = ((values[b1[i]:b2[i]] - self.mean) / self.std).astype(np.float32)
        n = len(self.data) - self.seq_len - self.pred_len + 1
        if n < 1:
            raise ValueError(f"seq_len + pred_len = {self.seq_len + self.pred_len} is longer than the {self.flag} "
                             f"part of the series ({len(self.data)} rows)")
        self.n_windows = n

    def __len__(self) -> int:
        return self.n_windows

    def __getitem__(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        i = check_int(i, "i", low=-self.n_windows, high=self.n_windows - 1) % self.n_windows
        s = i + self.seq_len
        return self.data[i:s], self.data[s:s + self.pred_len]

    @property
    def n_vars(self) -> int:
        """Number of variables D."""
        return int(self.data.shape[1])

    def windows(self, stride: int = 1, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """All windows with start stride ``stride`` (the first ``limit`` of them): ``X [n, L, D], Y [n, H, D]``."""
        stride = check_int(stride, "stride", low=1)
        starts = np.arange(0, self.n_windows, stride)
        if limit is not None:
            starts = starts[:check_int(limit, "limit", low=1)]
        view = np.lib.stride_tricks.sliding_window_view(self.data, self.seq_len + self.pred_len, axis=0)
        w = view[starts].transpose(0, 2, 1)  # [n, L + H, D]
        return np.ascontiguousarray(w[:, :self.seq_len]), np.ascontiguousarray(w[:, self.seq_len:])

    def inverse_transform(self, x: Any) -> np.ndarray:
        """Map standardised values ``[..., D]`` back to the original units."""
        x = check_array(x, "x", ndim=(1, 2, 3))
        if x.shape[-1] != self.n_vars:
            raise ValueError(f"x must end with {self.n_vars} variables, got shape {x.shape}")
        return x * self.std + self.mean
