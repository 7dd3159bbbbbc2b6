"""Tree search sharded over problems: serial, a local process pool, or a Ray cluster (optional extra ``dist``).

Search is embarrassingly parallel over problems. Each shard builds its own search object from ``make_search``
(a picklable, argument-free callable returning an :class:`~icml25.rstar_math.MCTS`) and searches its problems;
trees come back in the original order. With a policy whose randomness is per problem (e.g.
:class:`NoisyRuleSolver`), the result equals the single-process search for the same seed.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from .mcts import as_problem_list
from .tree import Tree

__all__ = ["sharded_search"]


def _search_shard(make_search: Callable[[], Any], shard: list, rollouts: int | None) -> list[dict]:
    return [t.to_json() for t in make_search().search(shard, rollouts=rollouts)]


def sharded_search(problems, make_search: Callable[[], Any], n_shards: int = 2, backend: str = "process",
                   rollouts: int | None = None, ray_address: str | None = None) -> list[Tree]:
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
    if backend not in ("serial", "process", "ray"):
        raise ValueError(f"backend must be 'serial', 'process' or 'ray', got {backend!r}")
    size = -(-len(plist) // n_shards)
    shards = [plist[i:i + size] for i in range(0, len(plist), size)]
    if backend == "serial":
        parts = [_search_shard(make_search, s, rollouts) for s in shards]
    elif backend == "process":
        with ProcessPoolExecutor(max_workers=len(shards)) as pool:
            parts = list(pool.map(_search_shard, [make_search] * len(shards), shards, [rollouts] * len(shards)))
    else:
        from icml25.core.optional import require

        require("ray", extra="dist")
        import ray

        if not ray.is_initialized():
            ray.init(address=ray_address, include_dashboard=False, ignore_reinit_error=True,
                     log_to_driver=False)
        task = ray.remote(_search_shard)
        parts = ray.get([task.remote(make_search, s, rollouts) for s in shards])
    return [Tree.from_json(d) for part in parts for d in part]
