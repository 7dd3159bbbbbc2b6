"""Upper bounds on the minimum margin: ℓ2 PGD (Madry et al.) and uniform sampling of the ball.

Both search the same set as the verifier, the ball ``‖x − x̂‖₂ ≤ ρ`` without any box clipping, so every
certified lower bound must lie below the margins they find (spec §8).
"""

from __future__ import annotations

from typing import Any

import torch

from icml25.core.validation import check_int, check_positive, check_probability, check_tensor

from .network import BoundedNet
from .propagation import _check_eps, _check_spec

__all__ = ["pgd_l2", "sample_ball", "sampled_min_margin"]


def sample_ball(centre: torch.Tensor, radius: torch.Tensor, n: int, generator: torch.Generator,
                surface_fraction: float = 0.5) -> torch.Tensor:
    """``n`` points per centre in the ℓ2 ball (a fraction on the sphere, the rest uniform inside).

    Parameters
    ----------
    centre : Tensor [B, d]
    radius : Tensor [B]
    n : int
    generator : torch.Generator

    surface_fraction : float in [0, 1]
        Fraction of the points put on the sphere.

    Returns
    -------
    Tensor [B, n, d]
    """
    centre = check_tensor(centre, "centre", ndim=2, dtype=torch.float64)
    radius = check_tensor(radius, "radius", ndim=1, low=0.0, dtype=torch.float64)
    B, d = centre.shape
    if radius.shape[0] != B:
        raise ValueError(f"radius must have one entry per centre ({B}), got {radius.shape[0]}")
    n = check_int(n, "n", low=1)
    surface_fraction = check_probability(surface_fraction, "surface_fraction")
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    return _sample_ball(centre, radius, n, generator, surface_fraction)


def _check_net(net: Any) -> None:
    if not isinstance(net, BoundedNet):
        raise TypeError(f"net must be a BoundedNet, got {type(net).__name__}")


def _sample_ball(centre: torch.Tensor, radius: torch.Tensor, n: int, generator: torch.Generator,
                 surface_fraction: float = 0.5) -> torch.Tensor:
    B, d = centre.shape
    direction = torch.randn(B, n, d, generator=generator, dtype=centre.dtype)
    direction = direction / direction.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    r = torch.rand(B, n, 1, generator=generator, dtype=centre.dtype).pow(1.0 / d)
    r[:, : int(surface_fraction * n)] = 1.0
    return centre.unsqueeze(1) + radius.view(B, 1, 1) * r * direction


def _project(delta: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
    norm = delta.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    return delta * torch.clamp(radius.view(-1, *([1] * (delta.dim() - 1))) / norm, max=1.0)


def pgd_l2(net: BoundedNet, x: Any, eps: Any, C: Any, steps: int = 200, restarts: int = 5,
           step_size: float | None = None, seed: int = 0) -> torch.Tensor:
    """Smallest value of every specification row ``(C f)(x')`` found by ℓ2 PGD inside ``‖x' − x‖₂ ≤ eps``.

    Each row is attacked separately (``restarts`` random starts inside the ball plus the centre), taking
    normalised-gradient steps of ``step_size`` (default ``2.5·eps/steps``) and projecting back onto the ball;
    the minimum over all iterates is returned, so it is an upper bound on the true minimum.

    Parameters
    ----------
    net : BoundedNet
    x : array-like [B, ...]
    eps : float or [B]
    C : labels [B] or tensor [B, m, q]
    steps, restarts : int
    seed : int

    Returns
    -------
    Tensor [B, m]
        Attack margins (upper bounds on the minimum of each row).
    """
    _check_net(net)
    x = net.flatten_input(x)
    B, d = x.shape
    e = _check_eps(eps, B)
    Cm = _check_spec(C, B, net.n_classes)
    steps = check_int(steps, "steps", low=1)
    restarts = check_int(restarts, "restarts", low=0)
    if step_size is not None:
        step_size = check_positive(step_size, "step_size")
    seed = check_int(seed, "seed", low=0)
    m = Cm.shape[1]
    R = restarts + 1
    step = 2.5 * e / steps if step_size is None else torch.full((B,), float(step_size), dtype=torch.float64)
    gen = torch.Generator().manual_seed(seed)  # random starts drawn on the CPU: the same on every device
    # [B, m, R, d] deltas, one per (image, row, restart); restart 0 starts at the centre
    start = _sample_ball(torch.zeros(B * m, d, dtype=x.dtype), e.repeat_interleave(m), R, gen, surface_fraction=0.0)
    dev = x.device
    delta = start.view(B, m, R, d).to(dev)
    delta[:, :, 0] = 0.0
    Cm = Cm.to(dev)
    rad = e.view(B, 1, 1, 1).to(dev)
    stepv = step.view(B, 1, 1, 1).to(dev)
    best = torch.full((B, m), float("inf"), dtype=x.dtype, device=dev)
    for it in range(steps + 1):
        delta = delta.detach().requires_grad_(True)
        logits = net.forward((x.view(B, 1, 1, d) + delta).reshape(-1, d)).view(B, m, R, -1)
        margin = (logits * Cm.unsqueeze(2)).sum(-1)  # row j of C applied to its own copies
        best = torch.minimum(best, margin.detach().min(dim=2).values)
        if it == steps:
            break
        (grad,) = torch.autograd.grad(margin.sum(), delta)
        gnorm = grad.norm(dim=-1, keepdim=True).clamp_min(1e-300)
        delta = delta.detach() - stepv * grad / gnorm
        delta = delta * torch.clamp(rad / delta.norm(dim=-1, keepdim=True).clamp_min(1e-300), max=1.0)
    return best


@torch.no_grad()
def sampled_min_margin(net: BoundedNet, x: Any, eps: Any, C: Any, n: int = 100_000, seed: int = 0,
                       chunk: int = 20_000) -> torch.Tensor:
    """Minimum of every specification row over ``n`` random points of the ball (half on its surface); ``[B, m]``."""
    _check_net(net)
    x = net.flatten_input(x)
    B, d = x.shape
    e = _check_eps(eps, B)
    Cm = _check_spec(C, B, net.n_classes)
    n = check_int(n, "n", low=1)
    chunk = check_int(chunk, "chunk", low=1)
    seed = check_int(seed, "seed", low=0)
    gen = torch.Generator().manual_seed(seed)
    Cm = Cm.to(x.device)
    best = torch.full((B, Cm.shape[1]), float("inf"), dtype=x.dtype, device=x.device)
    done = 0
    while done < n:
        k = min(chunk, n - done)
        pts = _sample_ball(x.cpu(), e, k, gen).to(x.device)
        out = net.forward(pts.reshape(-1, d)).view(B, k, -1)
        vals = torch.einsum("bkq,bmq->bmk", out, Cm)
        best = torch.minimum(best, vals.min(dim=-1).values)
        done += k
    return best
