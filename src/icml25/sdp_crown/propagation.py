"""Backward linear bound propagation under an ℓ2 input ball: CROWN, α-CROWN and SDP-CROWN (Sections 2, 4, App. A-B).

One backward pass bounds ``Sᵀz⁽ᵐ⁾`` from below: coefficients ``Λ`` start at ``S W⁽ᵐ⁾``; at every ReLU layer the
coefficients ``c = Λ`` on the ReLU output become ``g = c₊⊙α + c₋⊙β`` on its input plus a constant offset (CROWN's
box offset, SDP-CROWN's ``h(g, λ)`` of Theorem 4.1, or the larger of both in the hybrid mode); at the input the
ball gives ``Λx̂ + bias − ρ‖Λ‖₂``. Intermediate bounds use ``S = [I; −I]``; the final pass uses the
specification matrix ``C``. α (per start node, row, neuron) and λ (per start node, layer, row) are optimised by
Adam on ``−Σ`` final bounds, keeping the elementwise best intermediate and final bounds seen.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from icml25.core.validation import check_int, check_option, check_positive, check_real, check_tensor

from .network import BoundedNet
from .offsets import _best_lambda as best_lambda
from .offsets import _crown_offset as crown_offset
from .offsets import _relu_relaxation as relu_relaxation
from .offsets import _sdp_offset as sdp_offset

__all__ = ["compute_bounds", "spec_matrix", "METHODS"]

#: bound methods: offset rule used at every ReLU layer and whether slopes are optimised
METHODS = ("crown", "alpha-crown", "sdp-crown", "sdp-crown-hybrid")
_OFFSET = {"crown": "crown", "alpha-crown": "crown", "sdp-crown": "sdp", "sdp-crown-hybrid": "hybrid"}


def spec_matrix(labels: Any, n_classes: int) -> torch.Tensor:
    """Specification ``C`` with rows ``e_y − e_j`` for every ``j ≠ y`` (Section 2); shape ``[B, q−1, q]`` (float64)."""
    n_classes = check_int(n_classes, "n_classes", low=2)
    labels = _check_labels(labels, "labels")
    if labels.min() < 0 or labels.max() >= n_classes:
        raise ValueError(f"labels must lie in [0, {n_classes - 1}], got range [{int(labels.min())}, {int(labels.max())}]")
    eye = torch.eye(n_classes, dtype=torch.float64)
    rows = []
    for y in labels.tolist():
        others = [j for j in range(n_classes) if j != y]
        rows.append(eye[y].unsqueeze(0) - eye[others])
    return torch.stack(rows)


def _check_labels(labels: Any, name: str) -> torch.Tensor:
    """A non-empty 1-D integer tensor (integral floats accepted), raising errors that name ``name``."""
    if isinstance(labels, (str, bytes)):
        raise TypeError(f"{name} must be integer labels, got {labels!r:.60}")
    try:
        t = torch.as_tensor(labels)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(f"{name} must be integer labels, could not convert them: {exc}") from None
    if t.dim() != 1 or t.numel() == 0:
        raise ValueError(f"{name} must be a non-empty 1-D tensor of labels, got shape {tuple(t.shape)}")
    if t.dtype.is_floating_point:
        if not torch.isfinite(t).all() or not torch.equal(t, t.round()):
            raise ValueError(f"{name} must hold integer labels, got non-integral or non-finite values")
        t = t.long()
    elif t.dtype == torch.bool or t.dtype.is_complex:
        raise TypeError(f"{name} must hold integer labels, got dtype {t.dtype}")
    return t


class _Problem:
    """Everything fixed during one bound computation: blocks, centres ``ẑ⁽ᵏ⁾``, radii ``ρ⁽ᵏ⁾``, input row norms."""

    def __init__(self, net: BoundedNet, x: torch.Tensor, eps: torch.Tensor) -> None:
        self.blocks = list(net.blocks)
        self.b = [blk.bias for blk in self.blocks]
        self.x, self.eps = x, eps
        self.zhat = [z.detach() for z in net.pre_activations(x)]
        norms = net.spectral_norms()
        self.rho, r = [], eps
        for k in range(len(self.blocks) - 1):
            r = r * norms[k]  # ρ⁽ᵏ⁾ = ρ Π_{j≤k} ‖W⁽ʲ⁾‖₂ (ReLU is 1-Lipschitz)
            self.rho.append(r)
        blk0 = self.blocks[0]
        self.gram = None
        if blk0.dense and blk0.n_in > blk0.n_out:
            w0 = blk0.dense_matrix()
            self.gram = w0 @ w0.T
        self._specs: dict = {}

    def input_norm(self, g: torch.Tensor) -> torch.Tensor:
        """Row norms ``‖g W⁽¹⁾‖₂`` of ``g`` ``[B, S, n_1]`` (Gram matrix for a wide dense first layer, else the
        transposed operator, e.g. ``conv_transpose2d``)."""
        if self.gram is not None:
            sq = ((g @ self.gram) * g).sum(-1)
        else:
            sq = self.blocks[0].transpose(g).pow(2).sum(-1)
        return sq.clamp_min(1e-300).sqrt()

    def layer_rows(self, m: int) -> torch.Tensor:
        """Dense rows ``W⁽ᵐ⁾`` ``[n_m, n_{m−1}]`` (cached; only for layers whose bounds are optimised)."""
        if m not in self._specs:
            blk = self.blocks[m]
            self._specs[m] = blk.transpose(torch.eye(blk.n_out, dtype=torch.float64, device=self.x.device))
        return self._specs[m]


def _support(c: torch.Tensor, g: torch.Tensor, zc: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Drop the neurons whose coefficient is 0 in every row and image: they add exactly 0 to ``h(g, λ)`` (with
    ``c_i = g_i = 0`` both pieces of Theorem 4.1's per-coordinate term are ``max(0, −λẑ_i²) = 0``). Rows of a
    conv layer's intermediate pass see only their receptive field, so this skips most of the work."""
    nz = (c != 0).flatten(0, 1).any(0)
    n_nz = int(nz.sum())
    if n_nz > 0.7 * c.shape[-1]:
        return c, g, zc
    idx = nz.nonzero().squeeze(1)
    return c.index_select(-1, idx), g.index_select(-1, idx), zc.index_select(-1, idx)


def _backward(P: _Problem, m: int, spec_w: torch.Tensor, spec_b: torch.Tensor, lowers: list, uppers: list,
              alphas: dict | None, lams: dict | None, offset: str, lambda_mode: str
              ) -> tuple[torch.Tensor, list, list]:
    """Lower bound ``[B, S]`` of ``spec_w a⁽ᵐ⁻¹⁾ + spec_b`` (affine layer ``m``), plus per-layer offsets and λ."""
    lam_mat, bias = spec_w, spec_b
    offs, used_lams = [], []
    for k in range(m - 1, -1, -1):
        c = lam_mat
        ls, us, ui = relu_relaxation(lowers[k], uppers[k], None if alphas is None else alphas[k])
        g = c.clamp(min=0) * ls + c.clamp(max=0) * us
        off = crown_offset(c, ui)
        lam = None
        if offset != "crown":
            cs, gs, zs = _support(c, g, P.zhat[k])
            if lambda_mode == "exact" or lams is None:
                lam = best_lambda(cs.detach(), gs.detach(), zs, P.rho[k], 1e-6, 1e6, _LAMBDA_STEPS)
            else:
                lam = lams[k]
            h = sdp_offset(cs, gs, zs, P.rho[k], lam)  # Theorem 4.1
            off = h if offset == "sdp" else torch.maximum(h, off)
        offs.append(off)
        used_lams.append(lam)
        if k == 0:
            bound = bias + off + (g * P.zhat[0].unsqueeze(1)).sum(-1) - P.eps.unsqueeze(1) * P.input_norm(g)
            return bound, offs[::-1], used_lams[::-1]
        bias = bias + off + g @ P.b[k]
        lam_mat = P.blocks[k].transpose(g)
    # m == 0: no ReLU below; spec_w already holds the coefficients on the input
    return spec_b + (spec_w * P.x.unsqueeze(1)).sum(-1) - P.eps.unsqueeze(1) * spec_w.norm(dim=-1), [], []


#: steps of the exact-λ search (safeguarded stationary-point iteration, offsets.best_lambda) inside bound passes:
#: measured against a 90-step golden search, 24 steps lose at most ~1e-8 in h (any λ > 0 stays sound)
_LAMBDA_STEPS = 24

#: elements of one ``[B, rows, neurons]`` tensor in a chunk of an un-optimised intermediate pass
_CHUNK_ELEMENTS = 1 << 20


def _neuron_order(shape: tuple[int, ...]) -> torch.Tensor:
    """Neurons of a ``[C, H, W]`` layer position-major (all channels of a pixel together), so that a chunk of
    consecutive rows covers a few pixels and its coefficients one small receptive field; flat layers in order."""
    n = 1
    for s in shape:
        n *= s
    if len(shape) == 3:
        return torch.arange(n).reshape(shape[0], -1).T.flatten()
    return torch.arange(n)


def _layer_bounds(P: _Problem, m: int, lowers: list, uppers: list, alphas: dict | None, lams: dict | None,
                  offset: str, lambda_mode: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Lower and upper bounds ``[B, n_m]`` of every neuron of ReLU layer ``m`` (one pass with ``S = [I; −I]``).

    Without optimised α/λ and gradients (the initial pass) the rows are processed in chunks of a few pixels,
    each built by transposing identity rows through block ``m`` (no dense ``W⁽ᵐ⁾``)."""
    B, blk = P.x.shape[0], P.blocks[m]
    n = blk.n_out
    if alphas is None and lams is None and not torch.is_grad_enabled():
        width = max(b.n_out for b in P.blocks[:m])
        step = max(1, min(n, _CHUNK_ELEMENTS // (2 * B * width)))
        order = _neuron_order(blk.out_shape).to(P.x.device)
        lo = torch.empty(B, n, dtype=torch.float64, device=P.x.device)
        up = torch.empty_like(lo)
        for s in range(0, n, step):
            idx = order[s:s + step]
            e = torch.zeros(len(idx), n, dtype=torch.float64, device=P.x.device)
            e[torch.arange(len(idx), device=P.x.device), idx] = 1.0
            sw = blk.transpose(e)
            spec_w = torch.cat([sw, -sw]).unsqueeze(0).expand(B, -1, -1)
            spec_b = torch.cat([blk.bias[idx], -blk.bias[idx]]).unsqueeze(0).expand(B, -1)
            lb, _, _ = _backward(P, m, spec_w, spec_b, lowers, uppers, None, None, offset, lambda_mode)
            lo[:, idx] = lb[:, :len(idx)]
            up[:, idx] = -lb[:, len(idx):]
        return lo, up
    w = P.layer_rows(m)
    spec_w = torch.cat([w, -w]).unsqueeze(0).expand(B, -1, -1)
    spec_b = torch.cat([blk.bias, -blk.bias]).unsqueeze(0).expand(B, -1)
    lb, _, _ = _backward(P, m, spec_w, spec_b, lowers, uppers, alphas, lams, offset, lambda_mode)
    return lb[:, :n], -lb[:, n:]


def _all_bounds(P: _Problem, CW: torch.Tensor, Cb: torch.Tensor, params: dict, fixed: dict, best: dict,
                offset: str, lambda_mode: str) -> tuple[torch.Tensor, list, list, list, list]:
    """One full round: intermediate bounds of every ReLU layer, then the final specification pass."""
    r0 = P.eps.unsqueeze(1) * P.blocks[0].row_norms()
    lowers, uppers = [P.zhat[0] - r0], [P.zhat[0] + r0]  # layer 1 is exact
    n_relu = len(P.blocks) - 1
    for m in range(1, n_relu):
        if m in fixed:
            lowers.append(fixed[m][0])
            uppers.append(fixed[m][1])
            continue
        lo, up = _layer_bounds(P, m, lowers, uppers, params["alpha"].get(m), params["lam"].get(m), offset,
                               lambda_mode)
        if m in best:
            lo = torch.maximum(lo, best[m][0])
            up = torch.minimum(up, best[m][1])
        lowers.append(lo)
        uppers.append(up)
    final, offs, lams = _backward(P, n_relu, CW, Cb, lowers, uppers, params["alpha"].get(n_relu),
                                  params["lam"].get(n_relu), offset, lambda_mode)
    return final, lowers, uppers, offs, lams


def _check_eps(eps: Any, B: int) -> torch.Tensor:
    e = check_tensor(eps, "eps", ndim=(0, 1), low=0.0, dtype=torch.float64).flatten()
    if e.numel() == 1:
        e = e.expand(B).clone()
    if e.numel() != B:
        raise ValueError(f"eps must be a float or a tensor of {B} radii, got {e.numel()} values")
    if not torch.isfinite(e).all() or (e < 0).any():
        raise ValueError(f"eps must be finite and >= 0, got {e.tolist()[:5]}")
    return e


def _check_spec(C: Any, B: int, q: int) -> torch.Tensor:
    if C is None:
        return torch.eye(q, dtype=torch.float64).unsqueeze(0).expand(B, -1, -1)
    if isinstance(C, (str, bytes)):
        raise TypeError(f"C must be labels or a specification tensor, got {C!r:.60}")
    Ct = torch.as_tensor(C) if not isinstance(C, torch.Tensor) else C
    if Ct.dim() == 1:  # labels
        labels = _check_labels(Ct, "C (labels)")
        if labels.numel() != B:
            raise ValueError(f"C (labels) must have one entry per input ({B}), got {labels.numel()}")
        return spec_matrix(labels, q)
    C = check_tensor(Ct, "C", ndim=(2, 3), dtype=torch.float64)
    if C.dim() == 2:
        C = C.unsqueeze(0).expand(B, -1, -1)
    if C.dim() != 3 or C.shape[0] != B or C.shape[2] != q:
        raise ValueError(f"C must be labels [B], a matrix [m, {q}] or a tensor [{B}, m, {q}], got {tuple(C.shape)}")
    return C


def compute_bounds(net: BoundedNet, x: Any, eps: Any, C: Any = None, method: str = "sdp-crown", iters: int = 300,
                   lr_alpha: float = 0.5, lr_lambda: float = 0.05, decay: float = 0.98, lambda_mode: str = "adam",
                   optimize_from_layer: int = 1, intermediate_bounds: list | None = None) -> tuple[torch.Tensor, dict]:
    """Certified lower bounds of ``C f(x')`` over the ℓ2 ball ``‖x' − x‖₂ ≤ eps`` (SDP-CROWN, Algorithm of §4/App. A).

    Parameters
    ----------
    net : BoundedNet
        The network.
    x : array-like [B, *input_shape] or [B, n_0]
        Ball centres.
    eps : float or array-like [B]
        ℓ2 radii (≥ 0), in the raw input space.
    C : None, integer labels [B], matrix [m, q] or tensor [B, m, q]
        Specification; labels give rows ``e_y − e_j`` (margins), None bounds every logit.
    method : {'crown', 'alpha-crown', 'sdp-crown', 'sdp-crown-hybrid'}
        Offset rule: CROWN's box offset; the paper's SDP offset ``h(g, λ)`` (replace mode, Eq. of Thm 4.1); or
        ``max`` of both per layer and row (hybrid, an extension). 'crown' never optimises.
    iters : int
        Adam iterations (0 = CROWN slopes; λ then from ``lambda_mode``).
    lr_alpha, lr_lambda, decay : float
        Adam learning rates for α and λ, multiplied by ``decay`` every iteration (paper: 0.5, 0.05, 0.98).
    lambda_mode : {'adam', 'exact'}
        'adam' optimises λ jointly with α (paper); 'exact' maximises each λ by golden-section search in every pass.
    optimize_from_layer : int
        Intermediate bounds of ReLU layers with index < this (0-based) are computed once, before optimisation,
        with CROWN slopes and exact λ, then kept fixed (used for wide conv layers).
    intermediate_bounds : list of (Tensor [B, n_k], Tensor [B, n_k]), optional
        Fixed pre-activation bounds for ReLU layers 1..N−2 (0-based index ≥ 1) instead of computing them.

    Returns
    -------
    lower : Tensor [B, m]
        Certified lower bounds (float64).
    info : dict
        ``lowers``/``uppers`` (intermediate bounds), ``offsets`` (per ReLU layer, final pass, [B, m]), ``lambdas``,
        ``seconds``.
    """
    if not isinstance(net, BoundedNet):
        raise TypeError(f"net must be a BoundedNet, got {type(net).__name__}")
    check_option(method, "method", METHODS)
    check_option(lambda_mode, "lambda_mode", ("adam", "exact"))
    iters = check_int(iters, "iters", low=0)
    lr_alpha = check_positive(lr_alpha, "lr_alpha")
    lr_lambda = check_positive(lr_lambda, "lr_lambda")
    decay = check_real(decay, "decay", low=0.0, high=1.0, low_open=True)
    optimize_from_layer = check_int(optimize_from_layer, "optimize_from_layer", low=1)
    t0 = time.perf_counter()
    x = net.flatten_input(x)
    B = x.shape[0]
    P = _Problem(net, x, _check_eps(eps, B).to(x.device))
    Cm = _check_spec(C, B, net.n_classes).to(x.device)
    CW = P.blocks[-1].transpose(Cm)
    Cb = Cm @ P.b[-1]
    offset = _OFFSET[method]
    n_relu = len(P.blocks) - 1
    if method == "crown" or n_relu == 0:
        iters = 0  # nothing to optimise
    fixed: dict = {}
    if intermediate_bounds is not None:
        if len(intermediate_bounds) != n_relu:
            raise ValueError(f"intermediate_bounds needs {n_relu} (lower, upper) pairs, got {len(intermediate_bounds)}")
        fixed = {m: (check_tensor(lo, "intermediate_bounds", ndim=2, dtype=torch.float64).to(x.device),
                     check_tensor(up, "intermediate_bounds", ndim=2, dtype=torch.float64).to(x.device))
                 for m, (lo, up) in enumerate(intermediate_bounds) if m >= 1}
    empty: dict = {"alpha": {}, "lam": {}}
    with torch.no_grad():
        init_mode = "exact" if offset != "crown" else lambda_mode
        final, lowers, uppers, offs, lams = _all_bounds(P, CW, Cb, empty, fixed, {}, offset, init_mode)
    for m in range(1, min(optimize_from_layer, n_relu)):
        fixed.setdefault(m, (lowers[m], uppers[m]))
    best_final = final.detach().clone()
    best = {m: (lowers[m].detach(), uppers[m].detach()) for m in range(1, n_relu) if m not in fixed}
    if iters > 0:
        params = _init_params(P, Cm, lowers, uppers, fixed, with_lambda=offset != "crown" and lambda_mode == "adam")
        groups = [{"params": [t for d in params["alpha"].values() for t in d.values()], "lr": lr_alpha}]
        lam_list = [t for d in params["lam"].values() for t in d.values()]
        if lam_list:
            groups.append({"params": lam_list, "lr": lr_lambda})
        opt = torch.optim.Adam(groups)
        sched = torch.optim.lr_scheduler.ExponentialLR(opt, decay)
        for it in range(iters + 1):
            final, lowers, uppers, offs, lams = _all_bounds(P, CW, Cb, params, fixed, best, offset, lambda_mode)
            with torch.no_grad():
                for m in best:
                    best[m] = (torch.maximum(best[m][0], lowers[m].detach()),
                               torch.minimum(best[m][1], uppers[m].detach()))
                best_final = torch.maximum(best_final, final.detach())
            if it == iters:
                break
            opt.zero_grad()
            (-final.sum()).backward()
            opt.step()
            sched.step()
            with torch.no_grad():
                for d in params["alpha"].values():
                    for t in d.values():
                        t.clamp_(0.0, 1.0)
                for d in params["lam"].values():
                    for t in d.values():
                        t.clamp_(min=1e-6)
    info = {"lowers": [lo.detach() for lo in lowers], "uppers": [u.detach() for u in uppers],
            "offsets": [o.detach() for o in offs], "lambdas": [None if la is None else la.detach() for la in lams],
            "seconds": time.perf_counter() - t0}
    return best_final, info


def _rows(P: _Problem, Cm: torch.Tensor, m: int) -> int:
    return Cm.shape[1] if m == len(P.blocks) - 1 else 2 * P.blocks[m].n_out


def _init_params(P: _Problem, Cm: torch.Tensor, lowers: list, uppers: list, fixed: dict, with_lambda: bool) -> dict:
    """α initialised to CROWN's choice (1 if u > −l else 0) from the initial bounds; λ to 1 (App. A)."""
    B, n_relu = P.x.shape[0], len(P.blocks) - 1
    alpha: dict = {}
    lam: dict = {}
    for m in range(1, n_relu + 1):
        if m in fixed:
            continue
        s = _rows(P, Cm, m)
        alpha[m] = {k: (uppers[k] > -lowers[k]).to(torch.float64).unsqueeze(1).expand(B, s, -1).clone()
                    .requires_grad_(True) for k in range(m)}
        if with_lambda:
            lam[m] = {k: torch.ones(B, s, dtype=torch.float64, device=P.x.device, requires_grad=True)
                      for k in range(m)}
    return {"alpha": alpha, "lam": lam}
