"""BSPN: Sorbet's bit-shift PowerNorm, a LayerNorm replacement without mean, square root or division (spec §2)."""

from __future__ import annotations

import torch
from torch import nn

from icml25.core.validation import check_int, check_option, check_positive, check_probability

from .quantizers import pow2_round, ste

__all__ = ["BSPN", "group_shift"]


def group_shift(h: torch.Tensor, groups: int, projected: bool = False) -> torch.Tensor:
    r"""BSPN step 1: divide each token's channel group by :math:`2^{\lceil \log_2(\mu_1 + 10^{-5}) \rceil}`.

    :math:`\mu_1` is the mean of :math:`|h|` over the group's ``C / groups`` channels (an L1 mean: no square root).
    Backward: with ``projected=False`` the power of two is treated as a constant (the divisor gets no gradient, so
    the gradient is ``g / s``); with ``projected=True`` the rounding of the divisor is straight-through, i.e. the
    backward pass is that of :math:`h \cdot c / (\mu_1(h) + 10^{-5})` with the constant
    :math:`c = (\mu_1 + 10^{-5}) / s` — the gradient of a scale-invariant normalisation, which removes the
    component of ``g`` along the group's own direction:
    :math:`\partial L/\partial h = \frac{1}{s}\bigl(g - \mathrm{sign}(h)\,\frac{\langle g, h\rangle}{n(\mu_1 + 10^{-5})}\bigr)`
    per group of ``n`` channels. The forward value is the same bit for bit.

    Examples
    --------
    >>> group_shift(torch.tensor([[3.0, -0.5, 0.5, 0.5]]), groups=2).tolist()  # mu1 = 1.75 -> /2; 0.5 -> /1
    [[1.5, -0.25, 0.5, 0.5]]
    """
    check_int(groups, "groups", low=1)
    if not isinstance(h, torch.Tensor) or h.dim() < 1 or h.shape[-1] % groups:
        raise ValueError(f"h must be a tensor whose last axis is divisible by groups={groups}, got "
                         f"{tuple(getattr(h, 'shape', ())) or type(h).__name__}")
    shape = h.shape
    hg = h.reshape(*shape[:-1], groups, shape[-1] // groups)
    check_option(projected, "projected", (True, False))
    mu1 = hg.detach().abs().mean(-1, keepdim=True)
    s = torch.exp2(torch.ceil(torch.log2(mu1 + 1e-5)))
    y = hg / s
    if projected and torch.is_grad_enabled() and hg.requires_grad:
        d = hg.abs().mean(-1, keepdim=True) + 1e-5          # value: the rounded shift; gradient: h c / d(h)
        y = ste(hg * ((mu1 + 1e-5) / s) / d, y)
    return y.reshape(shape)


class _PowerFunction(torch.autograd.Function):
    """PowerNorm's normalisation ``y = w * h / sqrt(var + eps)`` with its approximate backward pass (alpha_bkw)."""

    @staticmethod
    def forward(ctx, h, w, var, ema_gz, abkw, eps, mask):  # type: ignore[override]
        z = h / torch.sqrt(var + eps)
        ctx.save_for_backward(z, var, w, ema_gz, mask)
        ctx.abkw, ctx.eps = abkw, eps
        return w * z

    @staticmethod
    def backward(ctx, grad_out):  # type: ignore[override]
        z, var, w, ema_gz, mask = ctx.saved_tensors
        g = grad_out * w
        approx = g - (1 - ctx.abkw) * ema_gz * z                 # g~ = g - (1 - alpha_bkw) Gamma z
        m = mask.unsqueeze(-1)
        denom = m.sum().clamp_min(1.0)
        ema_gz.add_(((approx * z) * m).sum(dim=tuple(range(z.dim() - 1))) / denom)  # Gamma update (in backward)
        gh = approx / torch.sqrt(var + ctx.eps)
        gw = (grad_out * z).sum(dim=tuple(range(z.dim() - 1)))
        return gh, gw, None, None, None, None, None


class BSPN(nn.Module):
    r"""Bit-shift PowerNorm of the 'Sorbet' (ICML 2025) paper, replacing the residual LayerNorms of BERT.

    Training: (1) group shift :func:`group_shift`; (2) power normalisation without mean subtraction,
    :math:`z = h / \sqrt{\psi^2 + \epsilon}` with :math:`\psi^2_c` the mean of :math:`h_c^2` over the (non-padding)
    tokens of the batch during warm-up, the running :math:`\phi` afterwards; :math:`\phi` is updated every step
    (running average during warm-up, then always EMA :math:`\phi \leftarrow \alpha_{fwd}\phi + (1-\alpha_{fwd})\psi^2`);
    PowerNorm's approximate backward with :math:`\alpha_{bkw}`; (3) affine with a power-of-two gain
    :math:`y = \mathrm{pow2}(\gamma) z + \beta`; (4) every output element rounded to a signed power of two.
    Inference (and training after warm-up, in the forward value): the per-channel factor
    :math:`\hat k = \mathrm{pow2}(\gamma / \sqrt{\phi + \epsilon})`, :math:`y = \mathrm{pow2}(\hat k h + \beta)`.
    :meth:`fold` stores :math:`\hat k` so that inference needs only shifts. All roundings pass gradients straight
    through when ``ste=True``.

    Parameters
    ----------
    num_features : int
        Channels ``C``.
    groups : int
        Groups of the shift step (number of attention heads in Sorbet); must divide ``C``.
    warmup_iters : int
        Training iterations that use batch statistics.
    alpha_fwd, alpha_bkw : float
        EMA factors of the running statistic and of the backward correction.
    eps : float
        Added to the variance.
    ste : bool
        Straight-through gradients through the roundings; ``False`` is the released code (no gradient).
    pad_mask : bool
        Exclude padding tokens from the batch statistics (default; the released code includes them).
    projected_shift : bool
        Straight-through gradient for the rounded divisor of the group shift (default; see :func:`group_shift`):
        the backward pass of the shift is that of a division by the group's L1 mean, i.e. the spec's STE for the
        rounding of step 1. False treats the divisor as a constant (its exact derivative almost everywhere, which
        ignores the jumps of the shift and made step-2 distillation collapse). Only with ``ste=True``.

    Shapes
    ------
    ``h``: ``(B, L, C)``; ``mask``: ``(B, L)`` with 1 for real tokens; output ``(B, L, C)``.

    Examples
    --------
    >>> norm = BSPN(8, groups=2).eval()
    >>> y = norm(torch.randn(2, 3, 8))
    >>> bool(torch.equal(y.abs(), pow2_round(y).abs()))  # every output is 0 or a signed power of two
    True
    """

    def __init__(self, num_features: int, groups: int, warmup_iters: int = 1000, alpha_fwd: float = 0.9,
                 alpha_bkw: float = 0.9, eps: float = 1e-5, ste: bool = True, pad_mask: bool = True,
                 projected_shift: bool = True) -> None:
        super().__init__()
        check_int(num_features, "num_features", low=1)
        check_int(groups, "groups", low=1)
        if num_features % groups:
            raise ValueError(f"groups must divide num_features={num_features}, got {groups}")
        check_int(warmup_iters, "warmup_iters", low=0)
        check_probability(alpha_fwd, "alpha_fwd")
        check_probability(alpha_bkw, "alpha_bkw")
        check_positive(eps, "eps")
        self.num_features, self.groups, self.warmup_iters = num_features, groups, warmup_iters
        self.alpha_fwd, self.alpha_bkw, self.eps = float(alpha_fwd), float(alpha_bkw), float(eps)
        check_option(projected_shift, "projected_shift", (True, False))
        self.ste, self.pad_mask, self.projected_shift = bool(ste), bool(pad_mask), bool(projected_shift)
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_phi", torch.ones(num_features))
        self.register_buffer("ema_gz", torch.zeros(num_features))
        self.register_buffer("iters", torch.tensor(0, dtype=torch.long))
        self.register_buffer("k_hat", torch.zeros(num_features))
        self.folded = False

    def extra_repr(self) -> str:
        return f"{self.num_features}, groups={self.groups}, warmup_iters={self.warmup_iters}, folded={self.folded}"

    def _round(self, x: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        return ste(x, value) if self.ste else value.detach()

    def factor(self) -> torch.Tensor:
        """The inference factor ``k_hat = pow2(gamma / sqrt(phi + eps))`` per channel (shape ``(C,)``)."""
        if self.folded:
            return self.k_hat
        return pow2_round(self.weight.detach() / torch.sqrt(self.running_phi + self.eps))

    @torch.no_grad()
    def fold(self) -> BSPN:
        """Store ``k_hat`` for inference (shifts only) and switch to eval mode; returns ``self``."""
        self.k_hat.copy_(self.factor())
        self.folded = True
        return self.eval()

    def _inference(self, hs: torch.Tensor) -> torch.Tensor:
        return pow2_round(self.factor() * hs + self.bias.detach())             # step 4 on k_hat h + beta

    def forward(self, h: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if h.dim() < 2 or h.shape[-1] != self.num_features:
            raise ValueError(f"h must have shape (..., {self.num_features}), got {tuple(h.shape)}")
        hs = group_shift(h, self.groups, self.projected_shift and self.ste and self.training)  # step 1
        if not self.training:
            return self._inference(hs)
        if self.folded:
            raise ValueError("a folded BSPN is inference-only: call .eval(), or build a new BSPN to train")
        if mask is None or not self.pad_mask:
            mask = torch.ones(hs.shape[:-1], dtype=hs.dtype, device=hs.device)
        mask = mask.to(hs.dtype)
        m = mask.unsqueeze(-1)
        psi2 = ((hs.detach() ** 2) * m).sum(dim=tuple(range(hs.dim() - 1))) / m.sum().clamp_min(1.0)
        self.iters += 1
        it = int(self.iters)
        warm = it <= self.warmup_iters
        var = psi2 if warm else self.running_phi.clone()
        with torch.no_grad():                                                  # running statistic phi
            if warm:
                self.running_phi.mul_((it - 1) / it).add_(psi2 / it)
            self.running_phi.mul_(self.alpha_fwd).add_((1 - self.alpha_fwd) * psi2)
        w = self._round(self.weight, pow2_round(self.weight.detach()))         # step 3 gain
        y = _PowerFunction.apply(hs, w, var, self.ema_gz, self.alpha_bkw, self.eps, mask) + self.bias  # step 2
        if not warm:  # forward value = the inference function (k_hat from the phi used here)
            k = pow2_round(self.weight.detach() / torch.sqrt(var + self.eps))
            y = self._round(y, k * hs.detach() + self.bias.detach())
        return self._round(y, pow2_round(y.detach()))                          # step 4
