"""A tiny KL-regularised convolutional autoencoder in the layout of Stable Diffusion's VAE (spec §6 step 1).

Module names follow diffusers' ``AutoencoderKL`` closely enough that the official CAT target patterns apply
unchanged: the 3x3 convs of residual blocks are ``conv1``/``conv2``, down/up-sampler convs are ``conv``, and the
excluded layers are ``conv_in``/``conv_out``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from icml25.core.progress import progress
from icml25.core.validation import check_int, check_positive

from ._validation import as_images, check_module

__all__ = ["TinyVAE", "train_vae"]


class _ResBlock(nn.Module):
    def __init__(self, ch: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv2(self.act(self.conv1(self.act(x))))


class _Down(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


class _Up(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(self.up(x))


class _Encoder(nn.Module):
    def __init__(self, cin: int, width: int, zc: int) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(cin, width, 3, padding=1)
        self.down1 = _Down(width, 2 * width)
        self.down2 = _Down(2 * width, 2 * width)
        self.mid = _ResBlock(2 * width)
        self.conv_out = nn.Conv2d(2 * width, 2 * zc, 3, padding=1)
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.conv_in(x))
        h = self.act(self.down1(h))
        h = self.act(self.down2(h))
        return self.conv_out(self.act(self.mid(h)))


class _Decoder(nn.Module):
    def __init__(self, cout: int, width: int, zc: int) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(zc, 2 * width, 3, padding=1)
        self.mid = _ResBlock(2 * width)
        self.up1 = _Up(2 * width, 2 * width)
        self.up2 = _Up(2 * width, width)
        self.conv_out = nn.Conv2d(width, cout, 3, padding=1)
        self.act = nn.SiLU()

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        h = self.mid(self.conv_in(z))
        h = self.act(self.up1(self.act(h)))
        h = self.act(self.up2(h))
        return self.conv_out(h)


class TinyVAE(nn.Module):
    """A KL autoencoder x (N, C, S, S) in [0, 1] -> latent (N, zc, S/4, S/4), the stand-in for SD's VAE.

    ``encode`` returns the posterior mean and log-variance (q(z|x) = N(mu, exp(logvar))), ``decode`` maps a latent
    back to pixels (unbounded output, clamp for display). ``scaling_factor`` plays SD's 0.18215: latents handed to
    the diffusion model are ``scaling_factor * z``; :func:`train_vae` sets it to 1/std of the training latents.

    Parameters
    ----------
    in_channels : int
        Image channels C.
    image_size : int
        Side S of the square images (divisible by 4).
    latent_channels : int
        Latent channels zc (the spec's 2x4x4 latent for 16x16 digits: zc = 2).
    width : int
        Channels of the first conv (the spec's 32).

    Examples
    --------
    >>> import torch
    >>> vae = TinyVAE(width=8)
    >>> mu, logvar = vae.encode(torch.rand(3, 1, 16, 16))
    >>> tuple(mu.shape), tuple(vae.decode(mu).shape)
    ((3, 2, 4, 4), (3, 1, 16, 16))
    """

    def __init__(self, in_channels: int = 1, image_size: int = 16, latent_channels: int = 2, width: int = 32) -> None:
        super().__init__()
        self.in_channels = check_int(in_channels, "in_channels", low=1)
        self.image_size = check_int(image_size, "image_size", low=4)
        if self.image_size % 4:
            raise ValueError(f"image_size must be divisible by 4 (two stride-2 downsamplers), got {image_size}")
        self.latent_channels = check_int(latent_channels, "latent_channels", low=1)
        self.width = check_int(width, "width", low=1)
        self.encoder = _Encoder(self.in_channels, self.width, self.latent_channels)
        self.decoder = _Decoder(self.in_channels, self.width, self.latent_channels)
        self.register_buffer("_scaling", torch.tensor(1.0))

    @property
    def scaling_factor(self) -> float:
        """Latent scale s (SD: 0.18215): the diffusion model sees s * z."""
        return float(self._scaling)

    @property
    def latent_shape(self) -> tuple[int, int, int]:
        """(zc, S/4, S/4)."""
        return (self.latent_channels, self.image_size // 4, self.image_size // 4)

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Posterior (mu, logvar), each (N, zc, S/4, S/4), of images x (N, C, S, S) in [0, 1]."""
        if not isinstance(x, torch.Tensor) or x.ndim != 4 or tuple(x.shape[1:]) != (self.in_channels,
                                                                                  self.image_size, self.image_size):
            got = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
            raise ValueError(f"x must be a tensor of shape (N, {self.in_channels}, {self.image_size}, "
                             f"{self.image_size}), got {got}")
        mu, logvar = self.encoder(x).chunk(2, dim=1)
        return mu, logvar.clamp(-30.0, 20.0)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Images (N, C, S, S) from latents z (N, zc, S/4, S/4) (unscaled latents, not s * z)."""
        return self.decoder(z)

    def forward(self, x: torch.Tensor, sample: bool = False,
                generator: torch.Generator | None = None) -> torch.Tensor:
        """Reconstruction D(z) with z the posterior mean (``sample=False``) or a posterior sample."""
        mu, logvar = self.encode(x)
        if sample:
            gdev = generator.device if generator is not None else mu.device
            mu = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=generator, device=gdev).to(mu.device)
        return self.decode(mu)


def train_vae(vae: TinyVAE, images: Any, *, steps: int = 1500, batch_size: int = 64, lr: float = 2e-3,
              kl_weight: float = 1e-2, seed: int = 0) -> list[float]:
    """Train ``vae`` in place with MSE reconstruction + ``kl_weight`` * KL (per-element means), Adam.

    Sets ``vae.scaling_factor`` to 1/std of the posterior means of ``images`` afterwards (SD's convention).

    Parameters
    ----------
    images : array or tensor of shape (N, C, S, S) in [0, 1]

    Returns
    -------
    list of float: the loss of every step.

    Examples
    --------
    >>> import torch
    >>> vae = TinyVAE(width=8)
    >>> losses = train_vae(vae, torch.rand(16, 1, 16, 16), steps=3, batch_size=8)
    >>> len(losses), vae.scaling_factor > 0
    (3, True)
    """
    check_module(vae, "vae")
    if not isinstance(vae, TinyVAE):
        raise TypeError(f"vae must be a TinyVAE, got {type(vae).__name__}")
    x = as_images(images, "images", channels=vae.in_channels, size=vae.image_size)
    steps = check_int(steps, "steps", low=1)
    batch_size = check_int(batch_size, "batch_size", low=1)
    lr = check_positive(lr, "lr")
    kl_weight = check_positive(kl_weight, "kl_weight", allow_zero=True)
    seed = check_int(seed, "seed", low=0)
    g = torch.Generator().manual_seed(seed)
    x = x.to(next(vae.parameters()).device)
    opt = torch.optim.Adam(vae.parameters(), lr=lr, foreach=True)
    losses = []
    vae.train()
    for _ in progress(range(steps), "VAE training"):
        idx = torch.randint(len(x), (min(batch_size, len(x)),), generator=g, device=g.device).to(x.device)
        xb = x[idx]
        mu, logvar = vae.encode(xb)
        z = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=g, device=g.device).to(mu.device)
        rec = ((vae.decode(z) - xb) ** 2).mean()
        kl = 0.5 * (mu**2 + logvar.exp() - 1.0 - logvar).mean()
        loss = rec + kl_weight * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    vae.eval()
    with torch.no_grad():
        mu = torch.cat([vae.encode(x[i:i + 512])[0] for i in range(0, len(x), 512)])
        vae._scaling.fill_(1.0 / float(mu.std().clamp_min(1e-6)))
    return losses
