"""The experiment pieces of the reproduction (spec §6): the trained world, protections by name, CAT, customisation.

Private: ``experiment.py`` composes these; users call the public modules directly.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

from .adapter import add_cat_adapter, encode_with_cat, train_cat_adapter
from .customize import dreambooth, generate
from .data import load_digit_images, subject_images
from .diffusion import LatentDenoiser, NoiseSchedule, ddim_sample, train_denoiser
from .metrics import identity_scores, latent_distortion, train_classifier
from .protect import advdm, aspl, encoder_attack, mist, random_noise, sds
from .vae import TinyVAE, train_vae

NULL, SKS = 10, 11  # class slots of the denoiser: digits 0-9, the null class, the new "sks" token
PROTECTIONS = ("advdm+", "advdm-", "encoder", "mist", "sds+", "sds-", "aspl")
LABELS = {"advdm+": "AdvDM(+)", "advdm-": "AdvDM(-)", "encoder": "encoder/target", "mist": "Mist",
          "sds+": "SDS(+)", "sds-": "SDS(-)", "aspl": "ASPL", "noise": "random noise"}


def build_world(cfg: Any, seed: int) -> dict[str, Any]:
    """Data, VAE, classifier, pre-trained LDM (without the subject class) and the prior-preservation set."""
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
    keep = labels != cfg.subject
    z = encode_with_cat(vae, images[keep], seed=seed)
    torch.manual_seed(seed + 1)
    ldm = LatentDenoiser(vae.latent_shape, n_classes=12, hidden=cfg.ldm_hidden)
    schedule = NoiseSchedule(cfg.timesteps)
    train_denoiser(ldm, schedule, z, labels[keep], steps=cfg.ldm_steps, batch_size=cfg.ldm_batch, lr=cfg.ldm_lr,
                   null_class=NULL, seed=seed)
    with torch.no_grad():
        ldm.class_emb.weight[SKS] = ldm.class_emb.weight[NULL]  # a rare token starts as "nothing"
    others = [c for c in range(10) if c != cfg.subject]
    prior_labels = np.array([others[i % len(others)] for i in range(cfg.n_prior)])
    prior = ddim_sample(ldm, schedule, prior_labels, steps=cfg.ddim_steps, seed=seed + 2)
    gen = generate(ldm, schedule, vae, others[0], 32, steps=cfg.ddim_steps, seed=seed + 3)
    ldm_acc = identity_scores(clf, gen, others[0])["accuracy"]
    return {"vae": vae, "clf": clf, "clf_acc": clf_acc, "ldm": ldm, "schedule": schedule, "subject": subject,
            "prior": prior, "prior_labels": prior_labels, "ldm_acc": ldm_acc, "images": images, "labels": labels}


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
    samples = generate(tuned, world["schedule"], vae, SKS, cfg.n_samples, steps=cfg.ddim_steps, seed=seed + 7)
    return identity_scores(world["clf"], samples, cfg.subject), samples


def distortion(world: dict[str, Any], protected: torch.Tensor, vae: Any = None) -> dict[str, float]:
    """latent_distortion of the protected subject images (under ``vae``, default the original VAE)."""
    return latent_distortion(world["vae"] if vae is None else vae, world["subject"], protected,
                             reference_vae=world["vae"])
