"""The latent diffusion model against closed forms: the schedule's alpha_bar, DDIM with the exact denoiser of a
point mass, and DreamBooth learning a new token."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from icml25.cat import NoiseSchedule, ddim_sample, diffusion_loss, dreambooth


def test_alpha_bar_is_the_product_of_one_minus_beta() -> None:
    s = NoiseSchedule(200, 1e-4, 0.1)
    betas = np.linspace(1e-4, 0.1, 200)
    assert np.allclose(s.alpha_bar.numpy(), np.cumprod(1 - betas), rtol=1e-5)


class _Oracle(nn.Module):
    """The exact eps-predictor when the data is the single latent z0: eps = (z_t - sqrt(ab) z0) / sqrt(1 - ab)."""

    def __init__(self, z0: torch.Tensor, schedule: NoiseSchedule) -> None:
        super().__init__()
        self.z0, self.s = z0, schedule
        self.latent_shape, self.n_classes = tuple(z0.shape), 12

    def forward(self, z, t, c):
        ab = self.s.alpha_bar[t].view(-1, 1, 1, 1)
        return (z - ab.sqrt() * self.z0) / (1 - ab).sqrt()


@pytest.mark.parametrize("eta", [0.0, 1.0])
def test_ddim_with_the_exact_denoiser_returns_the_point_mass(eta) -> None:
    s = NoiseSchedule(100)
    z0 = torch.randn(2, 4, 4, generator=torch.Generator().manual_seed(0))
    out = ddim_sample(_Oracle(z0, s), s, [0, 1, 2], steps=10, eta=eta)
    assert torch.allclose(out, z0.expand(3, -1, -1, -1), atol=1e-4)
    t = torch.randint(100, (3,))
    g = torch.Generator().manual_seed(1)
    assert float(diffusion_loss(_Oracle(z0, s), s, z0.expand(3, -1, -1, -1), torch.zeros(3, dtype=torch.long), g)) < 1e-8
    del t


def test_dreambooth_teaches_the_new_token_its_subject() -> None:
    from icml25.cat import LatentDenoiser

    torch.manual_seed(0)
    ldm, s = LatentDenoiser((2, 4, 4), n_classes=12, hidden=256), NoiseSchedule(50)
    z0 = 2.0 * torch.ones(1, 2, 4, 4)
    before = ddim_sample(ldm, s, [11] * 16, steps=25, seed=1)
    tuned = dreambooth(ldm, s, z0.repeat(4, 1, 1, 1), 11, steps=600, lr=1e-3, seed=0)
    after = ddim_sample(tuned, s, [11] * 16, steps=25, seed=1)
    err_after, err_before = float((after - z0).pow(2).mean()), float((before - z0).pow(2).mean())
    assert err_after < 0.5 and err_after < err_before / 8
    assert torch.equal(ddim_sample(ldm, s, [11] * 16, steps=25, seed=1), before)  # the original is untouched


def test_dreambooth_rejects_mismatched_latents(tiny_ldm) -> None:
    ldm, s = tiny_ldm
    with pytest.raises(ValueError, match="latents must have shape"):
        dreambooth(ldm, s, torch.zeros(3, 4, 4, 4), 11, steps=1)
    with pytest.raises(ValueError, match="prior_latents and prior_labels"):
        dreambooth(ldm, s, torch.zeros(3, 2, 4, 4), 11, steps=1, prior_latents=torch.zeros(3, 2, 4, 4))
