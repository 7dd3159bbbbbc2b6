"""The paper's controlled generative-model check: a small VAE that has memorised its data (spec 2.5).

An attempt at training sample ``x`` draws ``z = mu(x) + sqrt(T) sigma(x) * eps`` and decodes ``x_hat = g(z)``; it
succeeds when ``MSE(x_hat, x) < delta``. ``T`` is the sampling temperature. Correlated attempts share noise within
a batch of ``k``: ``eps_j = sqrt(rho) eps_0 + sqrt(1 - rho) xi_j``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from icml25.core.validation import check_array, check_int, check_positive, check_real

__all__ = ["DigitsVAE", "train_vae", "attempt_errors"]


class DigitsVAE(nn.Module):
    """MLP variational auto-encoder for 8x8 digits: ``64 -> hidden -> (mu, log sigma^2)``, ``latent -> hidden -> 64``.

    Parameters
    ----------
    n_features : int
        Input dimension (64 for scikit-learn's digits).
    latent : int
        Latent dimension.
    hidden : int
        Hidden width of encoder and decoder.

    Shapes
    ------
    forward : ``(B, n_features)`` in [0, 1] -> ``(x_hat, mu, logvar)`` of shapes ``(B, n_features)``,
    ``(B, latent)``, ``(B, latent)``.
    """

    def __init__(self, n_features: int = 64, latent: int = 8, hidden: int = 128) -> None:
        for v, name in ((n_features, "n_features"), (latent, "latent"), (hidden, "hidden")):
            _check_size(v, name)
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, n_features))
        self.latent = latent

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Posterior mean and log-variance, each ``(B, latent)``."""
        h = self.enc(x)
        return self.mu(h), self.logvar(h)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Reconstruction in [0, 1], ``(..., n_features)``."""
        return torch.sigmoid(self.dec(z))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Reparametrised reconstruction ``(x_hat, mu, logvar)``."""
        mu, logvar = self.encode(x)
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        return self.decode(z), mu, logvar


def _check_size(v: Any, name: str) -> int:
    """A positive integer (a float such as 2.0 is refused: sizes are counts)."""
    if isinstance(v, (float, np.floating)):
        raise TypeError(f"{name} must be a positive integer, got {v!r}")
    return check_int(v, name, low=1)


def _check_X(X: Any) -> np.ndarray:
    arr = check_array(X, "X", ndim=2, dtype=np.float32)
    if arr.min() < 0 or arr.max() > 1:
        raise ValueError("X must be scaled to [0, 1] (e.g. digits / 16), got range "
                         f"[{arr.min():.3g}, {arr.max():.3g}]")
    return arr


def train_vae(X: Any, latent: int = 8, hidden: int = 128, epochs: int = 60, batch_size: int = 128,
              lr: float = 1e-3, seed: int = 0) -> DigitsVAE:
    """Train a :class:`DigitsVAE` with the BCE + KL evidence bound and Adam (spec 6).

    Parameters
    ----------
    X : array-like, shape (n_samples, n_features)
        Training data in [0, 1].
    latent, hidden : int
        Latent and hidden sizes.
    epochs, batch_size : int
        Passes over the data and mini-batch size.
    lr : float
        Adam learning rate.
    seed : int
        Seeds the initialisation, the shuffling and the reparametrisation noise.

    Returns
    -------
    DigitsVAE
        The trained network, in eval mode.
    """
    arr = _check_X(X)
    for v, name in ((latent, "latent"), (hidden, "hidden"), (epochs, "epochs"), (batch_size, "batch_size")):
        _check_size(v, name)
    lr = check_positive(lr, "lr")
    gen = torch.Generator().manual_seed(int(seed))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = DigitsVAE(arr.shape[1], latent, hidden)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        x_all = torch.from_numpy(arr)
        model.train()
        for _ in range(int(epochs)):
            perm = torch.randperm(x_all.shape[0], generator=gen)
            for i in range(0, x_all.shape[0], int(batch_size)):
                xb = x_all[perm[i:i + int(batch_size)]]
                mu, logvar = model.encode(xb)
                z = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=gen)
                logits = model.dec(z)
                rec = F.binary_cross_entropy_with_logits(logits, xb, reduction="sum")
                kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
                loss = (rec + kl) / xb.shape[0]
                opt.zero_grad()
                loss.backward()
                opt.step()
    model.eval()
    return model


@torch.no_grad()
def attempt_errors(vae: DigitsVAE, X: Any, temperature: float, n_attempts: int, rho: float = 0.0,
                   n_batches: int = 1, seed: int = 0, chunk: int = 64) -> np.ndarray:
    """Reconstruction MSE of every attempt: ``z = mu + sqrt(T) sigma (sqrt(rho) eps_0 + sqrt(1-rho) xi_j)``.

    Parameters
    ----------
    vae : DigitsVAE
        Trained network.
    X : array-like, shape (n_samples, n_features)
        The samples to reconstruct (the "problems").
    temperature : float
        Latent temperature ``T > 0``.
    n_attempts : int
        Attempts per batch (``k``).
    rho : float
        Noise shared within a batch, in [0, 1); 0 gives iid attempts.
    n_batches : int
        Independent batches per sample (each with its own ``eps_0``).
    seed : int
        Seed of the noise.
    chunk : int
        Attempts decoded per step (memory bound).

    Returns
    -------
    ndarray of float32, shape (n_samples, n_batches, n_attempts)
        Mean squared error per attempt; success is ``error < delta``.
    """
    arr = _check_X(X)
    temperature = check_positive(temperature, "temperature")
    rho = check_real(rho, "rho", low=0.0, high=1.0, high_open=True)
    for v, name in ((n_attempts, "n_attempts"), (n_batches, "n_batches"), (chunk, "chunk")):
        _check_size(v, name)
    if not isinstance(vae, DigitsVAE):
        raise TypeError(f"vae must be a DigitsVAE (from train_vae), got {type(vae).__name__}")
    gen = torch.Generator().manual_seed(int(seed))
    x = torch.from_numpy(arr)
    mu, logvar = vae.encode(x)
    scale = float(np.sqrt(temperature)) * torch.exp(0.5 * logvar)  # (n, d)
    n, d = mu.shape
    out = np.empty((n, int(n_batches), int(n_attempts)), dtype=np.float32)
    a, b = float(np.sqrt(rho)), float(np.sqrt(1.0 - rho))
    for s in range(int(n_batches)):
        eps0 = torch.randn((n, 1, d), generator=gen)
        for j in range(0, int(n_attempts), int(chunk)):
            m = min(int(chunk), int(n_attempts) - j)
            eps = b * torch.randn((n, m, d), generator=gen)
            if rho > 0:
                eps = eps + a * eps0
            z = mu[:, None, :] + scale[:, None, :] * eps
            xh = vae.decode(z)
            out[:, s, j:j + m] = ((xh - x[:, None, :]) ** 2).mean(dim=-1).numpy()
    return out
