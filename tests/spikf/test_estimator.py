"""The scikit-learn-style wrapper forecasts a raw multi-sine series in its own units."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from icml25.spikf import SpikFRegressor  # noqa: E402


def _series(n: int = 900) -> np.ndarray:
    t = np.arange(n)[:, None]
    return np.sin(2 * np.pi * t / 24) * np.array([1.0, 3.0]) + np.array([5.0, -20.0])


def test_regressor_beats_the_mean_forecast_in_raw_units() -> None:
    torch.set_num_threads(1)
    s = _series()
    reg = SpikFRegressor(seq_len=48, pred_len=12, patch_num=12, patch_dim=8, T=2, hidden_dim=16, epochs=5, lr=1e-2,
                         stride=2).fit(s[:800])
    windows = np.stack([s[i:i + 48] for i in range(800, 840, 10)])
    truth = np.stack([s[i + 48:i + 60] for i in range(800, 840, 10)])
    pred = reg.predict(windows)
    assert pred.shape == (4, 12, 2)
    # one window alone equals its row of the batch, up to float32 summation order (BLAS picks other kernels
    # for other batch shapes)
    np.testing.assert_allclose(reg.predict(windows[0]), pred[0], rtol=1e-5, atol=1e-6)
    err = np.abs(pred - truth).mean()
    naive = np.abs(windows.mean(axis=1, keepdims=True) - truth).mean()
    assert err < 0.25 * naive


def test_regressor_bad_inputs() -> None:
    from sklearn.exceptions import NotFittedError

    reg = SpikFRegressor(seq_len=48, pred_len=12, patch_num=12, patch_dim=8, T=2, hidden_dim=16, epochs=1)
    with pytest.raises(NotFittedError):
        reg.predict(np.zeros((48, 2)))
    with pytest.raises(ValueError, match="rows"):
        reg.fit(np.zeros((50, 2)))
    reg.fit(_series(300))
    with pytest.raises(ValueError, match="window"):
        reg.predict(np.zeros((48, 3)))
    with pytest.raises(ValueError, match="val_fraction"):
        SpikFRegressor(val_fraction=1.0)
