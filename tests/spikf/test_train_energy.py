"""Training/evaluation on a synthetic multi-sine series and the energy estimator on hand-computed toys."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from icml25.spikf import (  # noqa: E402
    DLinear,
    LayerCost,
    LTSFDataset,
    SpikFForecaster,
    collect_firing_rates,
    estimate,
    evaluate,
    fit,
    memory_access_energy,
    spikf_layers,
)


def _sines(n: int = 1200) -> np.ndarray:
    t = np.arange(n)[:, None]
    return np.sin(2 * np.pi * t / 24 + np.array([0.0, 1.0])) + 0.05 * np.random.default_rng(0).normal(size=(n, 2))


def _data():
    s = _sines()
    tr, va = (LTSFDataset(s, f, 48, 12, "ratio") for f in ("train", "val"))
    return tr.windows(2), va.windows(4)


def test_fit_learns_and_is_seeded() -> None:
    torch.set_num_threads(1)
    tr, va = _data()
    out = []
    for _ in range(2):
        torch.manual_seed(0)
        m = SpikFForecaster(48, 12, 2, patch_num=12, patch_dim=8, T=2, hidden_dim=16)
        before = evaluate(m, va)["mae"]
        res = fit(m, tr, va, epochs=3, lr=3e-3, seed=0)
        out.append(evaluate(m, va)["mae"])
    assert out[0] == out[1], "same seed -> same numbers"
    assert out[0] < 0.5 * before
    assert out[0] == pytest.approx(min(res.val_loss), rel=1e-6)  # best-validation weights restored


def test_evaluate_is_batch_size_invariant_and_matches_numpy() -> None:
    tr, va = _data()
    m = DLinear(48, 12, 2)
    a, b = evaluate(m, va, batch_size=1), evaluate(m, va, batch_size=64)
    assert a["mae"] == pytest.approx(b["mae"], rel=1e-6) and a["mse"] == pytest.approx(b["mse"], rel=1e-6)
    with torch.no_grad():
        p = m(torch.from_numpy(va[0])).numpy()
    assert a["mse"] == pytest.approx(float(np.mean((p - va[1]) ** 2)), rel=1e-5)


def test_energy_two_layer_toy_by_hand() -> None:
    # layer 1: 10 analog inputs -> 10 LIF neurons (100 MACs) run once, neurons run 4 steps with rate 0.5
    # layer 2: 10 spike inputs (rate 0.2) -> 5 outputs (50 MACs) over 4 steps
    layers = [LayerCost("fc1", 100, 10, 10, None, 1, True, 0.5, 4, params=100),
              LayerCost("fc2", 50, 10, 5, 0.2, 4, params=50)]
    e = estimate(layers, e_mac=4.6e-12, e_ac=0.9e-12)
    assert e["e_ann"] == pytest.approx(4.6e-12 * 150)
    assert e["e_snn"] == pytest.approx(4.6e-12 * 100 + 0.9e-12 * (0.2 * 4 * 50))  # 460 + 36 pJ
    d = estimate(layers, e_mac=4.6e-12, e_ac=0.9e-12, detailed=True)
    mem = 10e-12  # both weight memories are < 8 KiB
    snn1 = 460e-12 + 40 * (4.6e-12 + 0.9e-12) + 0.9e-12 * 0.5 * 40 + mem * (2 * 100 + 10 + 2 * 40)
    snn2 = 36e-12 + 0.9e-12 * (0.2 * 4 * 10) + mem * 3 * 40
    ann = 4.6e-12 * 150 + mem * (2 * 100 + 10 + 2 * 50 + 5)
    assert d["e_snn"] == pytest.approx(snn1 + snn2)
    assert d["e_ann"] == pytest.approx(ann)
    assert d["ratio"] == pytest.approx(ann / (snn1 + snn2))


def test_memory_energy_interpolation() -> None:
    assert memory_access_energy(1024) == 10e-12 and memory_access_energy(32 * 1024) == pytest.approx(20e-12)
    mid = memory_access_energy(16 * 1024)  # half-way in log size between 8 and 32 KiB
    assert mid == pytest.approx(15e-12)
    assert memory_access_energy(1 << 30) == 100e-12
    assert memory_access_energy(0.5) == 10e-12
    with pytest.raises(ValueError, match="n_bytes"):
        memory_access_energy(0)


def test_spikf_energy_from_measured_rates() -> None:
    torch.manual_seed(0)
    m = SpikFForecaster(48, 12, 2, patch_num=12, patch_dim=8, T=4, hidden_dim=16)
    stats = collect_firing_rates(m, _data()[1][0][:16])
    layers = spikf_layers(m, stats)
    ann_macs = sum(layer.macs for layer in layers)
    assert ann_macs == 12 * 2 * 4 * 8 + 8 * 2 * 12 * 7 + 2 * 2 * 12 * math.log2(12) * 8 * 2 + 8 * 8 * 8 * 12 * 2 \
        + 2 * 96 * 16 + 2 * 16 * 12
    e = estimate(layers)
    assert e["e_ann"] == pytest.approx(4.6e-12 * ann_macs)
    assert 0 < e["e_snn"] and stats["mask_binary"]


def test_bad_training_inputs() -> None:
    tr, va = _data()
    m = DLinear(48, 12, 2)
    with pytest.raises(ValueError, match="loss"):
        fit(m, tr, va, loss="huber")
    with pytest.raises(TypeError, match="train"):
        fit(m, tr[0], va)
    with pytest.raises(ValueError, match="train"):
        fit(m, (tr[0], tr[1][:3]), va)
    with pytest.raises(ValueError, match="input_rate"):
        LayerCost("x", 1, 1, 1, input_rate=-0.5)
