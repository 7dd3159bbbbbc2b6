"""The experiment pieces of the reproduction (spec §6): the trained world, protections by name, CAT, customisation.

Private: ``experiment.py`` composes these; users call the public modules directly.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

from .adapter import add_cat_adapter, decode_with_cat, encode_with_cat, train_cat_adapter
from .customize import dreambooth, generate
from .data import PHOTOS, load_digit_images, load_photo_crops, subject_images
from .diffusion import LatentDenoiser, NoiseSchedule, ddim_sample, train_denoiser
from .metrics import identity_scores, latent_distortion, train_classifier
from .protect import advdm, aspl, encoder_attack, mist, random_noise, sds
from .vae import TinyVAE, train_vae

NULL, SKS = 10, 11  # class slots of the denoiser: digits 0-9, the null class, the new "sks" token
PROTECTIONS = ("advdm+", "advdm-", "encoder", "mist", "sds+", "sds-", "aspl")
LABELS = {"advdm+": "AdvDM(+)", "advdm-": "AdvDM(-)", "encoder": "encoder/target", "mist": "Mist",
          "sds+": "SDS(+)", "sds-": "SDS(-)", "aspl": "ASPL", "noise": "random noise"}


def all_subjects(cfg: Any) -> tuple[int, ...]:
    """The subjects of a run: ``cfg.subject`` then ``cfg.subjects`` (all held out of the LDM's pre-training)."""
    return tuple(dict.fromkeys((cfg.subject, *cfg.subjects)))


def make_denoiser(cfg: Any, latent_shape: tuple[int, ...], schedule: Any, seed: int) -> Any:
    """The untrained latent denoiser of ``cfg.denoiser``: the MLP (:class:`LatentDenoiser`, ``cfg.ldm_hidden``) or a
    small diffusers UNet (:func:`~icml25.cat.sd.small_unet_denoiser`, ``cfg.unet_width``), 12 class slots."""
    if cfg.denoiser == "unet":
        from .sd import small_unet_denoiser

        return small_unet_denoiser(latent_shape, schedule, n_classes=12, width=cfg.unet_width, seed=seed)
    return LatentDenoiser(latent_shape, n_classes=12, hidden=cfg.ldm_hidden)


def _pretrain_ldm(cfg: Any, vae: Any, images: np.ndarray, labels: np.ndarray, n_classes: int,
                  seed: int) -> tuple[Any, Any, torch.Tensor, np.ndarray, list[int]]:
    """Pre-train the class-conditional LDM on every class but the subjects, start "sks" as the null class and sample
    the prior-preservation latents; returns ``(ldm, schedule, prior, prior_labels, others)``."""
    subjects = all_subjects(cfg)
    keep = ~np.isin(labels, subjects)
    z = encode_with_cat(vae, images[keep], seed=seed)
    schedule = NoiseSchedule(cfg.timesteps, beta_end=cfg.beta_end)
    torch.manual_seed(seed + 1)
    ldm = make_denoiser(cfg, vae.latent_shape, schedule, seed + 1)
    train_denoiser(ldm, schedule, z, labels[keep], steps=cfg.ldm_steps, batch_size=cfg.ldm_batch, lr=cfg.ldm_lr,
                   null_class=NULL, seed=seed)
    with torch.no_grad():
        ldm.class_emb.weight[SKS] = ldm.class_emb.weight[NULL]  # a rare token starts as "nothing"
    others = [c for c in range(n_classes) if c not in subjects]
    prior_labels = np.array([others[i % len(others)] for i in range(cfg.n_prior)])
    prior = ddim_sample(ldm, schedule, prior_labels, steps=cfg.ddim_steps, clip_x0=cfg.clip_x0, seed=seed + 2)
    return ldm, schedule, prior, prior_labels, others


def build_world(cfg: Any, seed: int) -> dict[str, Any]:
    """Data, VAE, classifier, pre-trained LDM (without the subject classes) and the prior-preservation set."""
    if getattr(cfg, "world", "digits") == "photos":
        return _build_photo_world(cfg, seed)
    images, labels = load_digit_images(16)
    torch.manual_seed(seed)
    vae = TinyVAE(latent_channels=cfg.latent_channels, width=cfg.vae_width)
    train_vae(vae, images, steps=cfg.vae_steps, batch_size=cfg.vae_batch, lr=cfg.vae_lr, kl_weight=cfg.kl_weight,
              seed=seed)
    for p in vae.parameters():
        p.requires_grad_(False)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(images))
    train_idx, test_idx = perm[:1500], perm[1500:]
    clf = train_classifier(images[train_idx], labels[train_idx], steps=cfg.classifier_steps, seed=seed)
    with torch.no_grad():
        p = torch.softmax(clf(torch.as_tensor(images[test_idx])), 1)
    clf_acc = float((p.argmax(1).numpy() == labels[test_idx]).mean())
    subject = torch.as_tensor(subject_images(images, labels, cfg.subject, cfg.n_subject))
    ldm, schedule, prior, prior_labels, others = _pretrain_ldm(cfg, vae, images, labels, 10, seed)
    gen = generate(ldm, schedule, vae, others[0], 32, steps=cfg.ddim_steps, seed=seed + 3)
    ldm_acc = identity_scores(clf, gen, others[0])["accuracy"]
    return {"vae": vae, "clf": clf, "clf_acc": clf_acc, "ldm": ldm, "schedule": schedule, "subject": subject,
            "prior": prior, "prior_labels": prior_labels, "ldm_acc": ldm_acc, "images": images, "labels": labels}


def _feature_fd(clf: Any, a: torch.Tensor, b: torch.Tensor) -> float:
    """Frechet distance between Gaussians fitted to the identity network's logits of a and b (FID's formula in
    the 7-dimensional output space of our classifier instead of Inception's pool features: estimable from 64
    samples)."""
    from scipy import linalg

    with torch.no_grad():
        fa, fb = clf(a).double().numpy(), clf(b).double().numpy()
    ma, mb = fa.mean(0), fb.mean(0)
    ca, cb = np.cov(fa, rowvar=False), np.cov(fb, rowvar=False)
    covmean = linalg.sqrtm(ca @ cb)
    return float(((ma - mb) ** 2).sum() + np.trace(ca + cb - 2 * np.real(covmean)))


def _build_photo_world(cfg: Any, seed: int) -> dict[str, Any]:
    """The real-image world: 32x32 crops of the shipped CC0/public-domain photos (one photo = one identity)."""
    images, labels = load_photo_crops(cfg.n_crops, size=cfg.image_size, seed=seed)
    test_x, test_y = load_photo_crops(cfg.n_test_crops, size=cfg.image_size, seed=seed + 500)  # fresh crops
    torch.manual_seed(seed)
    vae = TinyVAE(in_channels=3, image_size=cfg.image_size, latent_channels=cfg.latent_channels, width=cfg.vae_width)
    train_vae(vae, images, steps=cfg.vae_steps, batch_size=cfg.vae_batch, lr=cfg.vae_lr, kl_weight=cfg.kl_weight,
              seed=seed)
    for p in vae.parameters():
        p.requires_grad_(False)
    tx = torch.as_tensor(test_x)
    with torch.no_grad():
        vae_mse = float((vae.decode(vae.encode(tx)[0]).clamp(0, 1) - tx).pow(2).mean())
    clf = train_classifier(images, labels, steps=cfg.classifier_steps, seed=seed, n_classes=len(PHOTOS),
                           augment=True)
    with torch.no_grad():
        clf_acc = float((clf(tx).argmax(1).numpy() == test_y).mean())
    ldm, schedule, prior, prior_labels, others = _pretrain_ldm(cfg, vae, images, labels, len(PHOTOS), seed)
    # sample quality of the pre-trained LDM: identity accuracy of its samples per pre-training photo, and the
    # Frechet distance of their embeddings to held-out crops of the same photos (the floor: training crops)
    n_gen = max(1, cfg.n_samples // len(others)) * len(others)
    gen_labels = [others[i % len(others)] for i in range(n_gen)]
    gen = decode_with_cat(vae, ddim_sample(ldm, schedule, gen_labels, steps=cfg.ddim_steps, clip_x0=cfg.clip_x0,
                                           seed=seed + 3)).cpu()
    with torch.no_grad():
        ldm_acc = float((clf(gen).argmax(1).numpy() == np.asarray(gen_labels)).mean())
    held_o = tx[torch.as_tensor(np.isin(test_y, others))]
    train_o = torch.as_tensor(np.concatenate([images[labels == c][:cfg.n_test_crops] for c in others]))
    quality = {"vae_mse": vae_mse, "vae_psnr": float(10 * np.log10(1.0 / max(vae_mse, 1e-12))),
               "ldm_fd": _feature_fd(clf, gen, held_o), "floor_fd": _feature_fd(clf, train_o, held_o),
               "n_gen": n_gen}
    return {"vae": vae, "clf": clf, "clf_acc": clf_acc, "ldm": ldm, "schedule": schedule, "prior": prior,
            "prior_labels": prior_labels, "ldm_acc": ldm_acc, "images": images, "labels": labels,
            "test_images": test_x, "test_labels": test_y, "quality": quality}


def subject_world(world: dict[str, Any], cfg: Any, subject: int) -> dict[str, Any]:
    """``world`` with one subject: its ``n_subject`` training images, the next ``n_subject`` (held out of CAT) and,
    in the photo world, its clean held-out crops (the ISM reference)."""
    n = cfg.n_subject
    w = {**world, "subject_id": subject,
         "subject": torch.as_tensor(subject_images(world["images"], world["labels"], subject, n)),
         "held": torch.as_tensor(subject_images(world["images"], world["labels"], subject, n, offset=n))}
    if "test_images" in world:
        w["ref"] = torch.as_tensor(world["test_images"][world["test_labels"] == subject])
    return w


def protect(name: str, world: dict[str, Any], eps: float, cfg: Any, seed: int) -> torch.Tensor:
    """The protected subject images under protection ``name`` (``"noise"`` = uniform noise) at budget ``eps``."""
    x, vae, ldm, sch = world["subject"], world["vae"], world["ldm"], world["schedule"]
    n = cfg.pgd_steps
    if name == "noise":
        return random_noise(x, eps, seed=seed)
    if name in ("advdm+", "advdm-"):
        return advdm(x, vae, ldm, sch, label=SKS, eps=eps, steps=n, sign=1 if name == "advdm+" else -1, seed=seed)
    if name == "encoder":
        return encoder_attack(x, vae, eps=eps, steps=n, seed=seed)
    if name == "mist":
        return mist(x, vae, ldm, sch, label=SKS, eps=eps, steps=n, weight=cfg.mist_weight, seed=seed)
    if name in ("sds+", "sds-"):
        return sds(x, vae, ldm, sch, label=SKS, eps=eps, steps=n, sign=1 if name == "sds+" else -1, seed=seed)
    if name == "aspl":
        return aspl(x, vae, ldm, sch, label=SKS, eps=eps, rounds=cfg.aspl_rounds, surrogate_steps=cfg.aspl_inner,
                    pgd_steps=cfg.aspl_inner, seed=seed)
    raise ValueError(f"unknown protection {name!r}; known: noise, {', '.join(PROTECTIONS)}")


def cat_vae(world: dict[str, Any], images: torch.Tensor, cfg: Any, seed: int, train: bool = True) -> Any:
    """A copy of the VAE with CAT adapters trained on ``images`` (untrained, i.e. the identity, with train=False)."""
    vae = add_cat_adapter(copy.deepcopy(world["vae"]), rank=cfg.cat_rank, target=cfg.cat_target)
    if train:
        torch.manual_seed(seed)
        train_cat_adapter(vae, images, steps=cfg.cat_steps, lr=cfg.cat_lr, batch_size=cfg.cat_batch, seed=seed)
    return vae


def customise(world: dict[str, Any], vae: Any, images: torch.Tensor, cfg: Any, seed: int
              ) -> tuple[dict[str, float], torch.Tensor]:
    """DreamBooth on ``images`` encoded by ``vae``, sampled with "sks", decoded by ``vae``; ISM*/FDFR* scores."""
    z = encode_with_cat(vae, images, seed=seed)
    tuned = dreambooth(world["ldm"], world["schedule"], z, SKS, prior_latents=world["prior"],
                       prior_labels=world["prior_labels"], steps=cfg.db_steps, lr=cfg.db_lr,
                       batch_size=cfg.db_batch, seed=seed)
    samples = generate(tuned, world["schedule"], vae, SKS, cfg.n_samples, steps=cfg.ddim_steps, clip_x0=cfg.clip_x0,
                       seed=seed + 7)
    return _scores(world, samples, cfg), samples


def _scores(world: dict[str, Any], samples: torch.Tensor, cfg: Any) -> dict[str, Any]:
    """identity_scores of ``samples`` plus ``items``: each sample's subject probability (for intervals)."""
    subject = world.get("subject_id", cfg.subject)
    out: dict[str, Any] = identity_scores(world["clf"], samples, subject, reference=world.get("ref"))
    with torch.no_grad():
        p = torch.softmax(world["clf"](samples.to(next(world["clf"].parameters()).device)), dim=1)
    out["items"] = p[:, subject].cpu().numpy()
    return out


def uncustomised(world: dict[str, Any], cfg: Any, seed: int) -> dict[str, float]:
    """ISM*/FDFR* of the pre-trained LDM's "sks" samples (the token before customisation: the null class)."""
    samples = generate(world["ldm"], world["schedule"], world["vae"], SKS, cfg.n_samples, steps=cfg.ddim_steps,
                       clip_x0=cfg.clip_x0, seed=seed + 7)
    return _scores(world, samples, cfg)


def distortion(world: dict[str, Any], protected: torch.Tensor, vae: Any = None) -> dict[str, float]:
    """latent_distortion of the protected subject images (under ``vae``, default the original VAE)."""
    return latent_distortion(world["vae"] if vae is None else vae, world["subject"], protected,
                             reference_vae=world["vae"])
