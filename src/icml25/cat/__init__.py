"""CAT (Peng et al., ICML 2025): contrastive adversarial training adapters against protective perturbations in
latent diffusion models.

Library: a tiny SD-like VAE (:class:`TinyVAE`) and class-conditional latent diffusion model (:class:`LatentDenoiser`,
:class:`NoiseSchedule`, DDIM sampling) trained here; protections at an L-inf budget (:func:`advdm`,
:func:`encoder_attack`, :func:`mist`, :func:`sds`, :func:`aspl`, :func:`random_noise`); the CAT adapters
(:func:`add_cat_adapter`, :func:`train_cat_adapter`, :func:`encode_with_cat`) that work on the TinyVAE and on a
diffusers ``AutoencoderKL``; DreamBooth-style customisation (:func:`dreambooth`); the latent distortion analysis
and toy identity metrics (:func:`latent_distortion`, :func:`identity_scores`). The diffusers helpers (adapter
save/load, image folders) live in :mod:`icml25.cat.diffusers_path`; :class:`UNetDenoiser` (:mod:`icml25.cat.sd`) puts
Stable Diffusion's UNet and text encoder behind the denoiser signature of the protections and of DreamBooth. torch and peft are imported on first use.
"""

from typing import Any

from .data import PHOTOS, load_digit_images, load_photo_crops, load_photos, subject_images

__all__ = ["load_digit_images", "subject_images", "PHOTOS", "load_photos", "load_photo_crops", "TinyVAE", "train_vae", "NoiseSchedule", "LatentDenoiser",
           "diffusion_loss", "ddim_sample", "train_denoiser", "random_noise", "pgd", "advdm", "encoder_attack",
           "mist", "sds", "aspl", "target_pattern", "TARGET_PATTERNS", "add_cat_adapter", "cat_parameters",
           "train_cat_adapter", "encode_with_cat", "decode_with_cat", "dreambooth", "generate",
           "latent_distortion", "pca_latents", "DigitClassifier", "train_classifier", "identity_scores",
           "save_cat_adapter", "load_cat_adapter", "load_image_folder", "UNetDenoiser", "encode_prompts"]

_LAZY = {"TinyVAE": "vae", "train_vae": "vae", "NoiseSchedule": "diffusion", "LatentDenoiser": "diffusion",
         "diffusion_loss": "diffusion", "ddim_sample": "diffusion", "train_denoiser": "diffusion",
         "random_noise": "protect", "pgd": "protect", "advdm": "protect", "encoder_attack": "protect",
         "mist": "protect", "sds": "protect", "aspl": "protect", "target_pattern": "protect",
         "TARGET_PATTERNS": "adapter", "add_cat_adapter": "adapter", "cat_parameters": "adapter",
         "train_cat_adapter": "adapter", "encode_with_cat": "adapter", "decode_with_cat": "adapter",
         "dreambooth": "customize", "generate": "customize", "latent_distortion": "metrics",
         "pca_latents": "metrics", "DigitClassifier": "metrics", "train_classifier": "metrics",
         "identity_scores": "metrics", "save_cat_adapter": "diffusers_path", "load_cat_adapter": "diffusers_path",
         "load_image_folder": "diffusers_path", "UNetDenoiser": "sd", "encode_prompts": "sd"}


def __getattr__(name: str) -> Any:  # torch, peft and diffusers are imported on first use
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'icml25.cat' has no attribute {name!r}")
