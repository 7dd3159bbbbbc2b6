"""The neuralforecast peers wrapper (icml25.spikf.peers) on tiny data: our windows, hand-computed metrics, seeding,
best-validation restore, chunked test prediction; the comparison helpers; the error without the extra."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from icml25.spikf import peers as peers_mod
from icml25.spikf.data import LTSFDataset
from icml25.spikf.peers import fit_peer, long_frame

L, H = 16, 8
TINY = {"PatchTST": {"encoder_layers": 1, "hidden_size": 8, "n_heads": 2, "linear_hidden_size": 8, "patch_len": 4,
                     "stride": 4},
        "iTransformer": {"e_layers": 1, "hidden_size": 8, "n_heads": 2, "d_ff": 8},
        "DLinear": {"moving_avg_window": 5}}


def _series(rows: int = 320, d: int = 3, seed: int = 0) -> np.ndarray:
    t = np.arange(rows, dtype=np.float64)[:, None]
    rng = np.random.default_rng(seed)
    return (np.sin(2 * np.pi * t / (12 + 3 * np.arange(d))) * (1 + np.arange(d)) + 5
            + 0.1 * rng.standard_normal((rows, d))).astype(np.float32)


def test_long_frame_layout() -> None:
    v = np.arange(6, dtype=np.float32).reshape(3, 2)
    df = long_frame(v)
    assert list(df.columns) == ["unique_id", "ds", "y"]
    assert df["unique_id"].tolist() == [0, 0, 0, 1, 1, 1] and df["ds"].tolist() == [0, 1, 2, 0, 1, 2]
    assert df["y"].tolist() == [0, 2, 4, 1, 3, 5]
    assert len(long_frame(v, end=2)) == 4


def test_missing_neuralforecast_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from icml25.core.optional import MissingExtraError

    monkeypatch.setitem(sys.modules, "neuralforecast", None)
    with pytest.raises(MissingExtraError, match=r"icml25\[forecast\]"):
        fit_peer("DLinear", _series(), "ratio", L, H)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="name"):
        fit_peer("Informer", _series(), "ratio", L, H)
    with pytest.raises(ValueError, match="loss"):
        fit_peer("DLinear", _series(), "ratio", L, H, loss="huber")
    with pytest.raises(TypeError, match="model_kwargs"):
        fit_peer("DLinear", _series(), "ratio", L, H, model_kwargs=[1])


def test_peer_windows_metrics_seed_and_restore() -> None:
    """DLinear: targets are our test windows, metrics equal a hand computation, the same seed gives the same numbers,
    the restored weights are those of the best validation MAE."""
    pytest.importorskip("neuralforecast")
    v = _series()
    kw = dict(epochs=4, batch_size=8, seed=3, model_kwargs=TINY["DLinear"], patience=4)
    r = fit_peer("DLinear", v, "ratio", L, H, **kw)
    X, Y = LTSFDataset(v, "test", L, H, "ratio").windows(1)
    assert r.pred.shape == Y.shape and np.array_equal(r.target, Y)
    diff = r.pred.astype(np.float64) - Y
    assert r.mae == pytest.approx(np.abs(diff).mean(), rel=1e-12)
    assert r.mse == pytest.approx((diff ** 2).mean(), rel=1e-12)
    assert r.epochs_run == len(r.val_mae) >= 1
    assert r.best_epoch == int(np.argmin(r.val_mae))
    again = fit_peer("DLinear", v, "ratio", L, H, **kw)
    assert again.mae == r.mae and np.array_equal(again.pred, r.pred)
    # a forecaster better than repeating the last value (the series is periodic)
    naive = np.abs(np.repeat(X[:, -1:, :], H, axis=1) - Y).mean()
    assert r.mae < naive


@pytest.mark.parametrize("name", ["PatchTST", "iTransformer"])
def test_transformer_peers_on_our_windows(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """PatchTST (univariate) and iTransformer (multivariate) predict every test window, in chunks or not alike."""
    pytest.importorskip("neuralforecast")
    v = _series()
    kw = dict(epochs=1, batch_size=8, seed=0, model_kwargs=TINY[name], test_windows=20)
    r = fit_peer(name, v, "ratio", L, H, **kw)
    Y = LTSFDataset(v, "test", L, H, "ratio").windows(1, 20)[1]
    assert r.pred.shape == (20, H, 3) and np.array_equal(r.target, Y) and np.isfinite(r.pred).all()
    monkeypatch.setattr(peers_mod, "_CV_ROWS", 7 * 3 * H)  # 7 windows per cross-validation call
    chunked = fit_peer(name, v, "ratio", L, H, **kw)
    np.testing.assert_allclose(chunked.pred, r.pred, rtol=1e-5, atol=1e-6)


def test_reductions_and_strides() -> None:
    from icml25.spikf.peer_comparison import cell_stride, comparison_cells, reductions
    from icml25.spikf.reproduce import Config

    comp = {"ETTh1-96": {"models": {"SpikF": {"mae": 0.39}, "A": {"mae": 0.40}, "B": {"mae": 0.41}}},
            "ETTh1-336": {"models": {"SpikF": {"mae": 0.50}, "A": {"mae": 0.45}, "B": {"mae": 0.44}}}}
    red = reductions(comp, "SpikF")
    assert red["ETTh1-96"][1] == "A" and red["ETTh1-96"][0] == pytest.approx(2.5)
    assert red["ETTh1-336"][1] == "B" and red["ETTh1-336"][0] == pytest.approx(100 * (1 - 0.50 / 0.44))
    cfg = Config.full()
    assert len(comparison_cells(cfg)) >= 8 and len(cfg.peers) >= 3 and len(cfg.peer_datasets) >= 4
    assert cell_stride(cfg, 8449) == 2 and cell_stride(cfg, 34369) == 8
    assert Config.quick().peers == ()  # the quick run trains no peer
    paper = Config.paper()
    assert len(comparison_cells(paper)) == 32 and paper.peer_windows == 0


def test_config_peer_fields() -> None:
    from icml25.spikf.reproduce import Config

    with pytest.raises(ValueError, match="peers"):
        Config(peers=("Informer",), peer_datasets=("ETTh1",))
    with pytest.raises(ValueError, match="peer_datasets"):
        Config(peer_datasets=("ETTh3",))
    with pytest.raises(ValueError, match="peer_horizons"):
        Config(peer_horizons=(100,))
    with pytest.raises(ValueError, match="peer_datasets"):
        Config(peers=("DLinear",))
    with pytest.raises(TypeError, match="peers"):
        Config(peers=["DLinear"], peer_datasets=("ETTh1",))
