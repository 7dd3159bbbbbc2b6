"""Input checks shared by the cat modules (images in [0, 1], budgets, module types)."""

from __future__ import annotations

from typing import Any

from icml25.core.validation import check_array


def as_images(x: Any, name: str, *, channels: int | None = None, size: int | None = None) -> Any:
    """A float32 CPU torch tensor of shape (N, C, H, W) with every value finite and in [0, 1].

    Accepts a numpy array or a torch tensor; raises ``TypeError``/``ValueError`` naming ``name`` otherwise (wrong
    number of axes, NaN/inf, values outside [0, 1], wrong channel count or spatial size).
    """
    import torch

    if isinstance(x, torch.Tensor):
        t = x.detach()
        if not torch.is_floating_point(t):
            raise TypeError(f"{name} must be a float image tensor with values in [0, 1], got dtype {t.dtype}")
        arr = t.to(torch.float64).cpu().numpy()
    else:
        arr = x
    arr = check_array(arr, name, ndim=4)
    if arr.min() < 0.0 or arr.max() > 1.0:
        raise ValueError(f"{name} must hold images scaled to [0, 1] (not [-1, 1] or 0-255), got values in "
                         f"[{arr.min():.3g}, {arr.max():.3g}]")
    if channels is not None and arr.shape[1] != channels:
        raise ValueError(f"{name} must have {channels} channel(s) on axis 1 (N, C, H, W), got shape {arr.shape}")
    if size is not None and (arr.shape[2] != size or arr.shape[3] != size):
        raise ValueError(f"{name} must be {size}x{size} images (N, C, {size}, {size}), got shape {arr.shape}")
    return torch.as_tensor(arr, dtype=torch.float32, device="cpu")  # images live on the CPU; models move copies


def check_module(x: Any, name: str) -> Any:
    """``x`` must be a torch ``nn.Module``."""
    import torch

    if not isinstance(x, torch.nn.Module):
        raise TypeError(f"{name} must be a torch.nn.Module, got {type(x).__name__}")
    return x


def vae_geometry(vae: Any) -> tuple[int, int | None]:
    """(channels, image size) a VAE expects: a TinyVAE's attributes, or a diffusers AutoencoderKL's input channels
    and None (it is fully convolutional: SD 2.1's VAE says sample_size 768 but encodes 512 px images too)."""
    if hasattr(vae, "image_size"):
        return int(vae.in_channels), int(vae.image_size)
    cfg = getattr(vae, "config", None)
    if cfg is not None and hasattr(cfg, "in_channels"):
        return int(cfg.in_channels), None
    raise TypeError(f"vae must be a TinyVAE or a diffusers AutoencoderKL, got {type(vae).__name__}")
