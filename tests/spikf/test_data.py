"""Split sizes against the Time-Series-Library's, train-only scaling, windows, shipped files, bad data."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from icml25.core.data import DataNotFoundError, shipped_path
from icml25.spikf import LTSFDataset, load_benchmark, read_csv_series, split_borders

# window counts printed by Time-Series-Library's exp_long_term_forecast ("train 8449", ...) for L=96
STANDARD = [("ett_hour", 17420, 96, (8449, 2785, 2785)), ("ett_hour", 17420, 336, (8209, 2545, 2545)),
            ("ett_minute", 69680, 96, (34369, 11425, 11425)), ("ratio", 52696, 96, (36696, 5175, 10444))]


@pytest.mark.parametrize("split,rows,horizon,sizes", STANDARD)
def test_split_sizes_match_time_series_library(split: str, rows: int, horizon: int, sizes: tuple) -> None:
    data = np.random.default_rng(0).normal(size=(rows, 2))
    got = tuple(len(LTSFDataset(data, f, 96, horizon, split)) for f in ("train", "val", "test"))
    assert got == sizes


def test_shipped_files_are_unmodified_and_load() -> None:
    sums = {"ETTh1.csv": "f18de3ad269cef59bb07b5438d79bb3042d3be49bdeecf01c1cd6d29695ee066",
            "ETTh2.csv": "a3dc2c597b9218c7ce1cd55eb77b283fd459a1d09d753063f944967dd6b9218b"}
    for name, digest in sums.items():
        assert hashlib.sha256(shipped_path("spikf", name).read_bytes()).hexdigest() == digest
    values, cols, split = load_benchmark("ETTh1")
    assert values.shape == (17420, 7) and cols[-1] == "OT" and split == "ett_hour"


def test_scaler_fitted_on_training_rows_only() -> None:
    values, _, _ = load_benchmark("ETTh2")
    train = LTSFDataset(values, "train", 96, 96)
    test = LTSFDataset(values, "test", 96, 96)
    assert np.allclose(train.data.mean(0), 0, atol=1e-4) and np.allclose(train.data.std(0), 1, atol=1e-3)
    assert np.allclose(test.mean, values[:8640].astype(np.float64).mean(0)) and not np.allclose(test.data.mean(0), 0, atol=0.05)
    assert np.allclose(test.inverse_transform(test.data), values[test.border[0]:test.border[1]], atol=1e-3)
    # the first test target starts at the val/test border, row 16 * 720 = 11520
    assert np.allclose(test.inverse_transform(test[0][1][:1]), values[11520:11521], atol=1e-3)


def test_windows_equal_getitem() -> None:
    ds = LTSFDataset(np.random.default_rng(1).normal(size=(500, 3)), "val", 24, 8, "ratio")
    X, Y = ds.windows(stride=3)
    assert X.shape == (len(range(0, len(ds), 3)), 24, 3) and Y.shape[1:] == (8, 3)
    assert np.array_equal(X[2], ds[6][0]) and np.array_equal(Y[2], ds[6][1])
    assert len(ds.windows(1, limit=5)[0]) == 5


def test_window_longer_than_series() -> None:
    with pytest.raises(ValueError, match="longer than"):
        LTSFDataset(np.zeros((300, 2)), "test", 48, 80, "ratio")
    with pytest.raises(ValueError, match="needs at least"):
        split_borders(1000, 96, "ett_hour")


def _write(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "d.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_bad_csv_files(tmp_path: Path) -> None:
    head = "date,a,b"
    with pytest.raises(ValueError, match="NaN or inf at line 3, column 'b'"):
        read_csv_series(_write(tmp_path, [head, "t0,1,2", "t1,3,nan"]))
    with pytest.raises(ValueError, match="line 3 has 2 fields, expected 3"):
        read_csv_series(_write(tmp_path, [head, "t0,1,2", "t1,3"]))
    with pytest.raises(ValueError, match="expected 7 variable columns"):
        read_csv_series(_write(tmp_path, [head, "t0,1,2"]), n_columns=7)
    with pytest.raises(ValueError, match="non-numeric"):
        read_csv_series(_write(tmp_path, [head, "t0,1,x"]))
    with pytest.raises(ValueError, match="data"):
        LTSFDataset(np.array([[1.0, np.nan]] * 100), "train", 4, 4, "ratio")


def test_missing_benchmark_names_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICML25_CACHE", str(tmp_path))
    with pytest.raises(DataNotFoundError, match="ETDataset"):
        load_benchmark("ETTm2", allow_download=False)  # ETTm1 ships; ETTm2 does not
    with pytest.raises(DataNotFoundError, match="path="):
        load_benchmark("traffic")
    with pytest.raises(ValueError, match="name"):
        load_benchmark("ETTh3")
