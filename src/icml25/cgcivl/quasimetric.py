"""Quasimetric heads on latent embeddings: MRN and IQE (spec §2.2), and the value networks built on them.

A quasimetric ``d`` satisfies ``d(x, x) = 0``, ``d >= 0`` and the triangle inequality, but need not be symmetric.
With ``V(s, g) = -d(phi(s), phi(g))`` the value of a pair is tied to the values of its pieces.
"""

from __future__ import annotations

import torch
from torch import nn

from icml25.core.validation import check_int, check_option, check_tensor

__all__ = ["MRN", "IQE", "interval_union_length", "mlp", "QuasimetricValue", "MLPValue", "make_value_net"]


def _check_pair(x: torch.Tensor, y: torch.Tensor, dim: int) -> None:
    check_tensor(x, "x", shape=(..., dim))
    check_tensor(y, "y", shape=(..., dim))
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got x {tuple(x.shape)} and y {tuple(y.shape)}")


class MRN(nn.Module):
    """Metric Residual Network distance: ``d(x, y) = ||x_sym - y_sym||_2 + max_j relu(x_asym,j - y_asym,j)``.

    The embedding is split in half: the first ``dim // 2`` coordinates form the symmetric (Euclidean) part, the
    rest the asymmetric part (spec §2.2 option). No parameters.

    Parameters
    ----------
    dim : int
        Embedding size (even, >= 2).

    Shapes
    ------
    x, y : (..., dim) -> d : (...)

    Examples
    --------
    >>> d = MRN(4)
    >>> x, y = torch.tensor([0.0, 0.0, 1.0, 0.0]), torch.tensor([3.0, 4.0, 0.0, 2.0])
    >>> float(d(x, y)), float(d(y, x)), float(d(x, x))
    (6.0, 7.0, 0.0)
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = check_int(dim, "dim", low=2)
        if self.dim % 2:
            raise ValueError(f"dim must be even (symmetric + asymmetric halves), got {dim}")

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        _check_pair(x, y, self.dim)
        h = self.dim // 2
        sq = (x[..., :h] - y[..., :h]).pow(2).sum(-1)
        pos = sq > 0
        sym = torch.where(pos, torch.sqrt(torch.where(pos, sq, torch.ones_like(sq))), torch.zeros_like(sq))
        asym = torch.relu(x[..., h:] - y[..., h:]).amax(-1)
        return sym + asym


def interval_union_length(lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
    """Total length of the union of intervals ``[lo_j, hi_j]`` along the last axis (``hi >= lo``).

    Sort by start, then each interval adds ``relu(hi_j - max(lo_j, max_{i<j} hi_i))``.
    Shapes: ``(..., k) -> (...)``; differentiable through the sorted values.
    """
    check_tensor(lo, "lo")
    check_tensor(hi, "hi")
    if lo.shape != hi.shape:
        raise ValueError(f"lo and hi must have the same shape, got lo {tuple(lo.shape)} and hi {tuple(hi.shape)}")
    if (hi < lo).any():
        raise ValueError("hi must be >= lo elementwise (intervals [lo, hi])")
    lo_s, order = torch.sort(lo, dim=-1)
    hi_s = torch.gather(hi, -1, order)
    prev = torch.cummax(hi_s, dim=-1).values
    covered = torch.cat([torch.full_like(prev[..., :1], -torch.inf), prev[..., :-1]], dim=-1)
    return torch.relu(hi_s - torch.maximum(lo_s, covered)).sum(-1)


class IQE(nn.Module):
    """Interval Quasimetric Embedding (Wang & Isola 2022), as in QRL (spec §2.2).

    The embedding is reshaped into ``components`` groups of ``k`` coordinates. For one group with ``x_c``,
    ``y_c``, the component distance is the length of the union of ``[x_j, max(x_j, y_j)]``; the distance is
    ``a * mean_c + (1 - a) * max_c`` with ``a = sigmoid(alpha)`` learned.

    Parameters
    ----------
    components : int
        Number of components (OGBench QRL: 64; CPU default here: 8).
    k : int
        Intervals per component (8).

    Shapes
    ------
    x, y : (..., components * k) -> d : (...)

    Examples
    --------
    >>> d = IQE(components=1, k=2)
    >>> x, y = torch.tensor([0.0, 1.0]), torch.tensor([2.0, 3.0])
    >>> float(d(x, y)), float(d(y, x))  # union of [0, 2] and [1, 3] has length 3; reverse intervals are empty
    (3.0, 0.0)
    """

    def __init__(self, components: int = 8, k: int = 8) -> None:
        super().__init__()
        self.components = check_int(components, "components", low=1)
        self.k = check_int(k, "k", low=1)
        self.alpha = nn.Parameter(torch.zeros(()))

    @property
    def dim(self) -> int:
        return self.components * self.k

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        _check_pair(x, y, self.dim)
        shape = (*x.shape[:-1], self.components, self.k)
        xs, ys = x.reshape(shape), y.reshape(shape)
        comp = interval_union_length(xs, torch.maximum(xs, ys))
        a = torch.sigmoid(self.alpha)
        return a * comp.mean(-1) + (1 - a) * comp.amax(-1)


def mlp(in_dim: int, hidden: tuple[int, ...], out_dim: int, *, layer_norm: bool = True) -> nn.Sequential:
    """MLP with GELU (and LayerNorm after each hidden layer, OGBench style)."""
    layers: list[nn.Module] = []
    d = check_int(in_dim, "in_dim", low=1)
    for h in hidden:
        layers += [nn.Linear(d, check_int(h, "hidden", low=1)), nn.GELU()]
        if layer_norm:
            layers.append(nn.LayerNorm(h))
        d = h
    layers.append(nn.Linear(d, check_int(out_dim, "out_dim", low=1)))
    return nn.Sequential(*layers)


class QuasimetricValue(nn.Module):
    """``V(s, g) = -d(phi(s), phi(g))`` with an MLP encoder ``phi`` and an MRN or IQE head (spec §2.2).

    Parameters
    ----------
    obs_dim : int
    hidden : tuple of int
    head : {"mrn", "iqe"}
    latent : int
        Embedding size (MRN: 2 halves; IQE: ``components * 8``).

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> v = QuasimetricValue(2, (16,), head="mrn", latent=8)
    >>> s = torch.randn(5, 2)
    >>> bool((v(s, s) == 0).all()), bool((v(s, s.flip(0)) <= 0).all())
    (True, True)
    """

    def __init__(self, obs_dim: int, hidden: tuple[int, ...] = (256, 256), head: str = "mrn",
                 latent: int = 64) -> None:
        super().__init__()
        check_int(obs_dim, "obs_dim", low=1)
        check_option(head, "head", ("mrn", "iqe"))
        latent = check_int(latent, "latent", low=2)
        if head == "iqe" and latent % 8:
            raise ValueError(f"latent must be a multiple of 8 for the IQE head, got {latent}")
        self.encoder = mlp(obs_dim, hidden, latent)
        self.head = MRN(latent) if head == "mrn" else IQE(latent // 8, 8)

    def forward(self, s: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        check_tensor(s, "s", ndim=2)
        check_tensor(g, "g", shape=tuple(s.shape))
        z = self.encoder(torch.cat([s, g], dim=0))  # one encoder pass for states and goals
        return -self.head(z[: len(s)], z[len(s):])

    def shared_goal(self, s: torch.Tensor, s2: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(V(s, g), V(s2, g))`` with one encoder pass over ``s``, ``s2`` and ``g`` (each goal encoded once).

        Equal to ``self(s, g), self(s2, g)``; the TD targets need both, and encoding ``g`` once saves a quarter of
        the target networks' encoder work.
        """
        check_tensor(s, "s", ndim=2)
        check_tensor(s2, "s2", shape=tuple(s.shape))
        check_tensor(g, "g", shape=tuple(s.shape))
        n = len(s)
        z = self.encoder(torch.cat([s, s2, g], dim=0))
        zg = z[2 * n:]
        d = self.head(z[: 2 * n], torch.cat([zg, zg], dim=0))
        return -d[:n], -d[n:]


class MLPValue(nn.Module):
    """Plain ``V(s, g) = MLP([s, g])`` (GCIVL's value network)."""

    def __init__(self, obs_dim: int, hidden: tuple[int, ...] = (256, 256)) -> None:
        super().__init__()
        check_int(obs_dim, "obs_dim", low=1)
        self.net = mlp(2 * obs_dim, hidden, 1)

    def forward(self, s: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        check_tensor(s, "s", ndim=2)
        check_tensor(g, "g", shape=tuple(s.shape))
        return self.net(torch.cat([s, g], dim=-1)).squeeze(-1)

    def shared_goal(self, s: torch.Tensor, s2: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(V(s, g), V(s2, g))`` in one pass (the interface of :meth:`QuasimetricValue.shared_goal`)."""
        check_tensor(s2, "s2", shape=tuple(s.shape))
        v = self(torch.cat([s, s2]), torch.cat([g, g]))
        return v[: len(s)], v[len(s):]


def make_value_net(obs_dim: int, hidden: tuple[int, ...], value: str, latent: int) -> nn.Module:
    """A value network: ``"mlp"`` (:class:`MLPValue`) or ``"mrn"``/``"iqe"`` (:class:`QuasimetricValue`)."""
    check_option(value, "value", ("mlp", "mrn", "iqe"))
    if value == "mlp":
        return MLPValue(obs_dim, hidden)
    return QuasimetricValue(obs_dim, hidden, value, latent)
