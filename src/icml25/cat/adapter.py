"""CAT adapters: LoRA on the VAE, trained to reconstruct the protected images (spec §2 "CAT adapters").

The released trainer (senp98/CAT, ``train_cat_adapter.py``) adds peft LoRA (rank R, alpha = R so the scale is 1,
Gaussian A ~ N(0, 1/R), B = 0: the adapted VAE starts identical) to the VAE's encoder and/or decoder convs and
attention projections, and minimises

    L_cat(dphi, domega) = mean || D_{omega0 + domega}(z) - x_a ||^2,   z ~ q_{phi0 + dphi}(z | x_a)

over the adapter weights only, on the protected images x_a of one subject. The same functions work on this
package's :class:`~icml25.cat.vae.TinyVAE` and on a diffusers ``AutoencoderKL`` (images in [0, 1] here; mapped to
[-1, 1] for diffusers).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from icml25.core.progress import progress
from icml25.core.validation import check_int, check_option, check_positive

from ._vae_io import decode, from_model_latents, module_device, posterior, posterior_sample, to_model_latents
from ._validation import as_images, check_module, vae_geometry

__all__ = ["TARGET_PATTERNS", "add_cat_adapter", "cat_parameters", "train_cat_adapter", "encode_with_cat",
           "decode_with_cat"]

_NAMES = r"(conv|conv1|conv2|to_q|to_k|to_v|to_out\.0)"
#: the regexes of the official code (peft matches them against full module names with re.fullmatch)
TARGET_PATTERNS = {
    "encoder": rf".*encoder.*{_NAMES}$",
    "decoder": rf".*decoder.*{_NAMES}$",
    "both": rf"(.*\.)?{_NAMES}$",
}


def add_cat_adapter(vae: nn.Module, rank: int = 8, target: str = "encoder", *, alpha: float | None = None,
                    adapter_name: str = "cat") -> nn.Module:
    """Insert CAT LoRA adapters into ``vae`` in place (peft ``inject_adapter_in_model``) and freeze the base weights.

    Parameters
    ----------
    vae : TinyVAE or diffusers AutoencoderKL
    rank : int
        LoRA rank R (official default 128; the toy reproduction uses 8).
    target : {"encoder", "decoder", "both"}
        Which part is adapted (:data:`TARGET_PATTERNS`; the official code's regexes).
    alpha : float, optional
        LoRA alpha; default ``rank`` (scale alpha / R = 1, as released).

    Returns
    -------
    The same module, with ``lora_A``/``lora_B`` sub-modules on the targeted layers; only those require grad.

    Examples
    --------
    >>> from icml25.cat import TinyVAE
    >>> vae = add_cat_adapter(TinyVAE(width=8), rank=2, target="encoder")
    >>> sorted({n.split(".lora_")[0] for n, _ in cat_parameters(vae)})  # doctest: +NORMALIZE_WHITESPACE
    ['encoder.down1.conv', 'encoder.down2.conv', 'encoder.mid.conv1', 'encoder.mid.conv2']
    """
    check_module(vae, "vae")
    rank = check_int(rank, "rank", low=1)
    check_option(target, "target", tuple(TARGET_PATTERNS))
    alpha = float(rank) if alpha is None else check_positive(alpha, "alpha")
    if not isinstance(adapter_name, str) or not adapter_name:
        raise ValueError(f"adapter_name must be a non-empty string, got {adapter_name!r}")
    from icml25.core.optional import require

    peft = require("peft", extra="diffusers")
    LoraConfig, inject_adapter_in_model = peft.LoraConfig, peft.inject_adapter_in_model

    cfg = LoraConfig(r=rank, lora_alpha=alpha, init_lora_weights="gaussian", target_modules=TARGET_PATTERNS[target])
    with torch.device(module_device(vae)):  # the LoRA weights are created where the VAE's weights are
        inject_adapter_in_model(cfg, vae, adapter_name=adapter_name)
    for name, p in vae.named_parameters():
        p.requires_grad_("lora_" in name)
    return vae


def cat_parameters(vae: nn.Module) -> list[tuple[str, nn.Parameter]]:
    """The (name, parameter) pairs of the CAT LoRA adapters in ``vae`` (empty when none were added)."""
    check_module(vae, "vae")
    return [(n, p) for n, p in vae.named_parameters() if "lora_" in n]


def _device(vae: nn.Module) -> torch.device:
    """The device of the VAE's weights (inputs are moved there; random draws are made on the CPU, then moved)."""
    return module_device(vae)


def train_cat_adapter(vae: nn.Module, images: Any, *, steps: int = 300, lr: float = 1e-3, batch_size: int = 4,
                      loss: str = "mse", weight_decay: float = 0.0, grad_clip: float = 1.0,
                      schedule: str = "constant", seed: int = 0) -> list[float]:
    """Train the CAT adapters of ``vae`` (added by :func:`add_cat_adapter`) on protected ``images``, in place.

    Loss (released form): mean ||D'(z) - x_a||^2 with z a posterior sample of the adapted encoder E'(x_a); no KL term
    and no latent scaling. ``loss="lpips"`` and ``"mse+lpips"`` need the ``lpips`` package (3-channel images).
    Optimiser AdamW(lr, weight_decay), gradient clipping at ``grad_clip``, ``schedule`` "constant" or "cosine"
    (the official script: AdamW lr 1e-4, wd 1e-2, cosine, clip 1.0, batch 4, 10,000 steps).

    Parameters
    ----------
    images : array or tensor (N, C, H, W) in [0, 1] matching the VAE's channels and size

    Returns
    -------
    list of float: the loss of every step.

    Examples
    --------
    >>> import torch
    >>> from icml25.cat import TinyVAE
    >>> vae = add_cat_adapter(TinyVAE(width=8), rank=2)
    >>> len(train_cat_adapter(vae, torch.rand(4, 1, 16, 16), steps=2))
    2
    """
    check_module(vae, "vae")
    ch, size = vae_geometry(vae)
    x = as_images(images, "images", channels=ch, size=size).to(_device(vae))
    steps = check_int(steps, "steps", low=1)
    lr = check_positive(lr, "lr")
    batch_size = check_int(batch_size, "batch_size", low=1)
    check_option(loss, "loss", ("mse", "lpips", "mse+lpips"))
    weight_decay = check_positive(weight_decay, "weight_decay", allow_zero=True)
    grad_clip = check_positive(grad_clip, "grad_clip")
    check_option(schedule, "schedule", ("constant", "cosine"))
    seed = check_int(seed, "seed", low=0)
    params = [p for _, p in cat_parameters(vae)]
    if not params:
        raise ValueError("vae has no CAT adapters; call add_cat_adapter(vae, rank, target) first")
    perceptual = None
    if loss != "mse":
        from icml25.core.optional import require

        lpips = require("lpips", extra="cat-metrics")
        perceptual = lpips.LPIPS(net="vgg", verbose=False).eval()
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, foreach=True)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps) if schedule == "cosine" else None
    vae.train()
    losses = []
    for _ in progress(range(steps), "CAT adapter training"):
        idx = torch.randperm(len(x), generator=g, device=g.device)[:batch_size].to(x.device)
        xb = x[idx]
        rec = decode(vae, posterior_sample(vae, xb, g))
        value = ((rec - xb) ** 2).mean() if loss != "lpips" else rec.new_zeros(())
        if perceptual is not None:
            value = value + perceptual(2 * rec - 1, 2 * xb - 1).mean()
        opt.zero_grad()
        value.backward()
        torch.nn.utils.clip_grad_norm_(params, grad_clip)
        opt.step()
        if sched is not None:
            sched.step()
        losses.append(float(value.detach()))
    vae.eval()
    return losses


def encode_with_cat(vae: nn.Module, images: Any, *, sample: bool = True, seed: int = 0) -> torch.Tensor:
    """Scaled latents s * z for customisation, z ~ q(z | x) of the (adapted) encoder (posterior mean with
    ``sample=False``). The same scale s is applied with and without adapters (spec §8).

    Examples
    --------
    >>> import torch
    >>> from icml25.cat import TinyVAE
    >>> encode_with_cat(TinyVAE(width=8), torch.rand(3, 1, 16, 16)).shape
    torch.Size([3, 2, 4, 4])
    """
    check_module(vae, "vae")
    ch, size = vae_geometry(vae)
    x = as_images(images, "images", channels=ch, size=size)
    g = torch.Generator().manual_seed(check_int(seed, "seed", low=0))
    with torch.no_grad():
        z = posterior_sample(vae, x, g) if sample else posterior(vae, x)[0]
    return to_model_latents(vae, z)


def decode_with_cat(vae: nn.Module, latents: Any) -> torch.Tensor:
    """Images in [0, 1] (clamped) from scaled latents s * z, through the (adapted) decoder.

    Examples
    --------
    >>> import torch
    >>> from icml25.cat import TinyVAE
    >>> decode_with_cat(TinyVAE(width=8), torch.zeros(2, 2, 4, 4)).shape
    torch.Size([2, 1, 16, 16])
    """
    check_module(vae, "vae")
    if not isinstance(latents, torch.Tensor):
        from icml25.core.validation import check_array

        latents = torch.as_tensor(check_array(latents, "latents", ndim=4), dtype=torch.float32)
    if latents.ndim != 4 or not torch.isfinite(latents).all():
        raise ValueError(f"latents must be a finite (N, C, h, w) tensor, got shape {tuple(latents.shape)}")
    with torch.no_grad():
        return decode(vae, from_model_latents(vae, latents.float())).clamp(0.0, 1.0)

