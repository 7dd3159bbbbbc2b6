"""Riemannian diffusion adaptation (adapt-then-combine on a manifold) and its baselines, batched over agents.

Every strategy has ``step(points, egrads) -> points``: ``points`` holds the K agents' estimates stacked on
the leading axis (a tuple of such arrays on a product manifold), ``egrads`` the Euclidean gradients of each
agent's instantaneous loss at its own estimate. :func:`~icml25.manifold_diffusion.simulate` drives a strategy
over a data stream.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from icml25.core.validation import check_int, check_positive

from . import _tree
from .combination import check_combination_matrix, combine_step_bound
from .manifold_base import Manifold

__all__ = ["DiffusionAdaptation", "NonCooperative", "Centralized", "DRSGD"]


def _positive(value: Any, name: str) -> float:
    return check_positive(value, name)


def _check_manifold(manifold: Any) -> Manifold:
    if not isinstance(manifold, Manifold):
        raise TypeError(f"manifold must be an icml25.manifold_diffusion manifold (use from_pymanopt for pymanopt "
                        f"manifolds), got {type(manifold).__name__}")
    return manifold


class _Strategy:
    """Common parts: the manifold, the adaptation step size, the run helper."""

    manifold: Manifold
    step_size: float
    n_agents: int | None = None

    def _check_points(self, points: Any, name: str = "points") -> None:
        k = _tree.leading_size(points)
        if self.n_agents is not None and k != self.n_agents:
            raise ValueError(f"{name} must stack {self.n_agents} agents on the leading axis, got {k}")

    def adapt(self, points: Any, egrads: Any) -> Any:
        """Step 1 of every strategy: ``ψ_k = R_{w_k}(−μ grad Q(w_k; x_k))`` for all agents at once."""
        rgrad = self.manifold.egrad2rgrad(points, egrads)
        return self.manifold.retr(points, _tree.scale(-self.step_size, rgrad))

    def step(self, points: Any, egrads: Any) -> Any:  # pragma: no cover - overridden
        """One iteration; returns the new stacked points."""
        return self.adapt(points, egrads)

    def run(self, stream: Any, loss_grad: Any, init: Any, n_iter: int | None = None,
            metrics: dict[str, Any] | None = None, record_every: int = 1) -> Any:
        """Run the strategy on ``stream``; see :func:`icml25.manifold_diffusion.simulate`."""
        from .simulate import simulate

        return simulate(self, stream, loss_grad, init, n_iter=n_iter, metrics=metrics, record_every=record_every)


class DiffusionAdaptation(_Strategy):
    """Riemannian diffusion adaptation from the 'Riemannian Diffusion Adaptation for Distributed Optimization
    on Manifolds' (ICML 2025) paper.

    Adapt-then-combine (spec §2.2), for every agent k at time i:

    1. adapt:   ``ψ_k = R_{w_k}(−μ grad Q(w_k; x_{k,i}))``
    2. combine: ``w_k = R_{ψ_k}(α Σ_l a_lk Log_{ψ_k}(ψ_l))`` — one Riemannian gradient step of size α on
       ``½ Σ_l a_lk d²(·, ψ_l)`` started at ψ_k (``combine="one_step"``), or the exact weighted Fréchet mean
       by ``frechet_iters`` Karcher iterations (``combine="exact_frechet"``, the ICASSP 2024 variant).

    In flat space with α = 1 the combine step is the classical ``w_k = Σ_l a_lk ψ_l``. The official code's
    ``step_size_fm`` acts on the un-halved cost, so ``combine_step = 2 × step_size_fm``.

    Parameters
    ----------
    manifold : Manifold
        Where the estimates live (e.g. ``Grassmann(d, r)``).
    A : (K, K) array
        Left-stochastic combination matrix; agent k combines with weights ``A[:, k]``.
    step_size : float
        Adaptation step size μ > 0.
    combine_step : float
        Combination step α > 0. A warning is issued when α exceeds the Euclidean stability bound
        ``2 / (1 − λ_min(A))``.
    combine : {"one_step", "exact_frechet"}
    frechet_iters : int
        Karcher iterations of the exact combine.
    graph : networkx graph or adjacency, optional
        When given, A must vanish outside the graph's edges.

    Attributes
    ----------
    A : (K, K) ndarray
    n_agents : int

    References
    ----------
    X. Wang, R. A. Borsoi, C. Richard, A. H. Sayed. Riemannian Diffusion Adaptation for Distributed
    Optimization on Manifolds. ICML 2025, PMLR 267:62401–62422.

    Examples
    --------
    >>> import numpy as np
    >>> from icml25.manifold_diffusion import Euclidean
    >>> A = np.array([[0.5, 0.5], [0.5, 0.5]])
    >>> algo = DiffusionAdaptation(Euclidean(1), A, step_size=0.1)
    >>> algo.step(np.array([[0.0], [2.0]]), np.zeros((2, 1))).ravel().tolist()
    [1.0, 1.0]
    """

    def __init__(self, manifold: Manifold, A: Any, step_size: float, combine_step: float = 1.0,
                 combine: str = "one_step", frechet_iters: int = 10, graph: Any = None) -> None:
        self.manifold = _check_manifold(manifold)
        self.A = check_combination_matrix(A, graph=graph, name="A")
        self.n_agents = self.A.shape[0]
        self.step_size = _positive(step_size, "step_size")
        self.combine_step = _positive(combine_step, "combine_step")
        if combine not in ("one_step", "exact_frechet"):
            raise ValueError(f"combine must be 'one_step' or 'exact_frechet', got {combine!r}")
        self.combine = combine
        self.frechet_iters = check_int(frechet_iters, "frechet_iters", low=1)
        bound = combine_step_bound(self.A)
        if combine == "one_step" and self.combine_step >= bound:
            warnings.warn(f"combine_step={self.combine_step:g} is at or above the stability bound "
                          f"2/(1-λ_min(A)) = {bound:.3g}; the agents may not reach agreement", stacklevel=2)

    def combine_points(self, psi: Any) -> Any:
        """Step 2 (combine) applied to the stacked intermediate estimates ``psi``."""
        self._check_points(psi, "psi")
        if self.combine == "exact_frechet":
            return self.manifold.mean(psi, weights=self.A.T, init=psi, iters=self.frechet_iters, tol=0.0)
        # Eq. combine: w_k = R_{ψ_k}(α Σ_l a_lk Log_{ψ_k}(ψ_l)); row k of A.T holds agent k's weights
        direction = self.manifold.weighted_log_sum(psi, psi, self.A.T)
        return self.manifold.retr(psi, _tree.scale(self.combine_step, direction))

    def step(self, points: Any, egrads: Any) -> Any:
        """Adapt then combine; returns the new stacked estimates ``w_{k,i}``."""
        self._check_points(points)
        return self.combine_points(self.adapt(points, egrads))


class NonCooperative(_Strategy):
    """Every agent runs Riemannian SGD on its own stream: ``w_k = R_{w_k}(−μ grad Q(w_k; x_k))``.

    Parameters
    ----------
    manifold : Manifold
    step_size : float
        μ > 0.
    """

    def __init__(self, manifold: Manifold, step_size: float) -> None:
        self.manifold = _check_manifold(manifold)
        self.step_size = _positive(step_size, "step_size")

    def step(self, points: Any, egrads: Any) -> Any:
        """Adaptation only."""
        return self.adapt(points, egrads)


class Centralized(_Strategy):
    """A fusion centre that sees the K samples of every step: ``w = R_w(−μ (1/K) Σ_k grad Q(w; x_k))``.

    To share the interface it keeps K identical copies of its estimate; ``egrads`` are the gradients of
    each agent's loss at the common point and their average drives the step.

    Parameters
    ----------
    manifold : Manifold
    step_size : float
        μ > 0.
    """

    def __init__(self, manifold: Manifold, step_size: float) -> None:
        self.manifold = _check_manifold(manifold)
        self.step_size = _positive(step_size, "step_size")

    def step(self, points: Any, egrads: Any) -> Any:
        """One centralized stochastic-gradient step, broadcast to every copy."""
        k = _tree.leading_size(points)
        w = _tree.take(points, slice(0, 1))
        rgrad = self.manifold.egrad2rgrad(_tree.take(points, slice(0, k)), egrads)
        mean_grad = _tree.tree_map(lambda g: g.mean(axis=0, keepdims=True), rgrad)
        new = self.manifold.retr(w, _tree.scale(-self.step_size, mean_grad))
        return _tree.tree_map(lambda a: np.repeat(a, k, axis=0), new)


class DRSGD(_Strategy):
    """Decentralized Riemannian SGD (Chen et al. 2021), consensus on the extrinsic (embedded) average.

    ``w_k = R_{w_k}(α_c P_{w_k}(Σ_l a_lk w_l − w_k) − β grad Q(w_k; x_k))`` (spec §2.2, baselines).

    Parameters
    ----------
    manifold : Manifold
        An embedded manifold (points are arrays of the ambient space).
    A : (K, K) array
        Left-stochastic combination matrix.
    step_size : float
        Gradient step β > 0.
    consensus_step : float
        Consensus step α_c > 0.
    graph : optional
        As in :class:`DiffusionAdaptation`.
    """

    def __init__(self, manifold: Manifold, A: Any, step_size: float, consensus_step: float,
                 graph: Any = None) -> None:
        self.manifold = _check_manifold(manifold)
        self.A = check_combination_matrix(A, graph=graph, name="A")
        self.n_agents = self.A.shape[0]
        self.step_size = _positive(step_size, "step_size")
        self.consensus_step = _positive(consensus_step, "consensus_step")

    def step(self, points: Any, egrads: Any) -> Any:
        """Gradient and consensus in one retraction."""
        self._check_points(points)
        avg = _tree.mix(self.A.T, points)
        consensus = self.manifold.proj(points, _tree.sub(avg, points))
        rgrad = self.manifold.egrad2rgrad(points, egrads)
        v = _tree.sub(_tree.scale(self.consensus_step, consensus), _tree.scale(self.step_size, rgrad))
        return self.manifold.retr(points, v)
