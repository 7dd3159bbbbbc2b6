"""How the cat functions talk to a VAE and where their tensors live (private).

One place for the two VAE families the library accepts: this package's :class:`~icml25.cat.vae.TinyVAE` (images in
[0, 1], ``encode`` returns ``(mu, logvar)``, ``decode`` returns pixels) and a diffusers ``AutoencoderKL`` (images in
[-1, 1], ``encode(x).latent_dist`` a ``DiagonalGaussianDistribution``, ``decode(z).sample``, latent scale and
optional shift in ``config.scaling_factor`` / ``config.shift_factor``, weights possibly in fp16/bf16).

Device rule of the package: random draws come from a ``torch.Generator`` on the CPU (``device=generator.device``,
so a seed gives the same numbers on every device) and are then moved to the device of the tensor they meet; every
other tensor is created on the device of the model or input it is combined with.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


def module_device(m: nn.Module) -> torch.device:
    """The device of a module's first parameter (or buffer); the CPU for a module without either."""
    for t in m.parameters():
        return t.device
    for t in m.buffers():
        return t.device
    return torch.device("cpu")


def module_dtype(m: nn.Module) -> torch.dtype:
    """The floating dtype of a module's first floating parameter (float32 when it has none)."""
    for t in m.parameters():
        if torch.is_floating_point(t):
            return t.dtype
    return torch.float32


def is_tiny(vae: nn.Module) -> bool:
    return hasattr(vae, "image_size")


def posterior(vae: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Posterior mean and log-variance (float32, on the VAE's device) of images ``x`` in [0, 1].

    ``x`` is moved (differentiably) to the VAE's device and dtype; a diffusers VAE gets ``2 x - 1``.
    """
    x = x.to(device=module_device(vae), dtype=module_dtype(vae))
    if is_tiny(vae):
        mu, logvar = vae.encode(x)
    else:
        dist = vae.encode(2 * x - 1).latent_dist
        mu, logvar = dist.mean, dist.logvar
    return mu.float(), logvar.float()


def decode(vae: nn.Module, z: torch.Tensor) -> torch.Tensor:
    """Pixels (float32, [0, 1] convention, not clamped) from unscaled latents ``z`` (moved to the VAE)."""
    z = z.to(device=module_device(vae), dtype=module_dtype(vae))
    if is_tiny(vae):
        return vae.decode(z).float()
    return (vae.decode(z).sample.float() + 1) / 2


def scaling(vae: nn.Module) -> float:
    """The latent scale s (SD 1.x/2.x: 0.18215): the diffusion model sees s * (z - shift)."""
    return float(vae.scaling_factor) if is_tiny(vae) else float(vae.config.scaling_factor)


def shift(vae: nn.Module) -> float:
    """The latent shift of VAEs that have one (``config.shift_factor``, e.g. SD3/Flux); 0 otherwise."""
    if is_tiny(vae):
        return 0.0
    value = getattr(vae.config, "shift_factor", None)
    return 0.0 if value is None else float(value)


def to_model_latents(vae: nn.Module, z: torch.Tensor) -> torch.Tensor:
    """s * (z - shift): what the diffusion model is trained on."""
    b = shift(vae)
    return scaling(vae) * (z - b if b else z)


def from_model_latents(vae: nn.Module, zs: torch.Tensor) -> torch.Tensor:
    """The inverse of :func:`to_model_latents`."""
    b = shift(vae)
    z = zs / scaling(vae)
    return z + b if b else z


def randn_like(ref: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Standard normal noise of ``ref``'s shape drawn from ``generator`` (on its device), moved to ``ref``'s."""
    return torch.randn(ref.shape, generator=generator, device=generator.device).to(device=ref.device, dtype=ref.dtype)


def posterior_sample(vae: nn.Module, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """An unscaled sample z ~ q(z | x) (reparameterised, differentiable in x and the VAE)."""
    mu, logvar = posterior(vae, x)
    return mu + torch.exp(0.5 * logvar) * randn_like(mu, generator)


def cpu_tensor(x: Any) -> Any:
    """A tensor's values on the CPU (for numpy checks); anything else unchanged."""
    return x.detach().cpu() if isinstance(x, torch.Tensor) else x
