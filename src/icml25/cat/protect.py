"""Protective perturbations at an L-infinity budget, through a frozen VAE (spec §2 "protections attacked", §6 step 5).

All of them run projected gradient steps in pixel space on images in [0, 1]: x <- Proj(x + alpha sign(grad J)),
with Proj the intersection of the eps-ball around the clean image and [0, 1] (Madry et al. 2018). Objectives J:

- ``advdm`` (AdvDM, Liang et al. 2023): +/- the diffusion training loss of Eq. 14 through the encoder, fresh (t, eps)
  every step (EOT over the diffusion noise);
- ``encoder_attack`` (PhotoGuard encoder attack / Mist textural loss / Glaze analogue): -||mu_E(x) - mu_E(target)||^2;
- ``mist`` (Liang & Wu 2023): AdvDM(+) loss - ``weight`` * the encoder-target distance;
- ``sds`` (Xue et al. 2024): AdvDM with the denoiser Jacobian skipped, grad_z = w (eps_hat - eps) (score distillation);
- ``aspl`` (Anti-DreamBooth, Van Le et al. 2023): rounds of surrogate fine-tuning alternating with PGD;
- ``random_noise``: the naive baseline, uniform noise in the same ball.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from icml25.core.progress import progress
from icml25.core.validation import check_int, check_option, check_positive, check_real

from ._vae_io import module_device, posterior, posterior_sample, randn_like, to_model_latents
from ._validation import as_images, check_module, vae_geometry
from .diffusion import NoiseSchedule, diffusion_loss

__all__ = ["random_noise", "pgd", "advdm", "encoder_attack", "mist", "sds", "aspl", "target_pattern"]


def _budget(eps: Any) -> float:
    return check_real(eps, "eps", low=0.0, high=1.0, low_open=True)


def _project(x_adv: torch.Tensor, x: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0.0, 1.0)


def random_noise(images: Any, eps: float = 0.1, seed: int = 0) -> torch.Tensor:
    """Uniform noise in the L-inf ball: clip(x + U[-eps, eps], 0, 1) (the naive "protection" baseline).

    Examples
    --------
    >>> import torch
    >>> x = torch.rand(2, 1, 16, 16)
    >>> bool((random_noise(x, eps=0.05) - x).abs().max() <= 0.05 + 1e-7)
    True
    """
    x = as_images(images, "images")
    eps = _budget(eps)
    g = torch.Generator().manual_seed(check_int(seed, "seed", low=0))
    return _project(x + (2 * torch.rand(x.shape, generator=g, device=g.device).to(x.device) - 1) * eps, x, eps)


def pgd(images: Any, objective: Callable[[torch.Tensor, torch.Generator], torch.Tensor], *, eps: float = 0.1,
        steps: int = 100, step_size: float | None = None, seed: int = 0, init: Any = None,
        desc: str = "PGD") -> torch.Tensor:
    """Maximise ``objective(x, generator)`` (a scalar) over ||x - images||_inf <= eps, x in [0, 1], by signed PGD.

    ``step_size`` defaults to eps / 20 (spec §6). The start is ``init`` projected onto the ball (default: the clean
    image).

    Examples
    --------
    >>> import torch
    >>> x = torch.full((1, 1, 4, 4), 0.5)
    >>> adv = pgd(x, lambda z, g: z.sum(), eps=0.1, steps=30)
    >>> round(float(adv.max()), 4)
    0.6
    """
    x = as_images(images, "images")
    eps = _budget(eps)
    steps = check_int(steps, "steps", low=1)
    alpha = eps / 20 if step_size is None else check_positive(step_size, "step_size")
    g = torch.Generator().manual_seed(check_int(seed, "seed", low=0))
    x_adv = x.clone() if init is None else _project(as_images(init, "init").reshape(x.shape), x, eps)
    for _ in progress(range(steps), desc):
        x_adv.requires_grad_(True)
        (grad,) = torch.autograd.grad(objective(x_adv, g), x_adv)
        x_adv = _project(x_adv.detach() + alpha * grad.sign(), x, eps)
    return x_adv.detach()


def _posterior(vae: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # images stay on the CPU; a GPU VAE gets (and differentiates) a copy; a diffusers VAE works on [-1, 1]
    return posterior(vae, x)


def _latent_sample(vae: nn.Module, x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    return to_model_latents(vae, posterior_sample(vae, x, g))


def _frozen(*modules: nn.Module) -> None:
    for m in modules:
        m.eval()
        for p in m.parameters():
            p.requires_grad_(False)


@contextlib.contextmanager
def _frozen_during(*modules: nn.Module) -> Iterator[None]:
    """Eval mode and no parameter gradients while the attack runs; the caller's flags and modes are restored after
    (a CAT adapter or a denoiser attacked before it is trained keeps its trainable weights)."""
    flags = [(p, p.requires_grad) for m in modules for p in m.parameters()]
    modes = [(sub, sub.training) for m in modules for sub in m.modules()]
    _frozen(*modules)
    try:
        yield
    finally:
        for p, r in flags:
            p.requires_grad_(r)
        for sub, t in modes:
            sub.training = t


def _prep(images: Any, vae: Any) -> torch.Tensor:
    check_module(vae, "vae")
    ch, size = vae_geometry(vae)
    return as_images(images, "images", channels=ch, size=size)


def _labels(label: Any, n: int, denoiser: nn.Module) -> torch.Tensor:
    label = check_int(label, "label", low=0, high=denoiser.n_classes - 1)
    return torch.full((n,), label, dtype=torch.long, device=module_device(denoiser))


def target_pattern(size: int = 16, channels: int = 1, period: int = 4, device: Any = "cpu") -> torch.Tensor:
    """The fixed target image of the target attacks: a checkerboard of ``period``-pixel squares, (1, C, S, S), on
    ``device`` (the CPU by default, where the attacks keep their images).

    (Mist and PhotoGuard pull latents towards a fixed textured/grey target image.)

    Examples
    --------
    >>> target_pattern(8, period=4)[0, 0, :, 0].tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    """
    size = check_int(size, "size", low=1)
    channels = check_int(channels, "channels", low=1)
    period = check_int(period, "period", low=1)
    i = torch.arange(size, device=device) // period
    board = ((i[:, None] + i[None, :]) % 2 == 0).float()
    return board.expand(1, channels, size, size).clone()


def _target(target: Any, x: torch.Tensor, channels: int, size: int | None) -> torch.Tensor:
    """The target image of the target attacks, (1, C, H, W) like ``x`` (default: :func:`target_pattern`)."""
    h, w = x.shape[-2:]
    if target is None:
        return target_pattern(size or max(h, w), channels)[..., :h, :w]
    tgt = as_images(target, "target", channels=channels, size=size)
    if tuple(tgt.shape[-2:]) != (h, w):
        raise ValueError(f"target must have the images' height and width {(h, w)}, got shape {tuple(tgt.shape)}")
    return tgt


def advdm(images: Any, vae: nn.Module, denoiser: nn.Module, schedule: NoiseSchedule, *, label: int,
          eps: float = 0.1, steps: int = 100, sign: int = 1, seed: int = 0) -> torch.Tensor:
    """AdvDM(+) (``sign=1``: maximise) / AdvDM(-) (``sign=-1``: minimise) the diffusion loss of s * E(x) under class
    ``label``; fresh t, eps and posterior sample every step. Returns protected images (N, C, S, S) in [0, 1].

    Examples
    --------
    >>> import torch
    >>> from icml25.cat import TinyVAE, LatentDenoiser, NoiseSchedule
    >>> x = torch.rand(2, 1, 16, 16)
    >>> adv = advdm(x, TinyVAE(width=8), LatentDenoiser(hidden=16), NoiseSchedule(20), label=11, eps=0.05, steps=2)
    >>> bool((adv - x).abs().max() <= 0.05 + 1e-7)
    True
    """
    x = _prep(images, vae)
    check_module(denoiser, "denoiser")
    sign = check_option(sign, "sign", (1, -1))
    c = _labels(label, len(x), denoiser)

    def objective(xa: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        return sign * diffusion_loss(denoiser, schedule, _latent_sample(vae, xa, g), c, g)

    with _frozen_during(vae, denoiser):
        return pgd(x, objective, eps=eps, steps=steps, seed=seed, desc=f"AdvDM({'+' if sign > 0 else '-'})")


def encoder_attack(images: Any, vae: nn.Module, target: Any = None, *, eps: float = 0.1, steps: int = 100,
                   seed: int = 0) -> torch.Tensor:
    """Encoder/target attack: minimise ||mu_E(x_a) - mu_E(target)||^2 (PhotoGuard encoder attack, Mist textural
    loss). ``target`` is one image (1, C, S, S) in [0, 1]; default :func:`target_pattern`.

    Examples
    --------
    >>> import torch
    >>> from icml25.cat import TinyVAE
    >>> x = torch.rand(2, 1, 16, 16)
    >>> bool((encoder_attack(x, TinyVAE(width=8), eps=0.1, steps=2) - x).abs().max() <= 0.1 + 1e-7)
    True
    """
    x = _prep(images, vae)
    ch, size = vae_geometry(vae)
    tgt = _target(target, x, ch, size)

    def objective(xa: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        return -((_posterior(vae, xa)[0] - mu_t) ** 2).mean()

    with _frozen_during(vae):
        with torch.no_grad():
            mu_t = _posterior(vae, tgt[:1])[0]
        return pgd(x, objective, eps=eps, steps=steps, seed=seed, desc="encoder attack")


def mist(images: Any, vae: nn.Module, denoiser: nn.Module, schedule: NoiseSchedule, *, label: int,
         target: Any = None, weight: float = 1.0, eps: float = 0.1, steps: int = 100, seed: int = 0) -> torch.Tensor:
    """Mist: maximise the AdvDM loss - ``weight`` * ||mu_E(x_a) - mu_E(target)||^2 (semantic + textural loss).

    Examples
    --------
    >>> import torch
    >>> from icml25.cat import TinyVAE, LatentDenoiser, NoiseSchedule
    >>> x = torch.rand(2, 1, 16, 16)
    >>> adv = mist(x, TinyVAE(width=8), LatentDenoiser(hidden=16), NoiseSchedule(20), label=0, eps=0.1, steps=2)
    >>> tuple(adv.shape)
    (2, 1, 16, 16)
    """
    x = _prep(images, vae)
    check_module(denoiser, "denoiser")
    ch, size = vae_geometry(vae)
    tgt = _target(target, x, ch, size)
    weight = check_positive(weight, "weight", allow_zero=True)
    c = _labels(label, len(x), denoiser)

    def objective(xa: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        sem = diffusion_loss(denoiser, schedule, _latent_sample(vae, xa, g), c, g)
        return sem - weight * ((_posterior(vae, xa)[0] - mu_t) ** 2).mean()

    with _frozen_during(vae, denoiser):
        with torch.no_grad():
            mu_t = _posterior(vae, tgt[:1])[0]
        return pgd(x, objective, eps=eps, steps=steps, seed=seed, desc="Mist")


def sds(images: Any, vae: nn.Module, denoiser: nn.Module, schedule: NoiseSchedule, *, label: int,
        eps: float = 0.1, steps: int = 100, sign: int = 1, seed: int = 0) -> torch.Tensor:
    """SDS(+)/SDS(-): AdvDM with the denoiser Jacobian skipped. The surrogate objective
    sum(stopgrad(eps_hat - eps) * z_t) has gradient (eps_hat - eps) dz_t/dz through the encoder only.

    Examples
    --------
    >>> import torch
    >>> from icml25.cat import TinyVAE, LatentDenoiser, NoiseSchedule
    >>> x = torch.rand(2, 1, 16, 16)
    >>> adv = sds(x, TinyVAE(width=8), LatentDenoiser(hidden=16), NoiseSchedule(20), label=0, eps=0.1, steps=2)
    >>> bool(adv.min() >= 0 and adv.max() <= 1)
    True
    """
    x = _prep(images, vae)
    check_module(denoiser, "denoiser")
    sign = check_option(sign, "sign", (1, -1))
    c = _labels(label, len(x), denoiser)

    def objective(xa: torch.Tensor, g: torch.Generator) -> torch.Tensor:
        z = _latent_sample(vae, xa, g)
        t = torch.randint(schedule.timesteps, (len(z),), generator=g, device=g.device).to(z.device)
        e = randn_like(z, g)
        zt = schedule.add_noise(z, e, t)
        with torch.no_grad():
            resid = denoiser(zt, t, c) - e
        return sign * (resid * zt).sum() / zt.numel()

    with _frozen_during(vae, denoiser):
        return pgd(x, objective, eps=eps, steps=steps, seed=seed, desc=f"SDS({'+' if sign > 0 else '-'})")


def aspl(images: Any, vae: nn.Module, denoiser: nn.Module, schedule: NoiseSchedule, *, label: int,
         eps: float = 0.1, rounds: int = 10, surrogate_steps: int = 5, pgd_steps: int = 5, lr: float = 1e-3,
         seed: int = 0) -> torch.Tensor:
    """Anti-DreamBooth ASPL: per round, (a) a copy of the surrogate is fine-tuned ``surrogate_steps`` on the clean
    latents, (b) ``pgd_steps`` PGD steps maximise that copy's diffusion loss, (c) the surrogate itself is fine-tuned
    on the current protected latents. ``denoiser`` is not modified (a private copy is trained).

    Examples
    --------
    >>> import torch
    >>> from icml25.cat import TinyVAE, LatentDenoiser, NoiseSchedule
    >>> x = torch.rand(2, 1, 16, 16)
    >>> adv = aspl(x, TinyVAE(width=8), LatentDenoiser(hidden=16), NoiseSchedule(20), label=0, rounds=1)
    >>> bool((adv - x).abs().max() <= 0.1 + 1e-7)
    True
    """
    x = _prep(images, vae)
    check_module(denoiser, "denoiser")
    eps = _budget(eps)
    rounds = check_int(rounds, "rounds", low=1)
    surrogate_steps = check_int(surrogate_steps, "surrogate_steps", low=1)
    pgd_steps = check_int(pgd_steps, "pgd_steps", low=1)
    lr = check_positive(lr, "lr")
    seed = check_int(seed, "seed", low=0)
    c = _labels(label, len(x), denoiser)
    with _frozen_during(vae):
        return _aspl_rounds(x, vae, denoiser, schedule, c, eps, rounds, surrogate_steps, pgd_steps, lr, seed)


def _aspl_rounds(x: torch.Tensor, vae: nn.Module, denoiser: nn.Module, schedule: NoiseSchedule, c: torch.Tensor,
                 eps: float, rounds: int, surrogate_steps: int, pgd_steps: int, lr: float, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    surrogate = copy.deepcopy(denoiser)

    def finetune(model: nn.Module, imgs: torch.Tensor) -> None:
        for p in model.parameters():
            p.requires_grad_(True)
        opt = torch.optim.Adam(model.parameters(), lr=lr, foreach=True)
        model.train()
        for _ in range(surrogate_steps):
            with torch.no_grad():
                z = _latent_sample(vae, imgs, g)
            loss = diffusion_loss(model, schedule, z, c, g)
            opt.zero_grad()
            loss.backward()
            opt.step()
        _frozen(model)

    x_adv = x.clone()
    for r in progress(range(rounds), "ASPL rounds"):
        attacker = copy.deepcopy(surrogate)
        finetune(attacker, x)

        def objective(xa: torch.Tensor, gen: torch.Generator, model: nn.Module = attacker) -> torch.Tensor:
            return diffusion_loss(model, schedule, _latent_sample(vae, xa, gen), c, gen)

        x_adv = pgd(x, objective, eps=eps, steps=pgd_steps, seed=seed + r + 1, init=x_adv, desc="ASPL PGD")
        finetune(surrogate, x_adv)
    return x_adv
