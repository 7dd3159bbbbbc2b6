"""LIF neuron against a hand-written scalar loop; the surrogate gradient against finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from icml25.spikf import LIF, spike  # noqa: E402


def _loop_lif(x: np.ndarray, tau: float, theta: float) -> np.ndarray:
    out = np.zeros_like(x)
    for j in range(x.shape[1]):
        v = 0.0
        for t in range(x.shape[0]):
            h = v + (x[t, j] - v) / tau
            s = 1.0 if h >= theta else 0.0
            v = 0.0 if s else h
            out[t, j] = s
    return out


@pytest.mark.parametrize("tau,theta", [(2.0, 1.0), (2.5, 0.1), (1.0, 0.7)])
def test_lif_matches_scalar_loop(tau: float, theta: float) -> None:
    x = np.random.default_rng(0).normal(0.8, 1.0, size=(12, 50))
    got = LIF(tau, theta)(torch.from_numpy(x)).numpy()
    assert np.array_equal(got, _loop_lif(x, tau, theta))
    assert 0 < got.mean() < 1


def test_surrogate_gradient_is_sigmoid_derivative() -> None:
    x = torch.linspace(-2, 2, 41, dtype=torch.float64, requires_grad=True)
    spike(x, alpha=4.0).sum().backward()
    sig = lambda z: 1 / (1 + math.exp(-4 * z))  # noqa: E731
    eps = 1e-6
    fd = [(sig(z + eps) - sig(z - eps)) / (2 * eps) for z in x.detach().tolist()]
    assert np.allclose(x.grad.numpy(), fd, atol=1e-6)


def test_lif_gradient_and_detach_reset() -> None:
    x = torch.full((4, 3), 1.5, dtype=torch.float64, requires_grad=True)
    g = []
    for detach in (True, False):
        x.grad = None
        LIF(2.0, 1.0, detach_reset=detach)(x).sum().backward()
        g.append(x.grad.clone())
    assert torch.all(g[0] != 0)
    assert not torch.allclose(g[0], g[1]), "the reset path must contribute a gradient when not detached"


def test_lif_records_rate() -> None:
    lif = LIF()
    lif.record = True
    s = lif(torch.full((4, 2), 1.5))
    assert lif.last_rate == pytest.approx(float(s.mean())) == 0.5


@pytest.mark.skipif(not __import__("importlib").util.find_spec("spikingjelly"), reason="needs spikingjelly")
def test_matches_spikingjelly() -> None:  # pragma: no cover - optional peer library
    from spikingjelly.activation_based import neuron, surrogate

    x = torch.randn(8, 20) + 1
    ref = neuron.LIFNode(tau=2.0, surrogate_function=surrogate.Sigmoid(alpha=4.0), step_mode="m")(x)
    assert torch.equal(LIF(2.0, 1.0)(x), ref)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="tau"):
        LIF(tau=0.5)
    with pytest.raises(ValueError, match="v_threshold"):
        LIF(v_threshold=-1.0)
    with pytest.raises(TypeError, match="x"):
        spike([1.0, 2.0])
