"""SpikF and DLinear run on the ``meta`` device (issue 45 item 3): forward, the per-step training loss and backward.

The input check ``torch.isfinite(x).all()`` of ``model._check_input`` needs values, which a meta tensor lacks, so it is
replaced by a no-op here; everything after it (RevIN, patch encoding, LIF, FFT mask, head) runs on meta.
"""

import pytest

torch = pytest.importorskip("torch")

from icml25.spikf import model as model_mod  # noqa: E402
from icml25.spikf.model import DLinear, SpikFForecaster  # noqa: E402
from icml25.spikf.train import _loss  # noqa: E402

META = torch.device("meta")


@pytest.fixture(autouse=True)
def _no_value_check(monkeypatch):
    monkeypatch.setattr(model_mod, "_check_input", lambda x, seq_len, n_vars: None)


@pytest.mark.parametrize("frequency_selection", [True, False])
def test_spikf_forward_loss_backward_on_meta(frequency_selection):
    with META:
        m = SpikFForecaster(seq_len=32, pred_len=8, n_vars=3, patch_num=8, patch_dim=4, T=2, hidden_dim=16,
                            frequency_selection=frequency_selection)
        x, y = torch.randn(5, 32, 3), torch.randn(5, 8, 3)
    out = m(x)
    assert out.device.type == "meta" and out.shape == (2, 5, 8, 3)
    assert m.predict(x).shape == (5, 8, 3)
    loss = _loss(out, y, "mae")
    loss.backward()
    assert loss.device.type == "meta"
    assert all(p.grad.device.type == "meta" for p in m.parameters() if p.grad is not None)
    assert m.head1.weight.grad is not None


def test_dlinear_on_meta():
    with META:
        m = DLinear(seq_len=32, pred_len=8, n_vars=3, kernel_size=5)
        x, y = torch.randn(4, 32, 3), torch.randn(4, 8, 3)
    out = m(x)
    assert out.device.type == "meta" and out.shape == (4, 8, 3)
    _loss(out, y, "mse").backward()
    assert m.trend.weight.grad.device.type == "meta"
