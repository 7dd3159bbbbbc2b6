"""Shapes through every block, mask semantics, head BatchNorm axis, RevIN, DLinear vs numpy, paper-size smoke."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from icml25.spikf import DLinear, RevIN, SpikFForecaster  # noqa: E402
from icml25.spikf.train import evaluate, fit  # noqa: E402


def _small(**kw):
    torch.manual_seed(0)
    return SpikFForecaster(seq_len=48, pred_len=12, n_vars=3, patch_num=12, patch_dim=8, T=3, hidden_dim=16, **kw)


def test_shapes_through_every_block() -> None:
    m = _small(blocks=2)
    x = torch.randn(5, 48, 3)
    xn = m.revin.normalise(x)
    s0 = m.encode(xn)
    assert s0.shape == (3, 5, 8, 12, 3) and set(s0.unique().tolist()) <= {0.0, 1.0}
    blk = m.sfs[0]
    mask = blk.mask(s0.permute(0, 1, 2, 4, 3))
    assert mask.shape == (1, 5, 8, 3, 7) and set(mask.unique().tolist()) <= {0.0, 1.0}
    h = blk(s0)
    assert h.shape == s0.shape and h.max() <= 4  # residual sums: at most 1 + 3 spikes
    assert m.sfs[1](h).shape == s0.shape
    assert m.head(h).shape == (3, 5, 12, 3)
    assert m(x).shape == (3, 5, 12, 3)
    assert torch.allclose(m.predict(x), m(x).mean(0))


def test_odd_patch_number_and_head_batchnorm_axis() -> None:
    m = SpikFForecaster(seq_len=45, pred_len=4, n_vars=5, patch_num=9, patch_dim=4, T=2, hidden_dim=8)
    assert m(torch.randn(3, 45, 5)).shape == (2, 3, 4, 5)
    assert m.head_bn.num_features == 5  # BatchNorm1d over the variables, not the hidden width


def test_mask_fires_iff_count_reaches_tau() -> None:
    m = _small()
    lif = m.sfs[0].mask_lif
    counts = torch.tensor([[0.0, 1.0, 1.9, 2.0, 3.0]])
    assert lif(counts).tolist() == [[0.0, 0.0, 0.0, 1.0, 1.0]]


def test_ablation_uses_all_ones_mask_and_learned_mask_gets_gradient() -> None:
    x, y = torch.randn(6, 48, 3), torch.randn(6, 12, 3)
    m = _small(frequency_selection=False)
    m.set_recording(True)
    m(x)
    assert torch.all(m.sfs[0].last_mask == 1)
    assert "sfs.0.selector_lif" not in m.firing_rates()
    m2 = _small()
    (m2(x) - y).abs().mean().backward()
    g = m2.sfs[0].selector.weight.grad
    assert g is not None and float(g.abs().sum()) > 0  # the mask is a spike: gradient only via the surrogate


def test_revin_round_trip_and_statistics() -> None:
    x = torch.randn(4, 30, 2) * 5 + 3
    r = RevIN()
    z = r.normalise(x)
    assert torch.allclose(z.mean(1), torch.zeros(4, 2), atol=1e-5)
    assert torch.allclose(z.var(1, unbiased=False), torch.ones(4, 2), atol=1e-3)
    assert torch.allclose(r.denormalise(z), x, atol=1e-5)


def test_dlinear_matches_numpy() -> None:
    torch.manual_seed(1)
    m = DLinear(20, 5, 2, kernel_size=5)
    x = np.random.default_rng(0).normal(size=(3, 20, 2)).astype(np.float32)
    pad = np.concatenate([np.repeat(x[:, :1], 2, 1), x, np.repeat(x[:, -1:], 2, 1)], axis=1)
    trend = np.stack([pad[:, i:i + 5].mean(1) for i in range(20)], axis=1)
    ws, bs = m.seasonal.weight.detach().numpy(), m.seasonal.bias.detach().numpy()
    wt, bt = m.trend.weight.detach().numpy(), m.trend.bias.detach().numpy()
    ref = np.einsum("hl,bld->bhd", ws, x - trend) + bs[None, :, None] + np.einsum("hl,bld->bhd", wt, trend) \
        + bt[None, :, None]
    assert np.allclose(m(torch.from_numpy(x)).detach().numpy(), ref, atol=1e-5)


def test_bad_inputs_to_models() -> None:
    m = _small()
    with pytest.raises(ValueError, match="shape"):
        m(torch.randn(2, 48, 4))  # wrong number of variables
    with pytest.raises(ValueError, match="finite"):
        m(torch.full((2, 48, 3), float("nan")))
    with pytest.raises(ValueError, match="patch_num"):
        SpikFForecaster(seq_len=96, pred_len=4, n_vars=1, patch_num=7)
    with pytest.raises(TypeError, match="x"):
        m(np.zeros((2, 48, 3)))


def test_paper_size_configuration_runs_one_step() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    m = SpikFForecaster(seq_len=96, pred_len=96, n_vars=7)  # paper defaults: N=48, C=32, T=16, Hd=720
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(4, 96, 7)).astype(np.float32), rng.normal(size=(4, 96, 7)).astype(np.float32)
    res = fit(m, (X, Y), (X[:2], Y[:2]), epochs=1, batch_size=4)
    assert len(res.train_loss) == 1 and np.isfinite(res.train_loss[0])
    assert set(evaluate(m, (X[:2], Y[:2]))) == {"mae", "mse"}
