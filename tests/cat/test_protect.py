"""Protections: the L-inf budget and [0, 1] range hold exactly; PGD reaches the closed-form optimum; objectives move
in the intended direction."""

from __future__ import annotations

import pytest
import torch

from icml25.cat import (
    advdm,
    aspl,
    diffusion_loss,
    encoder_attack,
    mist,
    pgd,
    random_noise,
    sds,
    target_pattern,
)

EPS = 0.05


def _all(images, vae, ldm, sch):
    return {
        "noise": random_noise(images, EPS),
        "advdm+": advdm(images, vae, ldm, sch, label=11, eps=EPS, steps=4),
        "advdm-": advdm(images, vae, ldm, sch, label=11, eps=EPS, steps=4, sign=-1),
        "encoder": encoder_attack(images, vae, eps=EPS, steps=4),
        "mist": mist(images, vae, ldm, sch, label=11, eps=EPS, steps=4),
        "sds+": sds(images, vae, ldm, sch, label=11, eps=EPS, steps=4),
        "aspl": aspl(images, vae, ldm, sch, label=11, eps=EPS, rounds=2, surrogate_steps=2, pgd_steps=2),
    }


def test_budget_and_range_respected_exactly(images, tiny_vae, tiny_ldm) -> None:
    images = images.clone()
    images[0, 0, 0, :4] = torch.tensor([0.0, 1.0, 0.01, 0.99])  # pixels at and near the range's edges
    for name, adv in _all(images, tiny_vae, *tiny_ldm).items():
        assert adv.shape == images.shape, name
        assert float((adv - images).abs().max()) <= EPS + 1e-6, name
        assert float(adv.min()) >= 0.0 and float(adv.max()) <= 1.0, name
        assert float((adv - images).abs().max()) > 0, f"{name} did not move"


def test_pgd_reaches_the_box_corner_of_a_linear_objective() -> None:
    # maximise <w, x> over the eps-ball intersected with [0, 1]: x* = clip(x + eps sign(w)) (closed form)
    g = torch.Generator().manual_seed(1)
    x = torch.rand(2, 1, 6, 6, generator=g)
    w = torch.randn(x.shape, generator=g)
    adv = pgd(x, lambda z, _: (w * z).sum(), eps=0.1, steps=25, step_size=0.01)
    assert torch.allclose(adv, (x + 0.1 * w.sign()).clamp(0, 1), atol=1e-6)


def test_pgd_rejects_bad_budgets(images) -> None:
    for eps in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="eps"):
            pgd(images, lambda z, _: z.sum(), eps=eps, steps=1)


def test_encoder_attack_pulls_latents_towards_the_target(images, tiny_vae) -> None:
    with torch.no_grad():
        mu_t = tiny_vae.encode(target_pattern(16))[0]
        before = ((tiny_vae.encode(images)[0] - mu_t) ** 2).mean()
    adv = encoder_attack(images, tiny_vae, eps=0.1, steps=20)
    assert all(p.requires_grad for p in tiny_vae.parameters())  # frozen during the attack only
    with torch.no_grad():
        after = ((tiny_vae.encode(adv)[0] - mu_t) ** 2).mean()
    assert float(after) < float(before)


def test_advdm_signs_move_the_diffusion_loss_apart(images, tiny_vae, tiny_ldm) -> None:
    ldm, sch = tiny_ldm
    up = advdm(images, tiny_vae, ldm, sch, label=3, eps=0.1, steps=20)
    down = advdm(images, tiny_vae, ldm, sch, label=3, eps=0.1, steps=20, sign=-1)

    @torch.no_grad()
    def loss(x):  # many (t, eps) draws with a common seed: a low-variance estimate of the expected loss
        z = tiny_vae.scaling_factor * tiny_vae.encode(x)[0].repeat(64, 1, 1, 1)
        g = torch.Generator().manual_seed(5)
        return float(diffusion_loss(ldm, sch, z, torch.full((len(z),), 3), g))

    assert loss(up) > loss(images) > loss(down)


def test_random_noise_is_seeded_and_fills_the_ball() -> None:
    x = torch.full((1, 1, 16, 16), 0.5)
    a, b = random_noise(x, 0.1, seed=3), random_noise(x, 0.1, seed=3)
    assert torch.equal(a, b)
    d = (a - x).flatten()
    assert float(d.abs().max()) <= 0.1 + 1e-7 and abs(float(d.mean())) < 0.02 and float(d.std()) > 0.04


def test_images_out_of_range_or_of_the_wrong_size_are_rejected(tiny_vae) -> None:
    with pytest.raises(ValueError, match=r"images must hold images scaled to \[0, 1\]"):
        encoder_attack(torch.rand(2, 1, 16, 16) * 255, tiny_vae)
    with pytest.raises(ValueError, match="images must be 16x16"):
        encoder_attack(torch.rand(2, 1, 32, 32), tiny_vae)
    with pytest.raises(ValueError, match="images must have 1 channel"):
        encoder_attack(torch.rand(2, 3, 16, 16), tiny_vae)
    with pytest.raises(ValueError, match="images must have 4 dimension"):
        encoder_attack(torch.rand(1, 16, 16), tiny_vae)
