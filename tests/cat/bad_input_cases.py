"""Bad-input registry of ``icml25.cat`` for the fuzz contract (tests/core/test_bad_input.py)."""

from __future__ import annotations

import functools
import tempfile

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase


def _torch():
    import torch

    return torch


def _x(n: int = 2):
    return np.random.default_rng(0).uniform(size=(n, 1, 16, 16)).astype(np.float32)


def _vae():
    from icml25.cat import TinyVAE

    _torch().manual_seed(0)
    return TinyVAE(width=4)


def _cat_vae():
    from icml25.cat import add_cat_adapter

    return add_cat_adapter(_vae(), rank=2)


def _ldm():
    from icml25.cat import LatentDenoiser

    _torch().manual_seed(0)
    return LatentDenoiser((2, 4, 4), n_classes=12, hidden=8)


def _sched():
    from icml25.cat import NoiseSchedule

    return NoiseSchedule(20)


def _z(n: int = 4):
    return np.random.default_rng(1).normal(size=(n, 2, 4, 4)).astype(np.float32)


def _clf():
    from icml25.cat import DigitClassifier

    _torch().manual_seed(0)
    return DigitClassifier(width=4)


@functools.cache
def _sd_parts():
    """A tiny random diffusers UNet2DConditionModel, CLIP text encoder and tokenizer (the real architectures)."""
    import json

    from diffusers import UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    _torch().manual_seed(0)
    unet = UNet2DConditionModel(sample_size=8, in_channels=4, out_channels=4, block_out_channels=(8, 16),
                                layers_per_block=1, down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                                up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=16,
                                attention_head_dim=4, norm_num_groups=4).eval()
    d = tempfile.mkdtemp(prefix="icml25-cat-tok-")
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1, **{c: 2 + i for i, c in enumerate(letters)},
             **{c + "</w>": 28 + i for i, c in enumerate(letters)}}
    with open(f"{d}/vocab.json", "w") as f:
        json.dump(vocab, f)
    with open(f"{d}/merges.txt", "w") as f:
        f.write("#version: 0.2\n")
    tok = CLIPTokenizer(f"{d}/vocab.json", f"{d}/merges.txt", model_max_length=8)
    te = CLIPTextModel(CLIPTextConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32,
                                      num_hidden_layers=1, num_attention_heads=2, max_position_embeddings=8,
                                      bos_token_id=0, eos_token_id=1, pad_token_id=1)).eval()
    return unet, te, tok


def _sd_schedule():
    from diffusers import DDPMScheduler

    from icml25.cat import NoiseSchedule

    return NoiseSchedule.from_diffusers(DDPMScheduler(num_train_timesteps=1000, beta_schedule="scaled_linear",
                                                      beta_start=0.00085, beta_end=0.012))


@functools.cache
def _adapter_file() -> str:
    from icml25.cat import save_cat_adapter

    return str(save_cat_adapter(_cat_vae(), tempfile.mkdtemp() + "/cat.safetensors", rank=2, target="encoder"))


@functools.cache
def _image_dir() -> str:
    from PIL import Image

    d = tempfile.mkdtemp()
    Image.new("RGB", (20, 16), (100, 50, 0)).save(d + "/a.png")
    return d


def _ldm_kw():
    return {"denoiser": _ldm(), "schedule": _sched(), "label": 11}


CASES = [
    BadInputCase("UNetDenoiser", lambda: {"unet": _sd_parts()[0], "schedule": _sd_schedule(),
                                          "prompt_embeds": np.zeros((2, 8, 16), dtype=np.float32),
                                          "prediction_type": "epsilon"},
                 bad={"prompt_embeds": ARRAY, "prediction_type": TEXT}),
    BadInputCase("encode_prompts", lambda: {"text_encoder": _sd_parts()[1], "tokenizer": _sd_parts()[2],
                                            "prompts": ["a photo of sks", "a photo"]}, bad={"prompts": TEXT}),
    BadInputCase("load_digit_images", lambda: {"size": 8}, bad={"size": SIZE}),
    BadInputCase("load_photos", lambda: {}, bad={}),
    BadInputCase("load_photo_crops", lambda: {"n_per_photo": 1, "size": 8, "seed": 0},
                 bad={"n_per_photo": SIZE, "size": SIZE}),
    BadInputCase("subject_images", lambda: {"images": _x(4), "labels": np.array([3, 3, 1, 3]), "subject": 3, "n": 2,
                                            "offset": 1},
                 bad={"n": SIZE}),
    BadInputCase("TinyVAE", lambda: {"in_channels": 1, "image_size": 16, "latent_channels": 2, "width": 4},
                 bad={"in_channels": SIZE, "image_size": SIZE, "latent_channels": SIZE, "width": SIZE}),
    BadInputCase("train_vae", lambda: {"vae": _vae(), "images": _x(4), "steps": 1, "batch_size": 2, "lr": 1e-3,
                                       "kl_weight": 1e-2},
                 bad={"images": ARRAY, "steps": SIZE, "batch_size": SIZE, "lr": POSITIVE}),
    BadInputCase("NoiseSchedule", lambda: {"timesteps": 20, "beta_start": 1e-4, "beta_end": 0.1},
                 bad={"timesteps": SIZE, "beta_start": PROB, "beta_end": PROB}),
    BadInputCase("LatentDenoiser", lambda: {"latent_shape": (2, 4, 4), "n_classes": 12, "hidden": 8},
                 bad={"n_classes": SIZE, "hidden": SIZE}),
    BadInputCase("diffusion_loss", skip="a loss on tensors inside training loops; its callers validate the inputs"),
    BadInputCase("ddim_sample", lambda: {"denoiser": _ldm(), "schedule": _sched(), "labels": np.array([0, 11]),
                                         "steps": 3, "seed": 0, "eta": 0.0, "clip_x0": 3.0},
                 bad={"labels": ARRAY, "steps": SIZE, "eta": PROB, "clip_x0": POSITIVE}),
    BadInputCase("train_denoiser", lambda: {"denoiser": _ldm(), "schedule": _sched(), "latents": _z(),
                                            "labels": np.array([0, 1, 2, 3]), "steps": 1, "batch_size": 2,
                                            "lr": 1e-3, "p_uncond": 0.1},
                 bad={"latents": ARRAY, "labels": ARRAY, "steps": SIZE, "batch_size": SIZE, "lr": POSITIVE,
                      "p_uncond": PROB}),
    BadInputCase("random_noise", lambda: {"images": _x(), "eps": 0.1, "seed": 0},
                 bad={"images": ARRAY, "eps": POSITIVE}),
    BadInputCase("pgd", lambda: {"images": _x(), "objective": lambda z, g: z.sum(), "eps": 0.1, "steps": 2,
                                 "step_size": 0.01},
                 bad={"images": ARRAY, "eps": POSITIVE, "steps": SIZE, "step_size": POSITIVE}),
    BadInputCase("advdm", lambda: {"images": _x(), "vae": _vae(), **_ldm_kw(), "eps": 0.1, "steps": 1},
                 bad={"images": ARRAY, "eps": POSITIVE, "steps": SIZE}),
    BadInputCase("encoder_attack", lambda: {"images": _x(), "vae": _vae(), "target": _x(1), "eps": 0.1, "steps": 1},
                 bad={"images": ARRAY, "target": ARRAY, "eps": POSITIVE, "steps": SIZE}),
    BadInputCase("mist", lambda: {"images": _x(), "vae": _vae(), **_ldm_kw(), "weight": 1.0, "eps": 0.1,
                                  "steps": 1},
                 bad={"images": ARRAY, "weight": REAL, "eps": POSITIVE, "steps": SIZE}),
    BadInputCase("sds", lambda: {"images": _x(), "vae": _vae(), **_ldm_kw(), "eps": 0.1, "steps": 1},
                 bad={"images": ARRAY, "eps": POSITIVE, "steps": SIZE}),
    BadInputCase("aspl", lambda: {"images": _x(), "vae": _vae(), **_ldm_kw(), "eps": 0.1, "rounds": 1,
                                  "surrogate_steps": 1, "pgd_steps": 1, "lr": 1e-3},
                 bad={"images": ARRAY, "eps": POSITIVE, "rounds": SIZE, "surrogate_steps": SIZE,
                      "pgd_steps": SIZE, "lr": POSITIVE}),
    BadInputCase("target_pattern", lambda: {"size": 8, "channels": 1, "period": 2},
                 bad={"size": SIZE, "channels": SIZE, "period": SIZE}),
    BadInputCase("add_cat_adapter", lambda: {"vae": _vae(), "rank": 2, "target": "encoder", "alpha": 2.0},
                 bad={"rank": SIZE, "target": TEXT, "alpha": POSITIVE}),
    BadInputCase("cat_parameters", skip="takes only a module; a non-module is a TypeError (tested in test_adapter)"),
    BadInputCase("train_cat_adapter", lambda: {"vae": _cat_vae(), "images": _x(), "steps": 1, "lr": 1e-3,
                                               "batch_size": 2, "weight_decay": 0.0, "grad_clip": 1.0, "loss": "mse"},
                 bad={"images": ARRAY, "steps": SIZE, "lr": POSITIVE, "batch_size": SIZE, "grad_clip": POSITIVE,
                      "loss": TEXT}),
    BadInputCase("encode_with_cat", lambda: {"vae": _vae(), "images": _x(), "seed": 0}, bad={"images": ARRAY}),
    BadInputCase("decode_with_cat", lambda: {"vae": _vae(), "latents": _z(2)}, bad={"latents": ARRAY}),
    BadInputCase("dreambooth", lambda: {"denoiser": _ldm(), "schedule": _sched(), "latents": _z(), "token": 11,
                                        "steps": 1, "lr": 1e-3, "batch_size": 2, "prior_weight": 1.0},
                 bad={"latents": ARRAY, "steps": SIZE, "lr": POSITIVE, "batch_size": SIZE, "prior_weight": REAL}),
    BadInputCase("generate", lambda: {"denoiser": _ldm(), "schedule": _sched(), "vae": _vae(), "label": 3, "n": 2,
                                      "steps": 2, "clip_x0": 3.0},
                 bad={"n": SIZE, "steps": SIZE, "clip_x0": POSITIVE}),
    BadInputCase("latent_distortion", lambda: {"vae": _vae(), "clean": _x(), "protected": _x()},
                 bad={"clean": ARRAY, "protected": ARRAY}),
    BadInputCase("pca_latents", lambda: {"vae": _vae(), "groups": {"a": _x(3)}, "n_components": 2},
                 bad={"n_components": SIZE}),
    BadInputCase("DigitClassifier", lambda: {"n_classes": 10, "width": 4, "in_channels": 3, "image_size": 8},
                 bad={"n_classes": SIZE, "width": SIZE, "in_channels": SIZE, "image_size": SIZE}),
    BadInputCase("train_classifier", lambda: {"images": _x(4), "labels": np.array([0, 1, 2, 3]), "steps": 1,
                                              "batch_size": 2, "lr": 1e-3, "n_classes": 4, "width": 4},
                 bad={"images": ARRAY, "labels": ARRAY, "steps": SIZE, "batch_size": SIZE, "lr": POSITIVE,
                      "n_classes": SIZE, "width": SIZE}),
    BadInputCase("identity_scores", lambda: {"classifier": _clf(), "images": _x(), "subject": 3, "threshold": 0.5},
                 bad={"images": ARRAY, "threshold": PROB}),
    BadInputCase("save_cat_adapter", lambda: {"vae": _cat_vae(), "path": tempfile.mkdtemp() + "/a.safetensors",
                                              "rank": 2, "target": "encoder"},
                 bad={"rank": SIZE, "target": TEXT}),
    BadInputCase("load_cat_adapter", lambda: {"vae": _vae(), "path": _adapter_file()}, bad={"path": TEXT}),
    BadInputCase("load_image_folder", lambda: {"folder": _image_dir(), "resolution": 8, "channels": 3},
                 bad={"folder": TEXT, "resolution": SIZE, "channels": SIZE}),
]
