"""The paper-scale path of the reproduction (private): claim 1 and the CAT reconstruction measured on the user's
Stable Diffusion autoencoder and face images (``Config.backend = "diffusers"``).

What runs: the encoder (PhotoGuard-style) protection and uniform noise at each budget on the first ``n_subject``
images of ``image_dir``, the latent distortion of both under SD's VAE, CAT adapters trained on the protected images,
and the same protection on the next ``n_subject`` (held-out) images to measure the adapted autoencoder there. What does
not run here: the UNet-based protections (AdvDM, Mist, SDS, ASPL: library functions that take SD's UNet through
``UNetDenoiser``, not wired into this path; MetaCloak, Glaze: not implemented), DreamBooth/LoRA customisation of the
SD UNet (likewise), and the ArcFace/RetinaFace/TOPIQ scores (not implemented).
"""

from __future__ import annotations

import copy
from typing import Any

#: the protections the paper-scale path can run on a bare AutoencoderKL (the others need the SD UNet)
SD_PROTECTIONS = ("encoder",)


def load_sd_vae(model: str, device: str) -> Any:
    """SD's ``AutoencoderKL`` from ``model`` (a local diffusers folder or a cached hub id; never downloaded)."""
    from diffusers import AutoencoderKL

    try:
        vae = AutoencoderKL.from_pretrained(model, subfolder="vae", local_files_only=True)
    except (OSError, ValueError) as exc:
        raise FileNotFoundError(
            f"sd_model={model!r}: no Stable Diffusion VAE found locally ({type(exc).__name__}); pass --set "
            "sd_model=/path/to/stable-diffusion-2-1 (a diffusers folder with vae/config.json and its weights; the "
            "paper uses SD 2.1), downloaded beforehand (icml25 never downloads weights)") from None
    vae = vae.to(device).eval()
    for p in vae.parameters():
        p.requires_grad_(False)
    return vae


def subject_sets(cfg: Any) -> tuple[Any, Any]:
    """The training and held-out images of the subject: the first and the next ``n_subject`` files of ``image_dir``."""
    import torch

    from .diffusers_path import load_image_folder

    if not cfg.image_dir:
        raise FileNotFoundError("image_dir is empty: pass --set image_dir=<folder> with at least 2 x n_subject clean "
                                "face images of one identity (the paper: CelebA-HQ / VGGFace2 identities as prepared "
                                "by Anti-DreamBooth)")
    imgs = load_image_folder(cfg.image_dir, resolution=cfg.resolution)
    if len(imgs) < 2 * cfg.n_subject:
        raise ValueError(f"image_dir={cfg.image_dir!r} holds {len(imgs)} images; need 2 x n_subject = "
                         f"{2 * cfg.n_subject} (training and held-out)")
    return (torch.as_tensor(imgs[: cfg.n_subject], device="cpu"),  # images live on the CPU; the VAE moves copies
            torch.as_tensor(imgs[cfg.n_subject: 2 * cfg.n_subject], device="cpu"))


def run_sd(cfg: Any, seed: int, stub: bool) -> dict[str, Any]:
    """Distortion of noise and of each runnable protection per budget, CAT on the main one, on SD's VAE."""
    from .adapter import add_cat_adapter, train_cat_adapter
    from .metrics import latent_distortion
    from .protect import encoder_attack, random_noise

    vae = load_sd_vae(cfg.sd_model, cfg.device)
    train, held = subject_sets(cfg)
    out: dict[str, Any] = {"dist": {}, "cat_dist": {}, "heldout": {}, "skipped": [], "clean_shift": None}
    main = next((p for p in cfg.protections if p in SD_PROTECTIONS), None)
    out["skipped"] = [p for p in cfg.protections if p not in SD_PROTECTIONS]
    for eta in cfg.etas:
        out["dist"][("noise", eta)] = latent_distortion(vae, train, random_noise(train, eta, seed=seed + 100))
        if main is None:
            continue
        adv = random_noise(train, eta, seed=seed + 1) if stub else encoder_attack(train, vae, eps=eta,
                                                                                  steps=cfg.pgd_steps, seed=seed)
        out["dist"][(main, eta)] = latent_distortion(vae, train, adv)
        if eta != cfg.etas[0]:
            continue
        vae_c = add_cat_adapter(copy.deepcopy(vae), rank=cfg.cat_rank, target=cfg.cat_target)
        if not stub:
            train_cat_adapter(vae_c, adv, steps=cfg.cat_steps, lr=cfg.cat_lr, batch_size=cfg.cat_batch,
                              weight_decay=1e-2, schedule="cosine", seed=seed)
        out["cat_dist"][(main, eta)] = latent_distortion(vae_c, train, adv, reference_vae=vae)
        adv_h = random_noise(held, eta, seed=seed + 2) if stub else encoder_attack(held, vae, eps=eta,
                                                                                   steps=cfg.pgd_steps, seed=seed + 200)
        out["heldout"][(main, eta)] = (latent_distortion(vae, held, adv_h),
                                       latent_distortion(vae_c, held, adv_h, reference_vae=vae))
        shift = latent_distortion(vae_c, train, train, reference_vae=vae)["rel_l2"]
        out["clean_shift"] = float(shift)
    out["main"] = main
    out["n"] = len(train)
    return out
