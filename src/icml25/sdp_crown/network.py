"""A ReLU network as a chain of affine blocks, the form every bound in this package works on.

:class:`BoundedNet` converts an ``nn.Sequential`` of Linear / Conv2d / Flatten / ZeroPad2d / :class:`Normalize`
and ReLU modules into ``z⁽ᵏ⁾ = W⁽ᵏ⁾ a⁽ᵏ⁻¹⁾ + b⁽ᵏ⁾``, ``a⁽ᵏ⁾ = ReLU(z⁽ᵏ⁾)`` (paper Section 2): every run of linear
modules between two ReLUs is one :class:`~icml25.sdp_crown._affine.AffineBlock`, an operator with a transpose
(convolutions stay convolutions; conv padding and stride included), or an exact dense matrix with ``dense=True``.
A normalisation layer is part of the first block, so the ℓ2 radius is always measured in the user's raw input
space.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from icml25.core.validation import check_tensor

from ._affine import AffineBlock

__all__ = ["BoundedNet", "Normalize", "SUPPORTED_LAYERS"]

#: the module types :class:`BoundedNet` accepts
SUPPORTED_LAYERS = ("Linear", "Conv2d", "ReLU", "Flatten", "ZeroPad2d", "Normalize")


class Normalize(nn.Module):
    """Affine input normalisation ``(x - mean) / std`` per channel (NCHW or flat inputs).

    Parameters
    ----------
    mean, std : sequence of float
        Per-channel mean and (positive) standard deviation.
    """

    def __init__(self, mean: Sequence[float], std: Sequence[float]) -> None:
        super().__init__()
        mean_t = check_tensor(mean, "mean", ndim=(0, 1), dtype=torch.float64).flatten()
        std_t = check_tensor(std, "std", ndim=(0, 1), low=0, low_open=True, dtype=torch.float64).flatten()
        if std_t.numel() != mean_t.numel() and 1 not in (std_t.numel(), mean_t.numel()):
            raise ValueError(f"mean and std must have one entry per channel (or one in all), got {mean_t.numel()} "
                             f"and {std_t.numel()}")
        self.register_buffer("mean", mean_t)
        self.register_buffer("std", std_t)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise ``x`` of shape ``[B, C, ...]``."""
        x = check_tensor(x, "x", dtype=x.dtype if isinstance(x, torch.Tensor) and x.is_floating_point()
                         else torch.float64)
        if x.dim() not in (2, 4) or (self.mean.numel() > 1 and x.shape[1] != self.mean.numel()):
            raise ValueError(f"x must have shape [B, {self.mean.numel()}, H, W] or [B, {self.mean.numel()}], got "
                             f"{tuple(x.shape)}")
        shape = (1, -1) + (1,) * (x.dim() - 2)
        return (x - self.mean.to(x.dtype).view(shape)) / self.std.to(x.dtype).view(shape)


class BoundedNet(nn.Module):
    """A feed-forward ReLU classifier prepared for ℓ2 bound propagation (CROWN, α-CROWN, SDP-CROWN).

    The SDP-CROWN paper ("SDP-CROWN: Efficient Bound Propagation for Neural Network Verification with Tightness
    of Semidefinite Programming", ICML 2025) writes the network as ``z⁽ᵏ⁺¹⁾ = W⁽ᵏ⁺¹⁾ReLU(z⁽ᵏ⁾) + b⁽ᵏ⁺¹⁾``
    (Section 2). Each ``W⁽ᵏ⁾`` is the chain of affine modules between two ReLUs, kept as operators (a
    convolution stays a convolution, its transpose is ``conv_transpose2d``) in float64; ``dense=True`` stores
    exact dense matrices instead. An ``nn.Module``: ``net.to(device)`` moves every weight, and the bounds are
    computed on the device the net lives on.

    Parameters
    ----------
    model : nn.Sequential or sequence of (W, b)
        Modules among Linear, Conv2d, ReLU, Flatten, ZeroPad2d, :class:`Normalize`, ending with an affine map;
        or a list of ``(W, b)`` pairs (array-likes) with a ReLU between consecutive pairs.
    input_shape : tuple of int
        Shape of one input without the batch dimension, e.g. ``(1, 28, 28)`` or ``(784,)``.
    dense : bool
        Store every affine block as its exact dense matrix (small nets; the reference the operator form is tested
        against). Default False: operators.

    Attributes
    ----------
    blocks : nn.ModuleList of AffineBlock
        ``W⁽ᵏ⁾, b⁽ᵏ⁾`` as operators (``linear``, ``transpose``, ``bias``); ReLU after all but the last.
    widths : list of int
        ``[n_0, n_1, ..., n_N]``.

    Examples
    --------
    >>> import torch
    >>> net = BoundedNet(torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2)), (2,))
    >>> net.widths
    [2, 3, 2]
    """

    def __init__(self, model: Any, input_shape: Sequence[int], dense: bool = False) -> None:
        super().__init__()
        if not isinstance(input_shape, (tuple, list)) or not all(isinstance(s, int) and s > 0 for s in input_shape):
            raise ValueError(f"input_shape must be a tuple of positive ints, got {input_shape!r}")
        if not isinstance(dense, bool):
            raise TypeError(f"dense must be a bool, got {dense!r}")
        self.input_shape = tuple(int(s) for s in input_shape)
        if isinstance(model, nn.Sequential):
            groups = self._groups(model)
        elif isinstance(model, (list, tuple)):
            groups = self._pairs(model)
        else:
            raise TypeError(f"model must be an nn.Sequential or a list of (W, b) pairs, got {type(model).__name__}")
        blocks, shape = [], self.input_shape
        for mods in groups:
            blk = AffineBlock(mods, shape, dense=dense)
            blocks.append(blk)
            shape = blk.out_shape
        self.blocks = nn.ModuleList(blocks)
        self.dense = dense
        self._check()

    # ------------------------------------------------------------------ construction
    def _groups(self, model: nn.Sequential) -> list[list[nn.Module]]:
        groups, pending = [], []
        for i, mod in enumerate(model):
            name = type(mod).__name__
            if name not in SUPPORTED_LAYERS:
                raise TypeError(f"layer {i} ({name}) is not supported; supported layers: {', '.join(SUPPORTED_LAYERS)}")
            if isinstance(mod, nn.ReLU):
                groups.append(pending)
                pending = []
            else:
                pending.append(mod)
        if not pending or not any(isinstance(m, (nn.Linear, nn.Conv2d)) for m in pending):
            raise ValueError("model must end with an affine layer (Linear or Conv2d), not with a ReLU")
        groups.append(pending)
        return groups

    def _pairs(self, model: Sequence) -> list[list[nn.Module]]:
        groups = []
        for i, pair in enumerate(model):
            if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
                raise TypeError(f"model[{i}] must be a (W, b) pair, got {type(pair).__name__}")
            w = check_tensor(pair[0], f"model[{i}] W", ndim=2, dtype=torch.float64)
            b = check_tensor(pair[1], f"model[{i}] b", dtype=torch.float64).flatten()
            if b.shape != (w.shape[0],):
                raise ValueError(f"layer {i}: W must be [n_out, n_in] and b [n_out], got {tuple(w.shape)} and "
                                 f"{tuple(b.shape)}")
            lin = nn.Linear(w.shape[1], w.shape[0], dtype=torch.float64)
            with torch.no_grad():
                lin.weight.copy_(w)
                lin.bias.copy_(b)
            groups.append(([nn.Flatten()] if i == 0 and len(self.input_shape) > 1 else []) + [lin])
        if not groups:
            raise ValueError("model must contain at least one affine layer")
        return groups

    def _check(self) -> None:
        for k, blk in enumerate(self.blocks):
            if len(blk.out_shape) != 1 and k == len(self.blocks) - 1:
                raise ValueError(f"the last layer must produce flat logits, got shape {blk.out_shape}")
            if not all(torch.isfinite(t).all() for t in blk.buffers()):
                raise ValueError(f"layer {k} has NaN or infinite weights")
        self.widths = [self.blocks[0].n_in] + [blk.n_out for blk in self.blocks]

    @property
    def device(self) -> torch.device:
        """The device the weights live on (move them with ``.to(device)``)."""
        return self.blocks[0].bias.device

    @property
    def is_conv(self) -> bool:
        """True when some block holds a convolution (its intermediate passes are the expensive ones)."""
        return any(type(op).__name__ == "_ConvOp" for blk in self.blocks for op in blk.ops)

    @property
    def weights(self) -> list[torch.Tensor]:
        """Dense ``W⁽ᵏ⁾`` ``[n_k, n_{k-1}]`` of every block (materialised; for small nets, oracles and tests)."""
        return [blk.dense_matrix() for blk in self.blocks]

    @property
    def biases(self) -> list[torch.Tensor]:
        """``b⁽ᵏ⁾`` ``[n_k]`` of every block."""
        return [blk.bias for blk in self.blocks]

    # ------------------------------------------------------------------ evaluation
    @property
    def n_classes(self) -> int:
        """Number of outputs ``q``."""
        return self.widths[-1]

    def flatten_input(self, x: Any, name: str = "x") -> torch.Tensor:
        """Return ``x`` as a float64 ``[B, n_0]`` tensor, checking its shape against ``input_shape``.

        Accepts ``[B, *input_shape]``, ``[B, n_0]`` or a single unbatched input of shape ``input_shape``;
        ``name`` is the argument's name in error messages.
        """
        x = check_tensor(x, name, dtype=torch.float64).to(self.device)
        n0 = self.widths[0]
        if tuple(x.shape) == self.input_shape or tuple(x.shape) == (n0,):
            x = x.unsqueeze(0)
        if tuple(x.shape[1:]) != self.input_shape and tuple(x.shape[1:]) != (n0,):
            raise ValueError(f"{name} must have shape [B, {', '.join(map(str, self.input_shape))}] or [B, {n0}], "
                             f"got {tuple(x.shape)}")
        return x.reshape(x.shape[0], n0)

    def pre_activations(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Clean forward pass: ``[z⁽¹⁾, ..., z⁽ᴺ⁾]`` for an input ``[B, n_0]`` (through the ReLUs, with biases)."""
        zs, a = [], self.flatten_input(x)
        for k, blk in enumerate(self.blocks):
            z = blk(a)
            zs.append(z)
            if k < len(self.blocks) - 1:
                a = torch.relu(z)
        return zs

    def forward(self, x: Any) -> torch.Tensor:
        """Logits ``f(x)`` of shape ``[B, q]`` (differentiable, float64)."""
        return self.pre_activations(x)[-1]

    def spectral_norms(self) -> list[float]:
        """Upper bounds on ``‖W⁽ᵏ⁾‖₂`` (see :meth:`AffineBlock.spectral_norm`), cached."""
        return [blk.spectral_norm() for blk in self.blocks]

    def bounds(self, x: Any, eps: Any, C: Any = None, method: str = "sdp-crown", **kw: Any) -> tuple[Any, dict]:
        """Certified lower bounds of ``C f(x')`` over ``‖x' − x‖₂ ≤ eps``; see :func:`compute_bounds`."""
        from .propagation import compute_bounds

        return compute_bounds(self, x, eps, C, method=method, **kw)
