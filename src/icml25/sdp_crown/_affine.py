"""Affine blocks between ReLUs as operators: the linear map, its transpose, row norms and spectral norm.

A block is the composition of the linear modules between two ReLUs (Normalize, ZeroPad2d, Conv2d, Flatten,
Linear). It is kept as a chain of operators, so a convolution stays a convolution: ``apply`` runs ``conv2d`` and
``transpose`` runs ``conv_transpose2d`` (with the output padding that restores the input size), and nothing of size
(feature map)² is formed. ``dense=True`` stores the exact dense matrix instead (pushing the identity basis through
the chain), the form the tests compare with.
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["AffineBlock"]

#: blocks up to this many matrix entries get an exact dense SVD for their spectral norm; larger ones use Lanczos
DENSE_SVD_LIMIT = 4_000_000


class _Op(nn.Module):
    """One linear operator on ``[N, *in_shape]`` tensors (no bias)."""

    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]


class _LinearOp(_Op):
    def __init__(self, mod: nn.Linear, in_shape: tuple[int, ...]) -> None:
        super().__init__()
        if len(in_shape) != 1:
            raise ValueError(f"a Linear layer needs a flat input, got shape {in_shape} (add nn.Flatten())")
        self.register_buffer("w", mod.weight.detach().to("cpu", torch.float64).clone())
        self.in_shape, self.out_shape = in_shape, (mod.out_features,)

    def apply_(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w.T

    def transpose(self, v: torch.Tensor) -> torch.Tensor:
        return v @ self.w


class _ConvOp(_Op):
    def __init__(self, mod: nn.Conv2d, in_shape: tuple[int, ...]) -> None:
        super().__init__()
        if len(in_shape) != 3:
            raise ValueError(f"a Conv2d layer needs a [C, H, W] input, got shape {in_shape}")
        if isinstance(mod.padding, str) or mod.padding_mode != "zeros":
            raise TypeError(f"Conv2d with padding={mod.padding!r}, padding_mode={mod.padding_mode!r} is not "
                            "supported; use integer zero padding")
        self.register_buffer("w", mod.weight.detach().to("cpu", torch.float64).clone())
        self.stride, self.padding, self.dilation, self.groups = mod.stride, mod.padding, mod.dilation, mod.groups
        self.in_shape = in_shape
        with torch.no_grad():
            out = F.conv2d(torch.zeros((1,) + in_shape, dtype=torch.float64), self.w, None, self.stride,
                           self.padding, self.dilation, self.groups)
        self.out_shape = tuple(out.shape[1:])
        k = self.w.shape[-2:]
        # output padding making conv_transpose2d return exactly the input size
        self.out_pad = tuple(in_shape[1 + i] - ((self.out_shape[1 + i] - 1) * self.stride[i] - 2 * self.padding[i]
                                                + self.dilation[i] * (k[i] - 1) + 1) for i in range(2))

    def apply_(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv2d(x, self.w, None, self.stride, self.padding, self.dilation, self.groups)

    def transpose(self, v: torch.Tensor) -> torch.Tensor:
        return F.conv_transpose2d(v, self.w, None, self.stride, self.padding, self.out_pad, self.groups,
                                  self.dilation)


class _FlattenOp(_Op):
    def __init__(self, in_shape: tuple[int, ...]) -> None:
        super().__init__()
        self.in_shape, self.out_shape = in_shape, (math.prod(in_shape),)

    def apply_(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], -1)

    def transpose(self, v: torch.Tensor) -> torch.Tensor:
        return v.reshape((v.shape[0],) + self.in_shape)


class _PadOp(_Op):
    def __init__(self, mod: nn.ZeroPad2d, in_shape: tuple[int, ...]) -> None:
        super().__init__()
        if len(in_shape) != 3:
            raise ValueError(f"ZeroPad2d needs a [C, H, W] input, got shape {in_shape}")
        self.pad = tuple(int(p) for p in mod.padding)  # left, right, top, bottom
        if any(p < 0 for p in self.pad):
            raise ValueError(f"ZeroPad2d padding must be >= 0, got {self.pad}")
        le, ri, to, bo = self.pad
        self.in_shape = in_shape
        self.out_shape = (in_shape[0], in_shape[1] + to + bo, in_shape[2] + le + ri)

    def apply_(self, x: torch.Tensor) -> torch.Tensor:
        return F.pad(x, self.pad)

    def transpose(self, v: torch.Tensor) -> torch.Tensor:
        le, ri, to, bo = self.pad
        H, W = v.shape[-2:]
        return v[..., to:H - bo, le:W - ri]


class _ScaleOp(_Op):
    """The linear part ``x / std`` of a :class:`Normalize` layer (its ``−mean/std`` goes to the block bias)."""

    def __init__(self, std: torch.Tensor, in_shape: tuple[int, ...]) -> None:
        super().__init__()
        shape = (-1,) + (1,) * (len(in_shape) - 1) if std.numel() > 1 else (1,)
        self.register_buffer("inv", (1.0 / std.detach().to("cpu", torch.float64)).reshape(shape).clone())
        self.in_shape = self.out_shape = in_shape

    def apply_(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.inv

    def transpose(self, v: torch.Tensor) -> torch.Tensor:
        return v * self.inv


class _DenseOp(_Op):
    def __init__(self, w: torch.Tensor, in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> None:
        super().__init__()
        self.register_buffer("w", w)
        self.in_shape, self.out_shape = in_shape, out_shape

    def apply_(self, x: torch.Tensor) -> torch.Tensor:
        return (x.reshape(x.shape[0], -1) @ self.w.T).reshape((x.shape[0],) + self.out_shape)

    def transpose(self, v: torch.Tensor) -> torch.Tensor:
        return (v.reshape(v.shape[0], -1) @ self.w).reshape((v.shape[0],) + self.in_shape)


def _make_op(mod: nn.Module, shape: tuple[int, ...]) -> _Op:
    name = type(mod).__name__
    if isinstance(mod, nn.Linear):
        return _LinearOp(mod, shape)
    if isinstance(mod, nn.Conv2d):
        return _ConvOp(mod, shape)
    if isinstance(mod, nn.Flatten):
        if mod.start_dim != 1 or mod.end_dim != -1:
            raise TypeError(f"only nn.Flatten() with start_dim=1, end_dim=-1 is supported, got {mod}")
        return _FlattenOp(shape)
    if isinstance(mod, nn.ZeroPad2d):
        return _PadOp(mod, shape)
    if name == "Normalize":
        return _ScaleOp(mod.std, shape)
    raise TypeError(f"layer {name} is not an affine layer this package supports")


class AffineBlock(nn.Module):
    """``z = W a + b`` for the chain of affine modules between two ReLUs, on flat ``[N, n_in]`` tensors.

    Parameters
    ----------
    mods : list of nn.Module
        The affine modules in order (Linear, Conv2d, Flatten, ZeroPad2d, Normalize).
    in_shape : tuple of int
        Input shape without the batch axis.
    dense : bool
        Store the exact dense matrix (identity basis pushed through the chain) instead of the operators.
    """

    def __init__(self, mods: list[nn.Module], in_shape: tuple[int, ...], dense: bool = False) -> None:
        super().__init__()
        ops, shape = [], in_shape
        for mod in mods:
            op = _make_op(mod, shape)
            ops.append(op)
            shape = op.out_shape
        self.in_shape, self.out_shape = in_shape, shape
        self.n_in, self.n_out = math.prod(in_shape), math.prod(shape)
        self.ops = nn.ModuleList(ops)
        seq = copy.deepcopy(nn.Sequential(*mods)).to(device="cpu", dtype=torch.float64)
        with torch.no_grad():  # exact bias: the whole affine chain (padding of a normalised input included) at 0
            bias = seq(torch.zeros((1,) + in_shape, dtype=torch.float64)).reshape(-1).clone()
        self.register_buffer("bias", bias)
        if dense:
            self.ops = nn.ModuleList([_DenseOp(self._dense(), in_shape, shape)])
        self.dense = dense
        self._spec: float | None = None

    # ------------------------------------------------------------------ operators on flat tensors
    def linear(self, x: torch.Tensor) -> torch.Tensor:
        """``W x`` for ``x`` of shape ``[..., n_in]`` -> ``[..., n_out]``."""
        lead = x.shape[:-1]
        h = x.reshape((-1,) + self.in_shape)
        for op in self.ops:
            h = op.apply_(h)
        return h.reshape(lead + (self.n_out,))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``W x + b`` for ``x`` of shape ``[..., n_in]``."""
        return self.linear(x) + self.bias

    def transpose(self, v: torch.Tensor) -> torch.Tensor:
        """``v W`` (rows of ``v`` times W, i.e. ``Wᵀ`` applied to each row) for ``v`` ``[..., n_out]`` -> ``[..., n_in]``."""
        lead = v.shape[:-1]
        h = v.reshape((-1,) + self.out_shape)
        for op in reversed(self.ops):
            h = op.transpose(h)
        return h.reshape(lead + (self.n_in,))

    # ------------------------------------------------------------------ derived quantities (cached)
    def _dense(self) -> torch.Tensor:
        with torch.no_grad():
            eye = torch.eye(self.n_in, dtype=torch.float64, device=self.bias.device)
            return self.linear(eye).T.contiguous()

    def dense_matrix(self) -> torch.Tensor:
        """The exact dense ``W`` ``[n_out, n_in]`` (float64)."""
        if self.dense:
            return self.ops[0].w
        return self._dense()

    def row_norms(self, chunk: int = 256) -> torch.Tensor:
        """``‖W_i‖₂`` for every output ``i`` ``[n_out]``, from transposes of identity rows in chunks."""
        if self.dense:
            return self.ops[0].w.norm(dim=1)
        cached = getattr(self, "_rown", None)
        if cached is not None and cached.device == self.bias.device:
            return cached
        out = []
        with torch.no_grad():
            for s in range(0, self.n_out, chunk):
                e = torch.zeros(min(chunk, self.n_out - s), self.n_out, dtype=torch.float64, device=self.bias.device)
                e[torch.arange(e.shape[0]), torch.arange(s, s + e.shape[0])] = 1.0
                out.append(self.transpose(e).norm(dim=1))
        self._rown = torch.cat(out)
        return self._rown

    def spectral_norm(self) -> float:
        """An upper bound on ``‖W‖₂``: exact float64 SVD × (1 + 1e-9) for blocks up to 4·10⁶ entries, otherwise
        Lanczos (``scipy.sparse.linalg.svds``, tol 1e-10, operators applied on the CPU) × (1 + 1e-6) (spec §2.4)."""
        if self._spec is None:
            if self.n_in * self.n_out <= DENSE_SVD_LIMIT:
                self._spec = float(torch.linalg.matrix_norm(self.dense_matrix().cpu(), ord=2)) * (1 + 1e-9)
            else:
                self._spec = _lanczos_norm(self) * (1 + 1e-6)
        return self._spec


def _lanczos_norm(block: AffineBlock) -> float:
    import numpy as np
    from scipy.sparse.linalg import LinearOperator, svds

    cpu = copy.deepcopy(block).cpu()

    def mv(v: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return cpu.linear(torch.from_numpy(np.ascontiguousarray(v, dtype=np.float64)).reshape(1, -1)).numpy().ravel()

    def rmv(v: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return cpu.transpose(torch.from_numpy(np.ascontiguousarray(v, dtype=np.float64)).reshape(1, -1)).numpy().ravel()

    op = LinearOperator((block.n_out, block.n_in), matvec=mv, rmatvec=rmv, dtype=np.float64)
    s = svds(op, k=1, tol=1e-10, return_singular_vectors=False, random_state=0)
    return float(np.max(s))
