"""``estimate_energy``: the paper's MAC/AC accounting against operations counted by hand on tiny networks."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from icml25.spikf import DLinear, SpikFForecaster, collect_firing_rates, estimate_energy  # noqa: E402

E_MAC, E_AC = 4.6e-12, 0.9e-12


def test_dlinear_is_counted_in_macs() -> None:
    # two Linear(L=4 -> H=2) maps applied to each of D=3 variables: 2 * 3 * 4 * 2 = 48 MACs per sample
    X = np.random.default_rng(0).normal(size=(5, 4, 3)).astype(np.float32)
    total, table = estimate_energy(DLinear(4, 2, 3), X)
    assert total == pytest.approx(48 * E_MAC)
    assert [r["op"] for r in table] == ["MAC", "MAC"] and sum(r["MACs"] for r in table) == 48
    assert sum(r["share"] for r in table) == pytest.approx(1.0)


def test_spike_input_pays_one_accumulate_per_event_and_fan_out() -> None:
    lin = torch.nn.Linear(3, 2)
    X = np.array([[[1, 0, 1]], [[0, 0, 1]]], dtype=np.float32)  # 2 and 1 input spikes, fan-out 2
    total, table = estimate_energy(lin, X)
    assert table[0]["op"] == "AC" and table[0]["input rate"] == pytest.approx(0.5)
    assert total == pytest.approx((2 * 2 + 1 * 2) / 2 * E_AC)  # 3 accumulates per sample on average


def test_tiny_spikf_by_hand() -> None:
    torch.manual_seed(0)
    T = 4
    m = SpikFForecaster(4, 1, 1, patch_num=2, patch_dim=1, T=T, hidden_dim=2)  # P=2, N/2+1=2 bins
    with torch.no_grad():  # larger weights, so that the encoder and the block fire
        m.embed.weight.mul_(4)
        m.sfs[0].intra_conv.weight.fill_(1.0)
        m.sfs[0].inter_conv.weight.fill_(1.0)
    X = np.random.default_rng(1).normal(size=(64, 4, 1)).astype(np.float32)
    s = collect_firing_rates(m, X)
    r = s["rates"]
    r_in = s["block_input"][0]
    assert r_in == pytest.approx(r["embed_lif"]) and r_in > 0  # the block's input is the encoder's spikes
    assert s["head_input"] > r_in  # residual sums: multi-spike events
    r1 = r_in + r["sfs.0.freq_lif"]
    r2 = r1 + r["sfs.0.intra_lif"]
    macs = 4 + 4 * T + 2 * T  # embed (N*P*C, once), irfft (2 N log2 N per step), head2 (Hd*H per step)
    acs = T * (4 * r_in + 4 * r_in + 10 * r1 + 6 * r2 + 4 * s["head_input"])  # rfft, selector, convs (5, 3), head1
    total, table = estimate_energy(m, X)
    assert total == pytest.approx(E_MAC * macs + E_AC * acs)
    assert {row["layer"]: row["op"] for row in table}["embed (analog)"] == "MAC"
    assert sum(row["energy (J)"] for row in table) == pytest.approx(total)
