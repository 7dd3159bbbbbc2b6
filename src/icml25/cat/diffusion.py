"""A small class-conditional latent diffusion model: DDPM training, DDIM sampling (spec §6 step 3).

The stand-in for Stable Diffusion's UNet: an MLP epsilon-predictor on the flattened latent with a sinusoidal time
embedding and learned class embeddings (10 digits, a null class for unconditional training, and a new "sks" slot
that customisation learns).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from icml25.core.progress import progress
from icml25.core.validation import check_array, check_int, check_positive, check_probability, check_real

from ._vae_io import module_device, randn_like
from ._validation import check_module

__all__ = ["NoiseSchedule", "LatentDenoiser", "diffusion_loss", "ddim_sample", "train_denoiser"]


class NoiseSchedule:
    """Linear-beta DDPM schedule: beta_t from ``beta_start`` to ``beta_end`` over ``timesteps`` steps.

    ``alpha_bar[t] = prod_{s<=t} (1 - beta_s)``; the forward process is
    z_t = sqrt(alpha_bar_t) z_0 + sqrt(1 - alpha_bar_t) eps (DDPM, Ho et al. 2020, Eq. 4).

    Examples
    --------
    >>> s = NoiseSchedule(200)
    >>> round(float(s.alpha_bar[0]), 4), float(s.alpha_bar[-1]) < 1e-3
    (0.9999, True)
    """

    def __init__(self, timesteps: int = 200, beta_start: float = 1e-4, beta_end: float = 0.1) -> None:
        self.timesteps = check_int(timesteps, "timesteps", low=2)
        beta_start = check_real(beta_start, "beta_start", low=0.0, high=1.0, low_open=True, high_open=True)
        beta_end = check_real(beta_end, "beta_end", low=beta_start, high=1.0, high_open=True)
        self.betas = torch.linspace(beta_start, beta_end, self.timesteps, dtype=torch.float64, device="cpu")
        self.alpha_bar = torch.cumprod(1.0 - self.betas, 0).float()
        self.prediction_type = "epsilon"  # what a denoiser trained on it predicts (from_diffusers: the scheduler's)

    @classmethod
    def from_diffusers(cls, scheduler: Any) -> NoiseSchedule:
        """The training schedule of a diffusers scheduler (e.g. Stable Diffusion's ``DDPMScheduler``: 1,000 steps,
        "scaled_linear" betas 0.00085..0.012), read from its ``betas`` and ``alphas_cumprod``.

        Examples
        --------
        >>> from diffusers import DDPMScheduler
        >>> s = NoiseSchedule.from_diffusers(DDPMScheduler(beta_schedule="scaled_linear", beta_start=0.00085,
        ...                                                beta_end=0.012))
        >>> s.timesteps, round(float(s.alpha_bar[-1]), 4), s.prediction_type
        (1000, 0.0047, 'epsilon')
        """
        betas = getattr(scheduler, "betas", None)
        alphas_cumprod = getattr(scheduler, "alphas_cumprod", None)
        if not isinstance(betas, torch.Tensor) or not isinstance(alphas_cumprod, torch.Tensor):
            raise TypeError(f"scheduler must be a diffusers scheduler with betas and alphas_cumprod (e.g. "
                            f"DDPMScheduler), got {type(scheduler).__name__}")
        self = cls.__new__(cls)
        self.timesteps = check_int(len(betas), "scheduler timesteps", low=2)
        self.betas = betas.detach().to("cpu", torch.float64)
        self.alpha_bar = alphas_cumprod.detach().to("cpu", torch.float32)
        self.prediction_type = str(getattr(getattr(scheduler, "config", None), "prediction_type", None) or "epsilon")
        return self

    def add_noise(self, z0: torch.Tensor, eps: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """z_t of Eq. 4 for clean latents z0 (N, ...), noise eps (N, ...) and integer steps t (N,), on z0's device."""
        ab = self.alpha_bar.to(z0.device)[t.to(z0.device)].view(-1, *([1] * (z0.ndim - 1)))
        return ab.sqrt() * z0 + (1.0 - ab).sqrt() * eps


class LatentDenoiser(nn.Module):
    """eps_theta(z_t, t, c): MLP noise predictor on latents of shape ``latent_shape`` with class conditioning.

    Parameters
    ----------
    latent_shape : tuple of int
        Shape of one latent, e.g. (2, 4, 4).
    n_classes : int
        Number of class embeddings (the reproduction uses 12: digits 0-9, null = 10, "sks" = 11).
    hidden : int
        Width of the MLP.

    Shapes: ``forward(z (N, *latent_shape), t (N,) int, c (N,) int) -> (N, *latent_shape)``.

    Examples
    --------
    >>> import torch
    >>> net = LatentDenoiser((2, 4, 4), n_classes=12, hidden=32)
    >>> net(torch.zeros(5, 2, 4, 4), torch.zeros(5, dtype=torch.long), torch.zeros(5, dtype=torch.long)).shape
    torch.Size([5, 2, 4, 4])
    """

    def __init__(self, latent_shape: tuple[int, ...] = (2, 4, 4), n_classes: int = 12, hidden: int = 256) -> None:
        super().__init__()
        shape = tuple(check_int(s, "latent_shape", low=1) for s in latent_shape)
        if not shape:
            raise ValueError("latent_shape must have at least one axis, got ()")
        self.latent_shape = shape
        self.n_classes = check_int(n_classes, "n_classes", low=1)
        hidden = check_int(hidden, "hidden", low=1)
        d = int(math.prod(shape))
        self.class_emb = nn.Embedding(self.n_classes, hidden)
        self.time_mlp = nn.Sequential(nn.Linear(64, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.inp = nn.Linear(d, hidden)
        self.blocks = nn.ModuleList([nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden)) for _ in range(3)])
        self.out = nn.Sequential(nn.SiLU(), nn.Linear(hidden, d))

    @staticmethod
    def _time_embedding(t: torch.Tensor) -> torch.Tensor:
        freqs = torch.exp(-math.log(1000.0) * torch.arange(32, dtype=torch.float32, device=t.device) / 32)
        a = t.float()[:, None] * freqs[None]
        return torch.cat([a.sin(), a.cos()], dim=1)

    def forward(self, z: torch.Tensor, t: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        n = z.shape[0]
        h = self.inp(z.reshape(n, -1)) + self.time_mlp(self._time_embedding(t)) + self.class_emb(c)
        for block in self.blocks:
            h = h + block(h)
        return self.out(h).reshape(n, *self.latent_shape)


def diffusion_loss(denoiser: nn.Module, schedule: NoiseSchedule, z0: torch.Tensor, labels: torch.Tensor,
                   generator: torch.Generator | None = None, reduction: str = "mean") -> torch.Tensor:
    """The DDPM training loss E_{t, eps} ||eps - eps_theta(z_t, t, c)||^2 (Ho et al. Eq. 14), one draw per latent.

    ``z0`` (N, ...) are scaled latents s * z; ``labels`` (N,) class indices; t ~ U{0..T-1} and eps ~ N(0, I) are
    fresh draws from ``generator`` (made on its device, the CPU by default, then moved to z0's device).
    ``reduction="none"`` returns the per-latent loss (N,). The denoiser must predict the noise (wrap a v-prediction
    UNet in :class:`~icml25.cat.sd.UNetDenoiser`, which converts).
    """
    gdev = generator.device if generator is not None else z0.device
    t = torch.randint(schedule.timesteps, (z0.shape[0],), generator=generator, device=gdev).to(z0.device)
    eps = torch.randn(z0.shape, generator=generator, device=gdev).to(z0.device)
    err = (denoiser(schedule.add_noise(z0, eps, t), t, labels) - eps) ** 2
    per = err.reshape(z0.shape[0], -1).mean(1)
    return per if reduction == "none" else per.mean()


@torch.no_grad()
def ddim_sample(denoiser: nn.Module, schedule: NoiseSchedule, labels: Any, *, steps: int = 50, seed: int = 0,
                eta: float = 0.0, guidance_scale: float = 1.0, null_label: int | None = None,
                clip_x0: float | None = None) -> torch.Tensor:
    """DDIM sampling (Song et al. 2021, Eq. 12) of one scaled latent s * z per entry of ``labels``.

    Parameters
    ----------
    labels : array of int, shape (N,)
        Class index of each sample.
    steps : int
        Number of DDIM steps (evenly spaced over the schedule).
    eta : float
        0 = deterministic DDIM, 1 = DDPM-like ancestral noise.
    guidance_scale, null_label : optional
        Classifier-free guidance eps_null + w (eps_c - eps_null) with w = ``guidance_scale`` and the unconditional
        class ``null_label`` (Stable Diffusion samples with w = 7.5 and the empty prompt); 1.0 = no guidance.
    clip_x0 : float, optional
        Clamp each step's predicted clean latent to [-clip_x0, clip_x0] (DDPM's ``clip_denoised``; scaled latents
        have unit standard deviation, so 3-5 keeps the support) and re-derive the noise from it. None = no clamp.

    Returns
    -------
    Tensor of shape (N, *denoiser.latent_shape), on the denoiser's device.

    Examples
    --------
    >>> net = LatentDenoiser((2, 4, 4), hidden=16)
    >>> ddim_sample(net, NoiseSchedule(20), [0, 1, 11], steps=5).shape
    torch.Size([3, 2, 4, 4])
    """
    check_module(denoiser, "denoiser")
    dev = module_device(denoiser)
    c = torch.as_tensor(check_array(labels, "labels", ndim=1, dtype=int, low=0,
                                    high=denoiser.n_classes - 1), dtype=torch.long, device=dev)
    steps = check_int(steps, "steps", low=1, high=schedule.timesteps)
    seed = check_int(seed, "seed", low=0)
    eta = check_probability(eta, "eta")
    guidance_scale = check_positive(guidance_scale, "guidance_scale", allow_zero=True)
    if guidance_scale != 1.0:
        if null_label is None:
            raise ValueError("guidance_scale != 1 needs null_label, the unconditional class (e.g. the empty prompt)")
        null_label = check_int(null_label, "null_label", low=0, high=denoiser.n_classes - 1)
    if clip_x0 is not None:
        clip_x0 = check_positive(clip_x0, "clip_x0")
    g = torch.Generator().manual_seed(seed)
    ts = torch.linspace(schedule.timesteps - 1, 0, steps, device="cpu").round().long().tolist()
    z = torch.randn((len(c), *denoiser.latent_shape), generator=g, device=g.device).to(dev)
    alpha_bar = schedule.alpha_bar.to(dev)
    was = denoiser.training
    denoiser.eval()
    for i, t in enumerate(ts):
        ab = alpha_bar[t]
        ab_prev = alpha_bar[ts[i + 1]] if i + 1 < len(ts) else alpha_bar.new_tensor(1.0)
        tt = torch.full((len(c),), t, dtype=torch.long, device=dev)
        if guidance_scale == 1.0:
            eps = denoiser(z, tt, c)
        else:
            e_c, e_u = denoiser(torch.cat([z, z]), torch.cat([tt, tt]), torch.cat([c, torch.full_like(c, null_label)])
                                ).chunk(2)
            eps = e_u + guidance_scale * (e_c - e_u)
        x0 = (z - (1 - ab).sqrt() * eps) / ab.sqrt()
        if clip_x0 is not None:
            x0 = x0.clamp(-clip_x0, clip_x0)
            eps = (z - ab.sqrt() * x0) / (1 - ab).sqrt()
        sigma = eta * ((1 - ab_prev) / (1 - ab) * (1 - ab / ab_prev)).clamp_min(0).sqrt()
        z = ab_prev.sqrt() * x0 + (1 - ab_prev - sigma**2).clamp_min(0).sqrt() * eps
        if eta > 0 and i + 1 < len(ts):
            z = z + sigma * randn_like(z, g)
    denoiser.train(was)
    return z


def train_denoiser(denoiser: nn.Module, schedule: NoiseSchedule, latents: Any, labels: Any, *, steps: int = 4000,
                   batch_size: int = 128, lr: float = 1e-3, null_class: int | None = None, p_uncond: float = 0.1,
                   seed: int = 0) -> list[float]:
    """Train ``denoiser`` in place on scaled latents (N, ...) with class ``labels`` (N,), Adam + diffusion loss.

    With ``null_class`` set, each label is replaced by it with probability ``p_uncond`` (an unconditional mode, as
    classifier-free-guidance training does). Returns the per-step losses.

    Examples
    --------
    >>> import torch
    >>> net = LatentDenoiser((2, 4, 4), hidden=16)
    >>> len(train_denoiser(net, NoiseSchedule(20), torch.randn(10, 2, 4, 4), [0] * 10, steps=3))
    3
    """
    check_module(denoiser, "denoiser")
    dev = module_device(denoiser)
    z = torch.as_tensor(check_array(latents.detach().cpu().numpy() if isinstance(latents, torch.Tensor) else latents,
                                    "latents", ndim=len(denoiser.latent_shape) + 1), dtype=torch.float32, device=dev)
    c = torch.as_tensor(check_array(labels, "labels", ndim=1, dtype=int, low=0, high=denoiser.n_classes - 1),
                        dtype=torch.long, device=dev)
    if len(c) != len(z):
        raise ValueError(f"labels must have one entry per latent ({len(z)}), got {len(c)}")
    steps = check_int(steps, "steps", low=1)
    batch_size = check_int(batch_size, "batch_size", low=1)
    lr = check_positive(lr, "lr")
    p_uncond = check_probability(p_uncond, "p_uncond")
    if null_class is not None:
        null_class = check_int(null_class, "null_class", low=0, high=denoiser.n_classes - 1)
    g = torch.Generator().manual_seed(check_int(seed, "seed", low=0))
    opt = torch.optim.Adam(denoiser.parameters(), lr=lr, foreach=True)
    denoiser.train()
    losses = []
    for _ in progress(range(steps), "diffusion training"):
        idx = torch.randint(len(z), (min(batch_size, len(z)),), generator=g, device=g.device).to(dev)
        cb = c[idx]
        if null_class is not None:
            drop = torch.rand(len(cb), generator=g, device=g.device).to(dev) < p_uncond
            cb = torch.where(drop, torch.full_like(cb, null_class), cb)
        loss = diffusion_loss(denoiser, schedule, z[idx], cb, g)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    denoiser.eval()
    return losses
