"""Binary weights, 4-bit LSQ activations and the power-of-two roundings of Sorbet, with straight-through gradients.

Every rounding step of Sorbet (``ceil`` in PTsoftmax, power-of-two rounding in BSPN and of the quantiser step
sizes, ``sign`` of the binary weights) has a zero derivative; the helpers here apply them in the forward pass and
pass the gradient straight through (identity) in the backward pass, as the spec prescribes (§2, §8).
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from icml25.core.validation import check_int, check_option, check_positive

__all__ = ["pow2_round", "nearest_pow2", "ste", "BinaryLinear", "BinaryEmbedding", "LSQQuantizer"]


def ste(x: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """``value`` (bit-exactly) in the forward pass, the gradient of ``x`` (identity) in the backward pass."""
    return value.detach() + (x - x.detach())


def pow2_round(x: torch.Tensor) -> torch.Tensor:
    """``sign(x) * 2**round(log2|x|)`` element-wise (0 stays 0): the rounding of BSPN gains and step sizes.

    >>> pow2_round(torch.tensor([3.0, -0.3, 0.0, 1.4])).tolist()
    [4.0, -0.25, 0.0, 1.0]
    """
    a = x.abs()
    p = torch.exp2(torch.round(torch.log2(a.clamp_min(torch.finfo(x.dtype).tiny))))
    return torch.where(a > 0, torch.sign(x) * p, torch.zeros_like(x))


def nearest_pow2(z: torch.Tensor) -> torch.Tensor:
    """The power of two nearest to ``z > 0`` by absolute difference (ties go up): PTsoftmax step 3 (spec §2).

    Not the same as rounding ``log2 z``: 2.9 -> 2 (|2.9-2| = 0.9 < 1.1), while ``round(log2 2.9) = 2`` -> 4.

    >>> nearest_pow2(torch.tensor([2.9, 3.0, 5.0, 1.0])).tolist()
    [2.0, 4.0, 4.0, 1.0]
    """
    lo = torch.exp2(torch.floor(torch.log2(z)))
    hi = lo * 2
    return torch.where(z - lo < hi - z, lo, hi)


class BinaryLinear(nn.Linear):
    r"""Linear layer with 1-bit weights (BWN / XNOR): :math:`W_b = \frac{\|W\|_1}{n}\,\mathrm{sign}(W - \bar W)`.

    The forward pass computes ``m * (x @ sign(W - mean W).T) + b`` (the sign matrix first, then the one scale
    ``m``), so that with power-of-two-quantised inputs every sum is exact in float32 — this is what makes the
    spiking simulation bit-identical to the ANN. Backward: straight-through (identity) to the latent real ``W``.

    Parameters
    ----------
    in_features, out_features : int
        Sizes, as :class:`torch.nn.Linear`.
    bias : bool
        Learnable full-precision bias.
    scale_grad : bool
        Also back-propagate through the scale ``m = mean|W|`` (the exact derivative of ``m * sign(W - mean W)``
        with a straight-through ``sign``: an extra ``sign(W) / n * <dL/dm>`` term); False (default) passes the
        identity to ``W``.

    Examples
    --------
    >>> layer = BinaryLinear(4, 2)
    >>> bool(torch.isin(layer.sign_weight(), torch.tensor([-1.0, 0.0, 1.0])).all())
    True
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, scale_grad: bool = False) -> None:
        check_int(in_features, "in_features", low=1)
        check_int(out_features, "out_features", low=1)
        check_option(scale_grad, "scale_grad", (True, False))
        super().__init__(in_features, out_features, bias=bias)
        self.scale_grad = bool(scale_grad)

    def scale(self) -> torch.Tensor:
        """The scale ``m = ||W||_1 / n`` (a detached scalar tensor)."""
        return self.weight.detach().abs().mean()

    def sign_weight(self) -> torch.Tensor:
        """``sign(W - mean(W))`` with the straight-through gradient ``1/m`` (so that ``m * sign`` has identity)."""
        w = self.weight
        s = torch.sign(w.detach() - w.detach().mean())
        m = self.scale().clamp_min(1e-12)
        return s + (w / m - (w / m).detach())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = self.scale()
        if self.scale_grad:
            m = ste(self.weight.abs().mean(), m)  # same value, gradient of mean|W|
        y = F.linear(x, self.sign_weight()) * m
        return y + self.bias if self.bias is not None else y


class BinaryEmbedding(nn.Embedding):
    """Word-embedding table with binary rows: row ``i`` is ``mean|E_i| * sign(E_i - mean(E_i))`` (spec §2).

    Examples
    --------
    >>> emb = BinaryEmbedding(10, 4)
    >>> emb(torch.tensor([[1, 2]])).shape
    torch.Size([1, 2, 4])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, **kwargs: Any) -> None:
        check_int(num_embeddings, "num_embeddings", low=1)
        check_int(embedding_dim, "embedding_dim", low=1)
        super().__init__(num_embeddings, embedding_dim, **kwargs)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        e = self.weight[ids]
        ed = e.detach()
        value = ed.abs().mean(-1, keepdim=True) * torch.sign(ed - ed.mean(-1, keepdim=True))
        return ste(e, value)


class _GradScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, scale: float) -> torch.Tensor:  # type: ignore[override]
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g: torch.Tensor):  # type: ignore[override]
        return g * ctx.scale, None


class LSQQuantizer(nn.Module):
    r"""Learned-step-size activation quantiser (BiT "elastic" / LSQ) with Sorbet's power-of-two step.

    Signed: :math:`q = \mathrm{clamp}(\mathrm{round}((x+b)/\alpha), -2^{k-1}, 2^{k-1}-1)`, :math:`\hat x = q\alpha`.
    Unsigned: an offset :math:`o` (the batch minimum rounded to a power of two; a running value at inference) is
    subtracted first, :math:`q = \mathrm{clamp}(\mathrm{round}((x+b-o)/\alpha), 0, 2^k-1)`,
    :math:`\hat x = q\alpha + o`. ``b`` is a learnable per-channel "move" bias. The step ``alpha`` is initialised on
    the first batch to ``2 mean|x| / sqrt(Q_p)`` (signed) or ``4 mean|x| / sqrt(Q_p)`` (unsigned) and, with
    ``pow2_step``, always used rounded to a power of two (straight-through), so dequantisation is a shift.
    Backward (LSQ): identity inside the clip range, zero outside; ``d x_hat / d alpha = round(u/alpha) - u/alpha``
    inside and ``Q_n`` / ``Q_p`` at the clips, scaled by ``1/sqrt(numel * Q_p)``.

    Parameters
    ----------
    bits : int
        Bit width (4 in Sorbet).
    signed : bool
        Signed range ``[-2^(k-1), 2^(k-1)-1]`` or unsigned ``[0, 2^k - 1]``.
    num_features : int, optional
        Size of the last axis for the learnable "move" bias; None for no bias.
    pow2_step : bool
        Round the step size to a power of two (Sorbet) or not (plain LSQ/BiT).
    init_step : float, optional
        Initial step instead of the first-batch rule (e.g. ``1 / 2**bits`` so that the codes of an unsigned
        quantiser cover ``[0, 1)``: attention probabilities are never clipped below 15/16).

    Shapes
    ------
    ``x``: any shape whose last axis is ``num_features`` (when given); output: the same shape.

    Examples
    --------
    >>> qz = LSQQuantizer(bits=4, signed=True).eval()
    >>> x = torch.linspace(-1, 1, 9)
    >>> codes, step, offset = qz.codes(x)
    >>> bool(((codes >= -8) & (codes <= 7)).all()), float(step) in (0.25, 0.5, 1.0)
    (True, True)
    """

    def __init__(self, bits: int = 4, signed: bool = True, num_features: int | None = None,
                 pow2_step: bool = True, init_step: float | None = None) -> None:
        super().__init__()
        check_int(bits, "bits", low=1, high=16)
        check_option(signed, "signed", (True, False))
        if num_features is not None:
            check_int(num_features, "num_features", low=1)
        if init_step is not None:
            check_positive(init_step, "init_step")
        self.bits, self.signed, self.pow2_step = bits, bool(signed), bool(pow2_step)
        self.init_step = None if init_step is None else float(init_step)
        self.q_n = -(2 ** (bits - 1)) if signed else 0
        self.q_p = 2 ** (bits - 1) - 1 if signed else 2 ** bits - 1
        self.alpha = nn.Parameter(torch.tensor(1.0))
        self.move = nn.Parameter(torch.zeros(num_features)) if num_features is not None else None
        self.register_buffer("initialized", torch.tensor(False))
        self.register_buffer("running_min", torch.tensor(0.0))

    def extra_repr(self) -> str:
        return f"bits={self.bits}, signed={self.signed}, pow2_step={self.pow2_step}"

    def _init_alpha(self, u: torch.Tensor) -> None:
        with torch.no_grad():
            a = (2.0 if self.signed else 4.0) * u.abs().mean() / math.sqrt(self.q_p)
            a = a.clamp_min(1e-8) if self.init_step is None else torch.tensor(self.init_step)
            self.alpha.copy_(pow2_round(a) if self.pow2_step else a)
            self.initialized.fill_(True)

    def _offset(self, x: torch.Tensor) -> torch.Tensor:
        if self.signed:
            return torch.zeros((), dtype=x.dtype, device=x.device)
        if self.training:
            with torch.no_grad():
                mn = x.detach().min().clamp_max(0.0)
                if not bool(self.initialized):
                    self.running_min.copy_(mn)
                else:
                    self.running_min.mul_(0.9).add_(0.1 * mn)
            return pow2_round(mn)
        return pow2_round(self.running_min)

    def step(self) -> torch.Tensor:
        """The step size used in the forward pass (power of two with ``pow2_step``; straight-through)."""
        return ste(self.alpha, pow2_round(self.alpha.detach())) if self.pow2_step else self.alpha

    def _prepare(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.move is not None:
            if x.shape[-1] != self.move.shape[0]:
                raise ValueError(f"x must have {self.move.shape[0]} features on its last axis, got shape "
                                 f"{tuple(x.shape)}")
            x = x + self.move
        o = self._offset(x)
        u = x - o
        if not bool(self.initialized):
            self._init_alpha(u)
        return u, o

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        u, o = self._prepare(x)
        alpha = _GradScale.apply(self.step(), 1.0 / math.sqrt(max(u.numel(), 1) * self.q_p))
        r = u / alpha
        q = torch.clamp(ste(r, torch.round(r)), self.q_n, self.q_p)
        return q * alpha + o

    @torch.no_grad()
    def codes(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Integer codes ``q`` (float tensor of integers), the step and the offset: ``x_hat = q * step + offset``.

        Uses exactly the operations of :meth:`forward`, so ``codes`` and ``forward`` agree bit for bit.
        """
        u, o = self._prepare(x)
        alpha = self.step().detach()
        return torch.clamp(torch.round(u / alpha), self.q_n, self.q_p), alpha, o
