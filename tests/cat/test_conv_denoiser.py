"""The convolutional latent denoiser of the toy worlds (issue 50): a small randomly initialised diffusers
``UNet2DConditionModel`` behind ``UNetDenoiser`` (``sd.small_unet_denoiser``, ``Config(denoiser="unet")``)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

pytest.importorskip("diffusers")

from icml25.cat import NoiseSchedule, diffusion_loss, train_denoiser  # noqa: E402
from icml25.cat.reproduce import Config  # noqa: E402
from icml25.cat.sd import small_unet_denoiser  # noqa: E402


def _net(seed: int = 0):
    return small_unet_denoiser((4, 8, 8), NoiseSchedule(50, beta_end=0.05), n_classes=12, width=8,
                               cross_attention_dim=8, seed=seed)


def test_shapes_and_seeded_init() -> None:
    net = _net()
    z, t, c = torch.randn(3, 4, 8, 8), torch.tensor([0, 10, 49]), torch.tensor([0, 5, 11])
    out = net(z, t, c)
    assert out.shape == (3, 4, 8, 8) and torch.isfinite(out).all()
    assert net.n_classes == 12 and net.latent_shape == (4, 8, 8)
    assert torch.equal(_net().class_emb.weight, net.class_emb.weight)
    assert torch.equal(_net()(z, t, c), out)  # the seed fixes the initialisation, the global RNG does not
    assert not torch.equal(_net(1).class_emb.weight, net.class_emb.weight)


def test_class_conditioning_changes_the_output() -> None:
    net = _net()
    z, t = torch.randn(2, 4, 8, 8), torch.tensor([5, 5])
    with torch.no_grad():
        a, b = net(z, t, torch.tensor([0, 0])), net(z, t, torch.tensor([3, 11]))
    assert (a - b).abs().max() > 1e-4


def test_a_few_steps_reduce_the_diffusion_loss() -> None:
    torch.manual_seed(0)
    sch = NoiseSchedule(50, beta_end=0.05)
    net = _net()
    z = torch.randn(6, 4, 8, 8)
    labels = torch.tensor([0, 1, 2, 0, 1, 2])

    def loss() -> float:
        g = torch.Generator().manual_seed(7)
        with torch.no_grad():
            return float(torch.stack([diffusion_loss(net, sch, z, labels, g) for _ in range(8)]).mean())

    before = loss()
    train_denoiser(net, sch, z, labels.tolist(), steps=40, batch_size=6, lr=3e-3, seed=0)
    assert loss() < 0.9 * before


def test_config_knob_builds_the_unet() -> None:
    from icml25.cat._pipeline import make_denoiser
    from icml25.cat.sd import UNetDenoiser

    cfg = dataclasses.replace(Config.photos(), denoiser="unet", unet_width=8)
    net = make_denoiser(cfg, (4, 8, 8), NoiseSchedule(20), seed=0)
    assert isinstance(net, UNetDenoiser) and net.n_classes == 12
    with pytest.raises(ValueError):
        Config(denoiser="transformer")
    with pytest.raises(ValueError):
        Config(denoiser="unet", unet_width=12)
