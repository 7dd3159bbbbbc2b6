"""The bound computations of the experiment: Appendix B.3, the theorem checks, method comparisons, the radius
sweep and the tightness check (each returns numbers; the stages in ``stages.py``/``table1.py`` turn them into claims)."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import torch

from ..attack import pgd_l2
from ..network import BoundedNet
from ..offsets import best_lambda, sdp_offset, sdp_offset_zero_centre
from ..propagation import compute_bounds, spec_matrix
from ..verification import lipnaive_bounds


def worked_example_b3(sdp_method: str = "sdp-crown") -> dict[str, float]:
    """Appendix B.3: LiRPA with IBP intermediate bounds (−2), SDP-CROWN (−√2), CROWN intermediate bounds (−√2).

    ``sdp_method="crown"`` (the reproduction's stub) computes plain CROWN in place of SDP-CROWN.
    """
    net = BoundedNet([([[0.0, 1.0], [1.0, 0.0]], [0.0, 0.0]), ([[-1.0, 1.0], [1.0, -1.0]], [0.0, 0.0]),
                      ([[-1.0, -1.0]], [0.0])], (2,))
    x = torch.tensor([[1.0, 1.0]])
    C = torch.ones(1, 1, 1, dtype=torch.float64)
    ibp = [(torch.zeros(1, 2), 2 * torch.ones(1, 2)), (-2 * torch.ones(1, 2), 2 * torch.ones(1, 2))]
    lirpa_ibp = compute_bounds(net, x, 1.0, C, method="crown", intermediate_bounds=ibp)[0].item()
    if sdp_method == "sdp-crown":
        sdp_ibp, info = compute_bounds(net, x, 1.0, C, method="sdp-crown", iters=0, lambda_mode="exact",
                                       intermediate_bounds=ibp)
        lam2 = float(info["lambdas"][1].item())
    else:
        sdp_ibp = compute_bounds(net, x, 1.0, C, method=sdp_method, iters=0, intermediate_bounds=ibp)[0]
        lam2 = math.nan
    crown_crown = compute_bounds(net, x, 1.0, C, method="crown")[0].item()
    return {"lirpa_ibp": lirpa_ibp, "sdp_crown_ibp": sdp_ibp.item(), "crown_crown": crown_crown,
            "lambda_2": lam2}


def theorem_checks(n_draws: int, n_points: int, seed: int) -> dict[str, float]:
    """Theorem 4.1 soundness against sampling and against an independent coordinate-wise Lagrangian minimum;
    Theorem 5.2's closed form against the 1-D maximisation; concavity of h in λ.

    The draws are zero-padded to 20 coordinates and evaluated as one batch (a zero coordinate adds nothing to h).
    """
    rng = np.random.default_rng(seed)
    nmax = 20
    ns = rng.integers(1, nmax + 1, size=n_draws)
    mask = np.arange(nmax)[None, :] < ns[:, None]
    c, g, xh = (rng.normal(size=(n_draws, nmax)) * mask for _ in range(3))
    rho = rng.uniform(0.05, 3.0, size=n_draws)
    lam = np.exp(rng.uniform(-4, 3, size=n_draws))
    T = torch.from_numpy
    tc, tg, tx, tr = T(c).unsqueeze(1), T(g).unsqueeze(1), T(xh), T(rho)
    h = sdp_offset(tc, tg, tx, tr, T(lam).unsqueeze(1))[:, 0].numpy()
    # coordinate-wise minimum of cᵢReLU(xᵢ) − gᵢxᵢ + (λ/2)(xᵢ − x̂ᵢ)² on x ≥ 0 and on x ≤ 0 (clipped vertex)
    lam2 = lam[:, None]
    xp = np.maximum(xh - (c - g) / lam2, 0.0)
    xn = np.minimum(xh + g / lam2, 0.0)
    vp = (c - g) * xp + lam2 / 2 * (xp - xh) ** 2
    vn = -g * xn + lam2 / 2 * (xn - xh) ** 2
    lagr = (np.minimum(vp, vn) * mask).sum(1) - lam * rho**2 / 2
    worst_lagr = float(np.abs(h - lagr).max())
    # sampled minimum of cᵀReLU(x) − gᵀx over each ball (half of the points on the sphere)
    worst_sample = -np.inf
    for i in range(n_draws):
        n = int(ns[i])
        d = rng.normal(size=(n_points, n))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        r = rng.uniform(size=(n_points, 1)) ** (1 / n)
        r[: n_points // 2] = 1.0
        pts = xh[i, :n] + rho[i] * r * d
        worst_sample = max(worst_sample, h[i] - float((np.maximum(pts, 0) @ c[i, :n] - pts @ g[i, :n]).min()))
    # Theorem 5.2 (x̂ = 0): closed form vs golden-section maximum over λ
    zero = torch.zeros(n_draws, nmax, dtype=torch.float64)
    lam_star = best_lambda(tc, tg, zero, tr, lo=1e-8, hi=1e8, steps=90)
    hmax = sdp_offset(tc, tg, zero, tr, lam_star)[:, 0]
    worst_52 = float((hmax - sdp_offset_zero_centre(tc, tg, tr)[:, 0]).abs().max())
    # concavity: h(midpoint) ≥ mean of the ends
    l1, l2 = (T(np.exp(rng.uniform(-4, 3, size=(n_draws, 1)))) for _ in range(2))
    hs = [sdp_offset(tc, tg, tx, tr, v)[:, 0] for v in (l1, l2, (l1 + l2) / 2)]
    worst_concave = float(((hs[0] + hs[1]) / 2 - hs[2]).max())
    return {"max_h_minus_sampled_min": worst_sample, "max_abs_h_minus_lagrangian": worst_lagr,
            "max_abs_thm52_error": worst_52, "max_concavity_violation": worst_concave}


def compare_methods(net: BoundedNet, X: torch.Tensor, y: torch.Tensor, eps: float, iters: int, seed: int,
                    pgd_steps: int, pgd_restarts: int, methods: tuple[str, ...], timing_repeats: int = 1,
                    **kw: Any) -> dict[str, Any]:
    """Certified margins of every method, LipNaive, PGD margins, clean correctness, and CPU times.

    Times are CPU seconds of the calling thread (torch runs single-threaded here), the least of
    ``timing_repeats`` round-robin runs of the methods (:func:`icml25.core.timing.time_interleaved`), so that a
    speed ratio does not depend on what else the machine or the process was doing during one of them.
    """
    from icml25.core.timing import time_interleaved

    C = spec_matrix(y, net.n_classes)
    with torch.no_grad():
        correct = net.forward(X).argmax(1) == y
    out: dict[str, Any] = {"correct": correct, "bounds": {}, "seconds": {}}
    t0 = time.thread_time()
    out["pgd"] = pgd_l2(net, X, eps, C, steps=pgd_steps, restarts=pgd_restarts, seed=seed)
    out["seconds"]["pgd"] = time.thread_time() - t0
    out["bounds"]["lipnaive"] = lipnaive_bounds(net, X, eps, C)
    tasks = {m: (lambda m=m: compute_bounds(net, X, eps, C, method=m, iters=0 if m == "crown" else iters, **kw)[0])
             for m in methods}
    bounds, seconds = time_interleaved(tasks, repeats=timing_repeats)
    out["bounds"].update(bounds)
    out["seconds"].update(seconds)
    return out


def summarise(res: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per method: verified count, mean margin bound (all images × specs), soundness vs PGD."""
    correct, pgd = res["correct"], res["pgd"]
    B = len(correct)
    rows = [{"method": "clean", "verified": int(correct.sum()), "n": B, "mean_bound": float("nan"),
             "max_bound_minus_pgd": float("nan"), "seconds_per_image": 0.0},
            {"method": "pgd (upper bound)", "verified": int((correct & (pgd.min(1).values > 0)).sum()), "n": B,
             "mean_bound": float(pgd.mean()), "max_bound_minus_pgd": 0.0,
             "seconds_per_image": res["seconds"]["pgd"] / B}]
    for m, lb in res["bounds"].items():
        rows.append({"method": m, "verified": int((correct & (lb.min(1).values > 0)).sum()), "n": B,
                     "mean_bound": float(lb.mean()), "max_bound_minus_pgd": float((lb - pgd).max()),
                     "seconds_per_image": res["seconds"].get(m, 0.0) / B})
    return rows


def zero_crossing(radii: list[float], means: list[float]) -> float:
    """Radius where the mean bound crosses zero (linear interpolation; the last radius if it never does)."""
    if means[0] <= 0:
        return 0.0
    for (r0, m0), (r1, m1) in zip(zip(radii, means), zip(radii[1:], means[1:])):
        if m1 <= 0 < m0:
            return r0 + (r1 - r0) * m0 / (m0 - m1)
    return radii[-1]


def radius_sweep(net: BoundedNet, X: torch.Tensor, y: torch.Tensor, radii: list[float], iters: int, seed: int,
                 pgd_steps: int, pgd_restarts: int, sdp_method: str = "sdp-crown") -> dict[str, list[float]]:
    """Mean margin bound over the instances vs ρ for PGD, LipNaive, α-CROWN and SDP-CROWN (Figure 3).

    ``sdp_method="crown"`` (the stub) fills the SDP-CROWN curve with plain CROWN.
    """
    C = spec_matrix(y, net.n_classes)
    curves: dict[str, list[float]] = {"pgd": [], "lipnaive": [], "alpha-crown": [], "sdp-crown": []}
    for r in radii:
        curves["pgd"].append(float(pgd_l2(net, X, r, C, steps=pgd_steps, restarts=pgd_restarts, seed=seed).mean()))
        curves["lipnaive"].append(float(lipnaive_bounds(net, X, r, C).mean()))
        for m, meth in (("alpha-crown", "alpha-crown"), ("sdp-crown", sdp_method)):
            its = 0 if meth == "crown" else iters
            curves[m].append(float(compute_bounds(net, X, r, C, method=meth, iters=its)[0].mean()))
    return curves


def tightness(net: BoundedNet, X: torch.Tensor, y: torch.Tensor, eps: float, iters: int, seed: int,
              n_sdp: int, substitute: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Per-instance bounds of every method beside the exact minimum (SCIP/enumeration), full SDP and PGD.

    ``substitute`` maps a method name to the method actually run under it (the stub: SDP-CROWN -> CROWN).
    """
    from ..oracles import exact_min, sdp_full

    C = spec_matrix(y, net.n_classes)
    sub = substitute or {}
    lbs = {}
    for m in ("crown", "alpha-crown", "sdp-crown", "sdp-crown-hybrid"):
        meth = sub.get(m, m)
        lbs[m] = compute_bounds(net, X, eps, C, method=meth, iters=0 if meth == "crown" else iters)[0]
    lbs["lipnaive"] = lipnaive_bounds(net, X, eps, C)
    pgd = pgd_l2(net, X, eps, C, steps=200, restarts=5, seed=seed)
    rows = []
    for b in range(X.shape[0]):
        for j in range(C.shape[1]):
            row = {"image": b, "spec": j, "pgd": float(pgd[b, j])}
            row["exact"] = exact_min(net, X[b], eps, C[b, j].numpy())
            row["sdp_full"] = sdp_full(net, X[b], eps, C[b, j].numpy()) if len(rows) < n_sdp else math.nan
            row.update({m: float(v[b, j]) for m, v in lbs.items()})
            rows.append(row)
    return rows
