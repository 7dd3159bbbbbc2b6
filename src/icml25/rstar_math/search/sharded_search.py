"""Tree search sharded over problems: serial, a local process pool, or a Ray cluster (optional extra ``dist``).

Search is embarrassingly parallel over problems. Each shard builds its own search object from ``make_search``
(a picklable, argument-free callable returning an :class:`~icml25.rstar_math.MCTS`) and searches its problems;
trees come back in the original order. With a policy whose randomness is per problem (e.g.
:class:`NoisyRuleSolver`), the result equals the single-process search for the same seed. A batched neural policy
(e.g. :class:`TinyStepPolicy`) draws per wave, so its sharded trees are reproducible for a fixed shard count but
differ from the single-process ones. Worker processes (backends "process" and "ray") run torch with one thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from icml25.core.threads import thread_limits

from .mcts import as_problem_list
from .tree import Tree

__all__ = ["sharded_search"]


def _search_shard(make_search: Callable[[], Any], shard: list, rollouts: int | None, extra_unsolved: int = 0,
                  worker: bool = False) -> list[dict]:
    """Search one shard; then ``extra_unsolved`` more rollouts on its still-unsolved trees with the same search
    object (as the single-process search would continue). A worker searches with one torch/BLAS thread (the
    parent's limit may not propagate)."""
    with thread_limits(1) if worker else contextlib.nullcontext():
        search = make_search()
        trees = search.search(shard, rollouts=rollouts)
        if extra_unsolved > 0:
            unsolved = [t for t in trees if not t.solved()]
            if unsolved:
                search.search(trees=unsolved, rollouts=extra_unsolved)
        return [t.to_json() for t in trees]


def sharded_search(problems, make_search: Callable[[], Any], n_shards: int = 2, backend: str = "process",
                   rollouts: int | None = None, ray_address: str | None = None,
                   extra_unsolved: int = 0) -> list[Tree]:
    """Search ``problems`` in ``n_shards`` contiguous shards.

    Parameters
    ----------
    problems : list
        Problems (any form accepted by :class:`MCTS`).
    make_search : callable
        Picklable factory returning the search object (policy, executor, config).
    n_shards : int
        Number of shards (>= 1).
    backend : {"serial", "process", "ray"}
        Where shards run; "ray" uses ``ray.init(address=ray_address)`` (a local cluster by default).
    rollouts : int, optional
        Rollouts per problem (default: the search's config).
    ray_address : str, optional
        Address of the Ray cluster (backend "ray").
    extra_unsolved : int
        After the main rollouts, this many more on every tree still unsolved, in the same shard and with the
        same search object (the "extra rollouts on unsolved problems" of a self-evolution round; 0 = none).

    Returns
    -------
    list of Tree
        One tree per problem, in input order.
    """
    plist = as_problem_list(problems, need_answer=False)
    from icml25.core.validation import check_int

    n_shards = check_int(n_shards, "n_shards", low=1)
    if rollouts is not None:
        rollouts = check_int(rollouts, "rollouts", low=1)
    extra_unsolved = check_int(extra_unsolved, "extra_unsolved", low=0)
    if backend not in ("serial", "process", "ray"):
        raise ValueError(f"backend must be 'serial', 'process' or 'ray', got {backend!r}")
    size = -(-len(plist) // n_shards)
    shards = [plist[i:i + size] for i in range(0, len(plist), size)]
    if backend == "serial":
        parts = [_search_shard(make_search, s, rollouts, extra_unsolved) for s in shards]
    elif backend == "process":
        with ProcessPoolExecutor(max_workers=len(shards)) as pool:
            n = len(shards)
            parts = list(pool.map(_search_shard, [make_search] * n, shards, [rollouts] * n, [extra_unsolved] * n,
                                  [True] * n))
    else:
        from icml25.core.optional import require

        require("ray", extra="dist")
        import ray

        if not ray.is_initialized():
            ray.init(address=ray_address, include_dashboard=False, ignore_reinit_error=True,
                     log_to_driver=False)
        task = ray.remote(_search_shard)
        parts = ray.get([task.remote(make_search, s, rollouts, extra_unsolved, True) for s in shards])
    return [Tree.from_json(d) for part in parts for d in part]
