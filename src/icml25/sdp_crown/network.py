"""A ReLU network as a chain of dense affine maps, the form every bound in this package works on.

:class:`BoundedNet` converts an ``nn.Sequential`` of Linear / Conv2d / Flatten / ZeroPad2d / :class:`Normalize`
and ReLU modules into ``z⁽ᵏ⁾ = W⁽ᵏ⁾ a⁽ᵏ⁻¹⁾ + b⁽ᵏ⁾``, ``a⁽ᵏ⁾ = ReLU(z⁽ᵏ⁾)`` (paper Section 2): every run of linear
modules between two ReLUs is one exact dense matrix (conv padding and stride included), obtained by pushing the
identity basis through the modules. A normalisation layer is folded into the first map, so the ℓ2 radius is
always measured in the user's raw input space.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from ._checks import check_tensor

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
        mean_t = check_tensor(mean, "mean", ndim=(0, 1)).flatten()
        std_t = check_tensor(std, "std", ndim=(0, 1), positive=True).flatten()
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


def _dense_affine(mods: list[nn.Module], in_shape: tuple[int, ...], dtype: torch.dtype
                  ) -> tuple[torch.Tensor, torch.Tensor, tuple[int, ...]]:
    """Exact dense ``(W, b)`` of the composition of affine modules on inputs of shape ``in_shape``."""
    n_in = 1
    for s in in_shape:
        n_in *= s
    seq = nn.Sequential(*mods).to(dtype)
    with torch.no_grad():
        zero = torch.zeros((1,) + in_shape, dtype=dtype)
        b_full = seq(zero)
        basis = torch.eye(n_in, dtype=dtype).reshape((n_in,) + in_shape)
        cols = seq(basis) - b_full
    out_shape = tuple(b_full.shape[1:])
    return cols.reshape(n_in, -1).T.contiguous(), b_full.reshape(-1), out_shape


class BoundedNet:
    """A feed-forward ReLU classifier prepared for ℓ2 bound propagation (CROWN, α-CROWN, SDP-CROWN).

    The SDP-CROWN paper ("SDP-CROWN: Efficient Bound Propagation for Neural Network Verification with Tightness
    of Semidefinite Programming", ICML 2025) writes the network as ``z⁽ᵏ⁺¹⁾ = W⁽ᵏ⁺¹⁾ReLU(z⁽ᵏ⁾) + b⁽ᵏ⁺¹⁾``
    (Section 2); this class stores exactly those dense ``W⁽ᵏ⁾, b⁽ᵏ⁾`` in float64.

    Parameters
    ----------
    model : nn.Sequential or sequence of (W, b)
        Modules among Linear, Conv2d, ReLU, Flatten, ZeroPad2d, :class:`Normalize`, ending with an affine map;
        or a list of ``(W, b)`` pairs (array-likes) with a ReLU between consecutive pairs.
    input_shape : tuple of int
        Shape of one input without the batch dimension, e.g. ``(1, 28, 28)`` or ``(784,)``.

    Attributes
    ----------
    weights, biases : list of Tensor
        ``W⁽ᵏ⁾`` of shape ``[n_k, n_{k-1}]`` and ``b⁽ᵏ⁾`` of shape ``[n_k]`` (float64); ReLU after all but the last.
    widths : list of int
        ``[n_0, n_1, ..., n_N]``.

    Examples
    --------
    >>> import torch
    >>> net = BoundedNet(torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2)), (2,))
    >>> net.widths
    [2, 3, 2]
    """

    def __init__(self, model: Any, input_shape: Sequence[int]) -> None:
        if not isinstance(input_shape, (tuple, list)) or not all(isinstance(s, int) and s > 0 for s in input_shape):
            raise ValueError(f"input_shape must be a tuple of positive ints, got {input_shape!r}")
        self.input_shape = tuple(int(s) for s in input_shape)
        dtype = torch.float64
        if isinstance(model, nn.Sequential):
            self.weights, self.biases = self._from_sequential(model, dtype)
        elif isinstance(model, (list, tuple)):
            self.weights, self.biases = [], []
            for i, pair in enumerate(model):
                if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
                    raise TypeError(f"model[{i}] must be a (W, b) pair, got {type(pair).__name__}")
                self.weights.append(torch.as_tensor(pair[0], dtype=dtype).clone())
                self.biases.append(torch.as_tensor(pair[1], dtype=dtype).clone().flatten())
        else:
            raise TypeError(f"model must be an nn.Sequential or a list of (W, b) pairs, got {type(model).__name__}")
        self._check()

    # ------------------------------------------------------------------ construction
    def _from_sequential(self, model: nn.Sequential, dtype: torch.dtype) -> tuple[list, list]:
        weights, biases, pending = [], [], []
        shape = self.input_shape
        for i, mod in enumerate(model):
            name = type(mod).__name__
            if name not in SUPPORTED_LAYERS:
                raise TypeError(f"layer {i} ({name}) is not supported; supported layers: {', '.join(SUPPORTED_LAYERS)}")
            if isinstance(mod, nn.ReLU):
                w, b, shape = _dense_affine(pending, shape, dtype)
                weights.append(w)
                biases.append(b)
                pending = []
            else:
                pending.append(mod)
        if not pending or not any(isinstance(m, (nn.Linear, nn.Conv2d)) for m in pending):
            raise ValueError("model must end with an affine layer (Linear or Conv2d), not with a ReLU")
        w, b, _ = _dense_affine(pending, shape, dtype)
        weights.append(w)
        biases.append(b)
        return weights, biases

    def _check(self) -> None:
        n_in = 1
        for s in self.input_shape:
            n_in *= s
        if len(self.weights) < 1:
            raise ValueError("model must contain at least one affine layer")
        prev = n_in
        for k, (w, b) in enumerate(zip(self.weights, self.biases)):
            if w.dim() != 2 or w.shape[1] != prev or b.shape != (w.shape[0],):
                raise ValueError(f"layer {k}: W must be [n_out, {prev}] and b [n_out], got {tuple(w.shape)} "
                                 f"and {tuple(b.shape)}")
            if not (torch.isfinite(w).all() and torch.isfinite(b).all()):
                raise ValueError(f"layer {k} has NaN or infinite weights")
            prev = w.shape[0]
        self.widths = [n_in] + [w.shape[0] for w in self.weights]

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
        x = check_tensor(x, name)
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
        for k, (w, b) in enumerate(zip(self.weights, self.biases)):
            z = a @ w.T + b
            zs.append(z)
            if k < len(self.weights) - 1:
                a = torch.relu(z)
        return zs

    def forward(self, x: Any) -> torch.Tensor:
        """Logits ``f(x)`` of shape ``[B, q]`` (differentiable, float64)."""
        return self.pre_activations(x)[-1]

    __call__ = forward

    def spectral_norms(self) -> list[float]:
        """Sound upper bounds on ``‖W⁽ᵏ⁾‖₂`` (float64 SVD times a 1 + 1e-9 safety factor; SVD error is ~1e-13), cached."""
        if not hasattr(self, "_spec"):
            self._spec = [float(torch.linalg.matrix_norm(w, ord=2)) * (1 + 1e-9) for w in self.weights]
        return self._spec

    def bounds(self, x: Any, eps: Any, C: Any = None, method: str = "sdp-crown", **kw: Any) -> tuple[Any, dict]:
        """Certified lower bounds of ``C f(x')`` over ``‖x' − x‖₂ ≤ eps``; see :func:`compute_bounds`."""
        from .propagation import compute_bounds

        return compute_bounds(self, x, eps, C, method=method, **kw)
