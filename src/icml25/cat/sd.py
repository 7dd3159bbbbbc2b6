"""Stable Diffusion's UNet behind the denoiser signature the protections and customisation use (the real path).

:func:`~icml25.cat.protect.advdm`, :func:`~icml25.cat.protect.mist`, :func:`~icml25.cat.protect.sds`,
:func:`~icml25.cat.protect.aspl`, :func:`~icml25.cat.customize.dreambooth` and
:func:`~icml25.cat.diffusion.ddim_sample` call a noise predictor ``denoiser(z_t, t, c)`` with integer classes ``c``
and read ``denoiser.n_classes`` and ``denoiser.latent_shape``. :class:`UNetDenoiser` gives a diffusers
``UNet2DConditionModel`` that signature: class ``c`` is the index of a prompt ("a photo of person", "a photo of sks
person", "" ...), whose text embedding is the UNet's ``encoder_hidden_states``; a v-prediction UNet (SD 2.x at 768
px) is converted to noise prediction, eps = sqrt(abar_t) v + sqrt(1 - abar_t) z_t, so the diffusion loss is the
noise-prediction MSE (abar_t times SD's v-loss, same minimiser). With Stable Diffusion weights::

    from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
    from transformers import CLIPTextModel, CLIPTokenizer
    sd = "/path/to/stable-diffusion-2-1-base"
    vae = AutoencoderKL.from_pretrained(sd, subfolder="vae").to("cuda")
    schedule = NoiseSchedule.from_diffusers(DDPMScheduler.from_pretrained(sd, subfolder="scheduler"))
    den = UNetDenoiser.from_prompts(UNet2DConditionModel.from_pretrained(sd, subfolder="unet"), schedule,
                                    CLIPTextModel.from_pretrained(sd, subfolder="text_encoder"),
                                    CLIPTokenizer.from_pretrained(sd, subfolder="tokenizer"),
                                    ["a photo of person", "a photo of sks person", ""],
                                    latent_shape=(4, 64, 64)).to("cuda")
    x_a = advdm(photos, vae, den, schedule, label=1, eps=8 / 255, steps=100)   # photos (N, 3, 512, 512) in [0, 1]
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from icml25.core.validation import check_int, check_option, check_tensor

from ._vae_io import module_device, module_dtype
from ._validation import check_module
from .diffusion import NoiseSchedule

__all__ = ["UNetDenoiser", "encode_prompts", "small_unet_denoiser"]

_PREDICTIONS = ("epsilon", "v_prediction", "sample")


def encode_prompts(text_encoder: nn.Module, tokenizer: Any, prompts: list[str]) -> torch.Tensor:
    """Text embeddings (P, L, D) of ``prompts`` as Stable Diffusion pipelines compute them: the tokenizer pads to
    its ``model_max_length``, the text encoder's first output (``last_hidden_state``), no gradient; on the text
    encoder's device.

    Examples
    --------
    >>> from transformers import CLIPTextConfig, CLIPTextModel
    >>> te = CLIPTextModel(CLIPTextConfig(vocab_size=100, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
    ...                                   num_attention_heads=2, max_position_embeddings=12))
    >>> tok = lambda p, **kw: type("T", (), {"input_ids": torch.ones(len(p), 12, dtype=torch.long)})()
    >>> encode_prompts(te, tok, ["a photo of person", ""]).shape
    torch.Size([2, 12, 8])
    """
    check_module(text_encoder, "text_encoder")
    prompts = _check_prompts(prompts)
    ids = _tokenize(tokenizer, prompts).to(module_device(text_encoder))
    with torch.no_grad():
        return text_encoder(ids)[0].float()


def _check_prompts(prompts: Any) -> list[str]:
    if isinstance(prompts, str) or not isinstance(prompts, (list, tuple)) or not prompts or not all(
            isinstance(p, str) for p in prompts):
        raise TypeError(f"prompts must be a non-empty list of strings (one per class index), got {prompts!r}")
    return list(prompts)


def _tokenize(tokenizer: Any, prompts: list[str]) -> torch.Tensor:
    if not callable(tokenizer):
        raise TypeError(f"tokenizer must be a callable tokenizer (e.g. CLIPTokenizer), got {type(tokenizer).__name__}")
    out = tokenizer(prompts, padding="max_length", max_length=getattr(tokenizer, "model_max_length", None),
                    truncation=True, return_tensors="pt")
    ids = out["input_ids"] if isinstance(out, dict) or hasattr(out, "keys") else out.input_ids
    return torch.as_tensor(ids, dtype=torch.long, device="cpu")


class UNetDenoiser(nn.Module):
    """A diffusers ``UNet2DConditionModel`` as a noise predictor eps(z_t, t, c) over prompt indices c.

    Parameters
    ----------
    unet : diffusers UNet2DConditionModel
        SD 1.x/2.x layout: conditioning through ``encoder_hidden_states`` only (SDXL's added conditions are not
        supported).
    schedule : NoiseSchedule
        The training schedule (:meth:`NoiseSchedule.from_diffusers` of SD's scheduler); needed to convert v- or
        sample-predictions to noise.
    prompt_embeds : tensor (P, L, D)
        One text embedding per class index (:func:`encode_prompts`, or ``pipeline.encode_prompt``). They are the
        rows of the trainable table ``class_emb`` (DreamBooth then tunes the token's embedding with the UNet).
    prediction_type : {"epsilon", "v_prediction", "sample"}, optional
        What the UNet predicts; default the schedule's (``from_diffusers`` records the scheduler's), else epsilon.
    latent_shape : tuple (C, h, w), optional
        Shape of one latent for sampling and input checks; default ``(in_channels, sample_size, sample_size)`` of
        the UNet's config (SD 2.1: 96 = 768 px; pass (4, 64, 64) for 512 px).

    Use :meth:`from_prompts` to embed prompts with a text encoder, and ``train_text_encoder=True`` there to keep the
    text encoder inside (DreamBooth then fine-tunes it with the UNet, as the paper's protocol does).

    Shapes: ``forward(z (N, *latent_shape), t (N,) int, c (N,) int) -> (N, *latent_shape)`` (float32).
    """

    def __init__(self, unet: nn.Module, schedule: NoiseSchedule, prompt_embeds: Any = None, *,
                 prediction_type: str | None = None, latent_shape: tuple[int, ...] | None = None) -> None:
        super().__init__()
        check_module(unet, "unet")
        if not isinstance(schedule, NoiseSchedule):
            raise TypeError(f"schedule must be a NoiseSchedule (NoiseSchedule.from_diffusers(scheduler)), got "
                            f"{type(schedule).__name__}")
        cfg = getattr(unet, "config", None)
        if cfg is None or not hasattr(cfg, "cross_attention_dim"):
            raise TypeError(f"unet must be a diffusers UNet2DConditionModel, got {type(unet).__name__}")
        if prediction_type is None:
            prediction_type = getattr(schedule, "prediction_type", "epsilon")
        self.prediction_type = check_option(prediction_type, "prediction_type", _PREDICTIONS)
        if latent_shape is None:
            size = cfg.sample_size if isinstance(cfg.sample_size, int) else cfg.sample_size[0]
            latent_shape = (cfg.in_channels, size, size)
        self.latent_shape = tuple(check_int(s, "latent_shape", low=1) for s in latent_shape)
        if len(self.latent_shape) != 3 or self.latent_shape[0] != cfg.in_channels:
            raise ValueError(f"latent_shape must be (C, h, w) with C = the UNet's in_channels {cfg.in_channels}, got "
                             f"{latent_shape}")
        self.unet = unet
        self.register_buffer("alpha_bar", schedule.alpha_bar.detach().clone().float().to(module_device(unet)))
        self.timesteps = schedule.timesteps
        self.text_encoder: nn.Module | None = None
        if prompt_embeds is not None:
            self._set_table(prompt_embeds)

    def _set_table(self, prompt_embeds: Any) -> None:
        if isinstance(prompt_embeds, torch.Tensor):
            e = prompt_embeds.detach()
        else:
            e = check_tensor(prompt_embeds, "prompt_embeds", dtype=torch.float32)
        dim = self.unet.config.cross_attention_dim
        dim = dim if isinstance(dim, int) else dim[0]
        if e.ndim != 3 or e.shape[-1] != dim or e.numel() == 0 or not torch.isfinite(e.float().cpu()).all():
            raise ValueError(f"prompt_embeds must be finite text embeddings (P, L, {dim}) (the UNet's "
                             f"cross_attention_dim), got shape {tuple(e.shape)}")
        self.embed_shape = tuple(e.shape[1:])
        self.class_emb = nn.Embedding(e.shape[0], e.shape[1] * e.shape[2], device=module_device(self.unet))
        with torch.no_grad():
            self.class_emb.weight.copy_(e.reshape(e.shape[0], -1).float())
        self.n_classes = int(e.shape[0])

    @classmethod
    def from_prompts(cls, unet: nn.Module, schedule: NoiseSchedule, text_encoder: nn.Module, tokenizer: Any,
                     prompts: list[str], *, train_text_encoder: bool = False, prediction_type: str | None = None,
                     latent_shape: tuple[int, ...] | None = None) -> UNetDenoiser:
        """A denoiser whose class i is ``prompts[i]``: the prompts embedded once by ``text_encoder`` (a table), or,
        with ``train_text_encoder=True``, the text encoder kept as a sub-module and run on the prompts' token ids
        at every call (DreamBooth fine-tunes it; ~2x the memory of the table)."""
        check_module(text_encoder, "text_encoder")
        prompts = _check_prompts(prompts)
        if not train_text_encoder:
            return cls(unet, schedule, encode_prompts(text_encoder, tokenizer, prompts),
                       prediction_type=prediction_type, latent_shape=latent_shape)
        self = cls(unet, schedule, prediction_type=prediction_type, latent_shape=latent_shape)
        self.text_encoder = text_encoder
        self.register_buffer("input_ids", _tokenize(tokenizer, prompts).to(module_device(text_encoder)))
        self.n_classes = len(prompts)
        return self

    def prompt_embeddings(self, c: torch.Tensor) -> torch.Tensor:
        """The ``encoder_hidden_states`` (N, L, D) of classes ``c`` (N,)."""
        if self.text_encoder is not None:
            ids = self.input_ids[c.to(self.input_ids.device)]
            return self.text_encoder(ids)[0]
        if not hasattr(self, "class_emb"):
            raise ValueError("UNetDenoiser has neither prompt_embeds nor a text encoder; build it with prompt_embeds "
                             "or UNetDenoiser.from_prompts")
        c = c.to(self.class_emb.weight.device)
        return self.class_emb(c).view(len(c), *self.embed_shape)

    def forward(self, z: torch.Tensor, t: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        dev, dtype = module_device(self.unet), module_dtype(self.unet)
        z, t = z.to(dev), t.to(dev)
        out = self.unet(z.to(dtype), t, encoder_hidden_states=self.prompt_embeddings(c).to(dev, dtype)).sample
        out = out.float()
        if out.shape != z.shape:
            raise ValueError(f"the UNet returned shape {tuple(out.shape)} for latents {tuple(z.shape)}; a UNet that "
                             "also predicts variances (out_channels = 2 x in_channels) is not supported")
        if self.prediction_type == "epsilon":
            return out
        ab = self.alpha_bar.to(dev)[t].view(-1, *([1] * (z.ndim - 1)))
        if self.prediction_type == "v_prediction":
            return ab.sqrt() * out + (1 - ab).sqrt() * z
        return (z - ab.sqrt() * out) / (1 - ab).sqrt()  # "sample": x0-prediction


def small_unet_denoiser(latent_shape: tuple[int, ...], schedule: NoiseSchedule, n_classes: int = 12, *,
                        width: int = 32, cross_attention_dim: int = 64, seed: int = 0) -> UNetDenoiser:
    """A small randomly initialised diffusers ``UNet2DConditionModel`` behind :class:`UNetDenoiser`: the
    convolutional latent denoiser of the toy worlds (``Config.denoiser="unet"``; SD's architecture at toy size).

    Two resolution levels (``width`` and ``2 * width`` channels, one ResNet block each; cross-attention at the lower
    level, as SD's CrossAttnDownBlock2D / CrossAttnUpBlock2D), SD's sinusoidal time embedding, and one learned
    "prompt" token per class: a trainable (n_classes, 1, cross_attention_dim) table initialised N(0, 0.5^2) from
    ``seed`` (it plays the text embeddings; DreamBooth tunes the "sks" row with the UNet). Needs ``diffusers``.

    Examples
    --------
    >>> den = small_unet_denoiser((4, 8, 8), NoiseSchedule(20), n_classes=3, width=8, cross_attention_dim=8)
    >>> den(torch.zeros(2, 4, 8, 8), torch.zeros(2, dtype=torch.long), torch.tensor([0, 2])).shape
    torch.Size([2, 4, 8, 8])
    """
    from diffusers import UNet2DConditionModel

    shape = tuple(check_int(s, "latent_shape", low=1) for s in latent_shape)
    if len(shape) != 3 or shape[1] != shape[2] or shape[1] % 2:
        raise ValueError(f"latent_shape must be (C, h, h) with an even h (one down-sampling), got {latent_shape}")
    width = check_int(width, "width", low=8)
    if width % 8:
        raise ValueError(f"width must be a multiple of 8 (GroupNorm with 8 groups), got {width}")
    cross = check_int(cross_attention_dim, "cross_attention_dim", low=8)
    if cross % 8:
        raise ValueError(f"cross_attention_dim must be a multiple of 8 (8 attention heads' width), got {cross}")
    n_classes = check_int(n_classes, "n_classes", low=1)
    g = torch.Generator().manual_seed(check_int(seed, "seed", low=0))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(torch.randint(2**31 - 1, (1,), generator=g)))
        unet = UNet2DConditionModel(
            sample_size=shape[1], in_channels=shape[0], out_channels=shape[0], block_out_channels=(width, 2 * width),
            layers_per_block=1, down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
            up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"), cross_attention_dim=cross, norm_num_groups=8,
            attention_head_dim=8)
    table = torch.randn(n_classes, 1, cross, generator=g) * 0.5
    return UNetDenoiser(unet, schedule, table, prediction_type="epsilon", latent_shape=shape)
