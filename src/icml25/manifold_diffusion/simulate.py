"""Drive a strategy over a network's data streams and record metrics."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int

from . import _tree

__all__ = ["simulate", "SimulationResult"]


@dataclass
class SimulationResult:
    """What :func:`simulate` returns.

    Attributes
    ----------
    points : stacked final estimates (K, ...) (a tuple on product manifolds)
    history : dict name -> (n_records,) array of metric values
    iterations : (n_records,) array of the iteration numbers i (1-based) at which metrics were recorded
    seconds_per_iter : float
        Wall time of the strategy's steps (gradients + update, metrics excluded) per iteration.
    """

    points: Any
    history: dict[str, np.ndarray] = field(default_factory=dict)
    iterations: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    seconds_per_iter: float = 0.0


def simulate(algo: Any, stream: Any, loss_grad: Callable[[Any, Any], Any], init: Any, n_iter: int | None = None,
             metrics: dict[str, Callable[[Any], float]] | None = None, record_every: int = 1,
             check_init: bool = True) -> SimulationResult:
    """Run ``algo`` for ``n_iter`` iterations; agent k receives ``stream[k, i mod T]`` at iteration i.

    Parameters
    ----------
    algo : DiffusionAdaptation, NonCooperative, Centralized or DRSGD
        The strategy (anything with ``manifold`` and ``step(points, egrads)``).
    stream : (K, T, ...) array
        Agent k's samples in time order; streams are cycled (several passes) when ``n_iter > T``.
    loss_grad : callable
        ``loss_grad(points, samples) -> egrads``: Euclidean gradients of the instantaneous losses of all
        agents at once (``points`` (K, ...), ``samples`` (K, ...)), e.g. :func:`pca_loss_grad`.
    init : point or stacked (K, ...) points
        Initial estimates (a single point is copied to every agent).
    n_iter : int, optional
        Number of iterations (default T).
    metrics : dict name -> callable(points) -> float, optional
        Evaluated on the stacked estimates every ``record_every`` iterations (and at the last one).
    record_every : int
    check_init : bool
        Check that ``init`` lies on the manifold.

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        When ``stream`` or ``init`` holds NaN/inf (one NaN sample would turn every estimate into NaN after the
        combine step), when ``loss_grad`` returns NaN/inf (named with the iteration), or on bad shapes and sizes.
    """
    if not callable(loss_grad):
        raise TypeError(f"loss_grad must be a callable loss_grad(points, samples), got {type(loss_grad).__name__}")
    if not (hasattr(algo, "manifold") and callable(getattr(algo, "step", None))):
        raise TypeError(f"algo must be a strategy with .manifold and .step(points, egrads), got {type(algo).__name__}")
    data = check_array(stream, "stream", ndim=tuple(range(2, 8)))  # finite: NaN/inf are rejected here
    k, t_len = data.shape[:2]
    n_iter = t_len if n_iter is None else check_int(n_iter, "n_iter", low=1)
    record_every = check_int(record_every, "record_every", low=1)
    for leaf in _tree.tree_leaves(init):
        check_array(leaf, "init", ndim=tuple(range(1, 8)))
    n_agents = getattr(algo, "n_agents", None)
    if n_agents is not None and n_agents != k:
        raise ValueError(f"stream has {k} agents on axis 0 but the combination matrix has {n_agents}")
    manifold = algo.manifold
    leaves = _tree.tree_leaves(init)
    single = leaves[0].ndim == len(np.shape(_tree.tree_leaves(manifold.point_shape_tree())[0]))
    points = _tree.broadcast(init, k) if single else _tree.copy(init)
    if _tree.leading_size(points) != k:
        raise ValueError(f"init stacks {_tree.leading_size(points)} points but the stream has {k} agents")
    if check_init:
        manifold.check_point(points, name="init")
    metrics = metrics or {}
    history: dict[str, list[float]] = {name: [] for name in metrics}
    iterations: list[int] = []
    elapsed = 0.0
    for i in range(n_iter):
        t0 = time.perf_counter()
        samples = data[:, i % t_len]
        try:
            egrads = loss_grad(points, samples)
        except (ValueError, TypeError) as exc:
            if i:  # the samples passed the first call: not a problem of the stream's shape
                raise
            raise type(exc)(f"stream: loss_grad rejected the first samples stream[:, 0] of shape {samples.shape} "
                            f"(stream has shape {data.shape}): {exc}") from exc
        if not all(np.all(np.isfinite(g)) for g in _tree.tree_leaves(egrads)):
            raise ValueError(f"loss_grad returned NaN or inf at iteration {i + 1} (sample {i % t_len} of the stream); "
                             "the estimates would all become NaN")
        points = algo.step(points, egrads)
        elapsed += time.perf_counter() - t0
        if metrics and ((i + 1) % record_every == 0 or i == n_iter - 1):
            iterations.append(i + 1)
            for name, fn in metrics.items():
                history[name].append(float(fn(points)))
    return SimulationResult(points=points, history={n: np.asarray(v) for n, v in history.items()},
                            iterations=np.asarray(iterations, dtype=int), seconds_per_iter=elapsed / n_iter)
