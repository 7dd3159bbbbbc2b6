"""Per-ReLU-layer linear relaxations and offsets: CROWN's box offset and SDP-CROWN's ℓ2 offset (Theorem 4.1).

For coefficients ``c`` on a ReLU output and ``g`` on its input, both offsets are constants ``h`` with
``cᵀReLU(z) ≥ gᵀz + h`` on a set that contains every reachable ``z``: CROWN's holds on the box ``[l, u]``,
SDP-CROWN's on the ball ``‖z − ẑ‖₂ ≤ ρ``. All functions are batched: ``c, g`` have shape ``[B, S, n]`` (batch,
specification rows, neurons), ``ẑ`` ``[B, n]``, ``ρ`` ``[B]``, ``λ`` ``[B, S]``.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from icml25.core.validation import check_int, check_positive, check_tensor

__all__ = ["relu_relaxation", "crown_offset", "sdp_offset", "best_lambda", "sdp_offset_zero_centre"]


def relu_relaxation(lower: torch.Tensor, upper: torch.Tensor, alpha: torch.Tensor | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """CROWN's linear bounds of ``ReLU`` on ``[l, u]`` (Section 2, α-CROWN lower slope).

    Parameters
    ----------
    lower, upper : Tensor [B, n]
        Pre-activation bounds.
    alpha : Tensor [B, S, n] or None
        Lower slopes of unstable neurons in [0, 1]; None uses CROWN's heuristic (1 if ``u > −l`` else 0).

    Returns
    -------
    lower_slope : Tensor [B, S, n] or [B, 1, n]
        ``a ≥ lower_slope · z`` (1 for stable active, 0 for stable inactive neurons).
    upper_slope, upper_icpt : Tensor [B, 1, n]
        ``a ≤ upper_slope · z + upper_icpt`` (``u/(u−l)``, ``−ul/(u−l)`` for unstable neurons).
    """
    lower = check_tensor(lower, "lower", ndim=2, dtype=torch.float64)
    upper = check_tensor(upper, "upper", shape=tuple(lower.shape), dtype=torch.float64)  # the shape of lower
    if (upper < lower).any():
        raise ValueError("upper must be >= lower everywhere")
    if alpha is not None:
        alpha = check_tensor(alpha, "alpha", ndim=3, low=0.0, dtype=torch.float64)
        if (alpha > 1).any() or alpha.shape[0] != lower.shape[0] or alpha.shape[2] != lower.shape[1]:
            raise ValueError(f"alpha must lie in [0, 1] with shape [B, S, n] = [{lower.shape[0]}, S, "
                             f"{lower.shape[1]}], got shape {tuple(alpha.shape)}")
    return _relu_relaxation(lower, upper, alpha)


def _relu_relaxation(lower: torch.Tensor, upper: torch.Tensor, alpha: torch.Tensor | None
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    active = lower >= 0
    unstable = (lower < 0) & (upper > 0)
    denom = (upper - lower).clamp_min(1e-30)
    upper_slope = torch.where(unstable, upper / denom, active.to(lower.dtype))
    upper_icpt = torch.where(unstable, -upper * lower / denom, torch.zeros_like(lower))
    if alpha is None:
        alpha = (upper > -lower).to(lower.dtype).unsqueeze(1)
    lower_slope = torch.where(unstable.unsqueeze(1), alpha, active.unsqueeze(1).to(lower.dtype))
    return lower_slope, upper_slope.unsqueeze(1), upper_icpt.unsqueeze(1)


def crown_offset(c: torch.Tensor, upper_icpt: torch.Tensor) -> torch.Tensor:
    """CROWN's offset ``Σᵢ min(cᵢ, 0) γᵢ`` (upper-line intercepts γ), shape ``[B, S]``.

    ``c`` is ``[B, S, n]`` (coefficients on the ReLU output), ``upper_icpt`` ``[B, 1, n]`` or ``[B, S, n]``.
    """
    c = check_tensor(c, "c", ndim=3, dtype=torch.float64)
    upper_icpt = check_tensor(upper_icpt, "upper_icpt", ndim=3, low=0.0, dtype=torch.float64)
    if upper_icpt.shape[0] != c.shape[0] or upper_icpt.shape[2] != c.shape[2]:
        raise ValueError(f"upper_icpt must have shape [{c.shape[0]}, 1 or S, {c.shape[2]}], got "
                         f"{tuple(upper_icpt.shape)}")
    return _crown_offset(c, upper_icpt)


def _crown_offset(c: torch.Tensor, upper_icpt: torch.Tensor) -> torch.Tensor:
    return (c.clamp(max=0) * upper_icpt).sum(-1)


def sdp_offset(c: torch.Tensor, g: torch.Tensor, centre: torch.Tensor, radius: torch.Tensor,
               lam: torch.Tensor) -> torch.Tensor:
    """SDP-CROWN offset ``h(g, λ)`` of Theorem 4.1.

    ``h = −½ (λ(ρ² − ‖ẑ‖²) + ‖φ‖²/λ)`` with ``φᵢ = min{cᵢ − gᵢ − λẑᵢ, gᵢ + λẑᵢ, 0}``, so that
    ``cᵀReLU(z) ≥ gᵀz + h`` for every ``‖z − ẑ‖₂ ≤ ρ`` and every ``λ > 0``. Evaluated per coordinate without
    cancellation: ``min(p, 0)²/λ − λẑ²`` equals ``(c−g)²/λ − 2(c−g)ẑ`` when ``p = c−g−λẑ < 0`` and
    ``g²/λ + 2gẑ`` when ``p = g+λẑ < 0`` (exact algebra), ``−λẑ²`` otherwise.

    Parameters
    ----------
    c, g : Tensor [B, S, n]
        Coefficients on the ReLU output and input.
    centre : Tensor [B, n]
        Ball centre ``ẑ``.
    radius : Tensor [B]
        Ball radius ``ρ ≥ 0``.
    lam : Tensor [B, S]
        Multipliers ``λ > 0``.

    Returns
    -------
    Tensor [B, S]
    """
    c, g, centre, radius = _check_cgzr(c, g, centre, radius)
    lam = check_tensor(lam, "lam", ndim=2, shape=tuple(c.shape[:2]), low=0, low_open=True, dtype=torch.float64)  # [B, S] of c
    return _sdp_offset(c, g, centre, radius, lam)


def _check_cgzr(c: Any, g: Any, centre: Any, radius: Any) -> tuple[torch.Tensor, ...]:
    c = check_tensor(c, "c", ndim=3, dtype=torch.float64)
    g = check_tensor(g, "g", shape=tuple(c.shape), dtype=torch.float64)  # the shape of c
    if centre is not None:
        centre = check_tensor(centre, "centre", shape=(c.shape[0], c.shape[2]), dtype=torch.float64)  # [B, n] of c
    radius = check_tensor(radius, "radius", shape=(c.shape[0],), low=0.0, dtype=torch.float64)  # [B] of c
    return c, g, centre, radius


def _sdp_offset(c: torch.Tensor, g: torch.Tensor, centre: torch.Tensor, radius: torch.Tensor,
                lam: torch.Tensor) -> torch.Tensor:
    lam = lam.to(c.dtype)
    radius = radius.to(c.dtype)
    lam3 = lam.unsqueeze(-1)
    zc = centre.to(c.dtype).unsqueeze(1)
    a = c - g
    neg_sq = -lam3 * zc * zc
    t1 = torch.where(a - lam3 * zc < 0, a * a / lam3 - 2 * a * zc, neg_sq)  # Eq. (Thm 4.1), first piece
    t2 = torch.where(g + lam3 * zc < 0, g * g / lam3 + 2 * g * zc, neg_sq)  # second piece
    per_coord = torch.maximum(t1, t2)
    return -0.5 * (lam * radius.unsqueeze(-1) ** 2 + per_coord.sum(-1))


@torch.no_grad()
def best_lambda(c: torch.Tensor, g: torch.Tensor, centre: torch.Tensor, radius: torch.Tensor,
                lo: float = 1e-6, hi: float = 1e6, steps: int = 64, search: str = "stationary") -> torch.Tensor:
    """``argmax_λ h(g, λ)`` per row (``h`` is concave in λ).

    ``search='stationary'`` (default) solves ``h'(λ) = 0``: on the set of coordinates where ``φᵢ`` takes each
    branch, ``h = −½(λ(ρ² − Σ_{φᵢ=0} ẑᵢ²) + A/λ + const)`` with ``A = Σ_{φᵢ=cᵢ−gᵢ−λẑᵢ}(cᵢ−gᵢ)² +
    Σ_{φᵢ=gᵢ+λẑᵢ} gᵢ²``, whose maximiser ``√(A / (ρ² − Σ ẑᵢ²))`` is the next iterate, safeguarded by a bracket on
    the sign of ``h'`` (bisection in log λ when the candidate leaves it); exact once the branch pattern settles.
    ``search='golden'``: golden-section search on log λ (the slower reference).

    Parameters
    ----------
    c, g, centre, radius
        As in :func:`sdp_offset`.
    lo, hi : float
        Search interval for λ (λ is clamped to it).
    steps : int
        Iterations (golden: 64 shrink the log-interval by 1e-13; stationary: bisection alone would reach 2⁻⁶⁴).
    search : {'stationary', 'golden'}

    Returns
    -------
    Tensor [B, S]
        The maximising λ (within the interval).
    """
    c, g, centre, radius = _check_cgzr(c, g, centre, radius)
    lo = check_positive(lo, "lo")
    hi = check_positive(hi, "hi")
    if hi <= lo:
        raise ValueError(f"hi must be > lo, got lo={lo}, hi={hi}")
    steps = check_int(steps, "steps", low=1)
    if search not in ("stationary", "golden"):
        raise ValueError(f"search must be 'stationary' or 'golden', got {search!r}")
    if search == "golden":
        return _best_lambda_golden(c, g, centre, radius, lo, hi, steps)
    return _best_lambda(c, g, centre, radius, lo, hi, steps)


@torch.no_grad()
def _best_lambda(c: torch.Tensor, g: torch.Tensor, centre: torch.Tensor, radius: torch.Tensor,
                 lo: float = 1e-6, hi: float = 1e6, steps: int = 64) -> torch.Tensor:
    a = c - g
    z = centre.to(c.dtype).unsqueeze(1)
    a2, g2, z2 = a * a, g * g, z * z
    rho2 = radius.to(c.dtype).unsqueeze(-1) ** 2
    shape = c.shape[:2]
    low = torch.full(shape, lo, dtype=c.dtype, device=c.device)
    high = torch.full(shape, hi, dtype=c.dtype, device=c.device)
    lam = torch.full(shape, min(max(1.0, lo), hi), dtype=c.dtype, device=c.device)
    zero = torch.zeros((), dtype=c.dtype, device=c.device)
    for _ in range(steps):
        lz = lam.unsqueeze(-1) * z
        u, v = a - lz, g + lz  # φ = min(u, v, 0)
        r1 = (u <= v) & (u < 0)
        r2 = (v < u) & (v < 0)
        A = torch.where(r1, a2, torch.where(r2, g2, zero)).sum(-1)
        D = rho2 - torch.where(r1 | r2, zero, z2).sum(-1)
        up = A > D * lam * lam  # h'(λ) > 0: the maximiser lies above λ
        low = torch.where(up, lam, low)
        high = torch.where(up, high, lam)
        cand = torch.where(D > 0, (A / D.clamp_min(1e-300)).sqrt(), high)
        inside = (cand > low) & (cand < high)
        lam = torch.where(inside, cand, (low * high).sqrt())
    return lam


@torch.no_grad()
def _best_lambda_golden(c: torch.Tensor, g: torch.Tensor, centre: torch.Tensor, radius: torch.Tensor,
                        lo: float = 1e-6, hi: float = 1e6, steps: int = 64) -> torch.Tensor:
    inv_phi = (math.sqrt(5) - 1) / 2
    shape = c.shape[:2]
    a = torch.full(shape, math.log(lo), dtype=c.dtype, device=c.device)
    b = torch.full(shape, math.log(hi), dtype=c.dtype, device=c.device)
    x1 = b - inv_phi * (b - a)
    x2 = a + inv_phi * (b - a)
    f1 = _sdp_offset(c, g, centre, radius, x1.exp())
    f2 = _sdp_offset(c, g, centre, radius, x2.exp())
    for _ in range(steps):
        left = f1 >= f2  # the maximum lies in [a, x2]
        a = torch.where(left, a, x1)
        b = torch.where(left, x2, b)
        nx1 = torch.where(left, b - inv_phi * (b - a), x2)
        nx2 = torch.where(left, x1, a + inv_phi * (b - a))
        f_new = _sdp_offset(c, g, centre, radius, torch.where(left, nx1, nx2).exp())
        f1, f2 = torch.where(left, f_new, f2), torch.where(left, f1, f_new)
        x1, x2 = nx1, nx2
    best = torch.where(f1 >= f2, x1, x2).exp()
    return best


def sdp_offset_zero_centre(c: torch.Tensor, g: torch.Tensor, radius: torch.Tensor) -> torch.Tensor:
    """Theorem 5.2: ``max_λ h(g, λ) = −ρ ‖min{c − g, g, 0}‖₂`` when the ball is centred at 0; shape ``[B, S]``.

    ``c, g`` are ``[B, S, n]`` and ``radius`` ``[B]`` as in :func:`sdp_offset`.
    """
    c, g, _, radius = _check_cgzr(c, g, None, radius)
    phi = torch.minimum(torch.minimum(c - g, g), torch.zeros_like(g))
    return -radius.unsqueeze(-1) * phi.norm(dim=-1)
