"""DreamBooth-style customisation of the latent diffusion model on a handful of subject latents (spec §2, §6 step 4).

DreamBooth (Ruiz et al. 2023, Eq. 2): fine-tune the denoiser so that the new token reproduces the subject, with a
prior-preservation term on generated images of other classes:

    L = E ||eps - eps_theta(z_t, t, c_token)||^2 + lambda E ||eps' - eps_theta(z'_t, t', c_prior)||^2

The subject latents are ``s * z``, z from the (possibly CAT-adapted) encoder: the customiser only ever sees latents,
which is why protections act through latent distortion (claim 1) and why CAT can undo them (claim 2).
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

from icml25.core.progress import progress
from icml25.core.validation import check_array, check_int, check_positive

from ._vae_io import module_device
from ._validation import check_module
from .adapter import decode_with_cat
from .diffusion import NoiseSchedule, ddim_sample, diffusion_loss

__all__ = ["dreambooth", "generate"]


def _latents(x: Any, name: str, shape: tuple[int, ...], device: torch.device) -> torch.Tensor:
    arr = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else x
    t = torch.as_tensor(check_array(arr, name, ndim=len(shape) + 1), dtype=torch.float32, device=device)
    if tuple(t.shape[1:]) != tuple(shape):
        raise ValueError(f"{name} must have shape (N, {', '.join(map(str, shape))}), got {tuple(t.shape)}")
    return t


def dreambooth(denoiser: nn.Module, schedule: NoiseSchedule, latents: Any, token: int, *, prior_latents: Any = None,
               prior_labels: Any = None, prior_weight: float = 1.0, steps: int = 400, lr: float = 1e-3,
               batch_size: int = 8, init_token_from: int | None = None, seed: int = 0) -> nn.Module:
    """Fine-tune a copy of ``denoiser`` on the subject ``latents`` (N, *latent_shape) under class ``token``.

    Parameters
    ----------
    latents : array or tensor (N, *latent_shape)
        Scaled subject latents s * z (from :func:`~icml25.cat.adapter.encode_with_cat`).
    token : int
        The class slot of the new concept ("sks").
    prior_latents, prior_labels : optional
        Prior-preservation set (M, *latent_shape) and its classes (M,); each step uses a batch of the same size.
    init_token_from : int, optional
        Copy this class embedding into ``token`` before training (a rare token starts near "nothing").

    Returns
    -------
    The fine-tuned copy (``denoiser`` itself is untouched).

    Examples
    --------
    >>> import torch
    >>> from icml25.cat import LatentDenoiser, NoiseSchedule
    >>> net = LatentDenoiser((2, 4, 4), hidden=16)
    >>> tuned = dreambooth(net, NoiseSchedule(20), torch.randn(4, 2, 4, 4), token=11, steps=2)
    >>> tuned is not net
    True
    """
    check_module(denoiser, "denoiser")
    dev = module_device(denoiser)
    z = _latents(latents, "latents", denoiser.latent_shape, dev)
    token = check_int(token, "token", low=0, high=denoiser.n_classes - 1)
    steps = check_int(steps, "steps", low=1)
    lr = check_positive(lr, "lr")
    batch_size = check_int(batch_size, "batch_size", low=1)
    prior_weight = check_positive(prior_weight, "prior_weight", allow_zero=True)
    seed = check_int(seed, "seed", low=0)
    if (prior_latents is None) != (prior_labels is None):
        raise ValueError("prior_latents and prior_labels must be given together")
    if prior_latents is not None:
        zp = _latents(prior_latents, "prior_latents", denoiser.latent_shape, dev)
        cp = torch.as_tensor(check_array(prior_labels, "prior_labels", ndim=1, dtype=int, low=0,
                                         high=denoiser.n_classes - 1), dtype=torch.long, device=dev)
        if len(cp) != len(zp):
            raise ValueError(f"prior_labels must have one entry per prior latent ({len(zp)}), got {len(cp)}")
    if init_token_from is not None:
        src = check_int(init_token_from, "init_token_from", low=0, high=denoiser.n_classes - 1)
        if not isinstance(getattr(denoiser, "class_emb", None), nn.Embedding):
            raise ValueError("init_token_from needs a denoiser with a class_emb table (LatentDenoiser, UNetDenoiser "
                             "with prompt embeddings); with a text encoder the token's prompt defines its start")
    model = copy.deepcopy(denoiser)
    for p in model.parameters():
        p.requires_grad_(True)
    if init_token_from is not None:
        with torch.no_grad():
            model.class_emb.weight[token] = model.class_emb.weight[src]
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr, foreach=True)
    c = torch.full((batch_size,), token, dtype=torch.long, device=dev)
    model.train()
    for _ in progress(range(steps), "DreamBooth"):
        idx = torch.randint(len(z), (batch_size,), generator=g, device=g.device).to(dev)
        loss = diffusion_loss(model, schedule, z[idx], c, g)
        if prior_latents is not None and prior_weight > 0:
            j = torch.randint(len(zp), (batch_size,), generator=g, device=g.device).to(dev)
            loss = loss + prior_weight * diffusion_loss(model, schedule, zp[j], cp[j], g)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def generate(denoiser: nn.Module, schedule: NoiseSchedule, vae: nn.Module, label: int, n: int = 64, *,
             steps: int = 50, seed: int = 0, guidance_scale: float = 1.0, null_label: int | None = None,
             clip_x0: float | None = None) -> torch.Tensor:
    """Sample ``n`` images of class ``label``: DDIM latents decoded by ``vae`` (adapted decoder if it has one).

    ``guidance_scale``/``null_label``: classifier-free guidance, ``clip_x0`` the clamp of the predicted clean latent,
    as in :func:`~icml25.cat.diffusion.ddim_sample`.
    Returns images (n, C, S, S) in [0, 1], on the VAE's device.

    Examples
    --------
    >>> from icml25.cat import LatentDenoiser, NoiseSchedule, TinyVAE
    >>> generate(LatentDenoiser((2, 4, 4), hidden=16), NoiseSchedule(20), TinyVAE(width=8), 3, 2, steps=4).shape
    torch.Size([2, 1, 16, 16])
    """
    check_module(denoiser, "denoiser")
    check_module(vae, "vae")
    label = check_int(label, "label", low=0, high=denoiser.n_classes - 1)
    n = check_int(n, "n", low=1)
    z = ddim_sample(denoiser, schedule, [label] * n, steps=steps, seed=seed, guidance_scale=guidance_scale,
                    null_label=null_label, clip_x0=clip_x0)
    return decode_with_cat(vae, z)
