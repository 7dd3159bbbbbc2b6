"""Evaluation rollouts on the OGBench pointmaze tasks (spec §5): 5 fixed (start, goal) tasks per maze, success
= ``info['success']`` at the end of the episode (the environment terminates at the goal)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.progress import progress
from icml25.core.validation import check_int, check_option

from .maze import MAZES, make_env

__all__ = ["evaluate"]


def evaluate(agent: Any, maze: str = "medium", *, task_ids: tuple[int, ...] = (1, 2, 3, 4, 5), episodes: int = 10,
             max_steps: int = 1000, seed: int = 0, show_progress: bool = True, parallel: int = 1) -> dict[str, Any]:
    """Roll out ``agent.act(obs, goal)`` (deterministic) on ``pointmaze-<maze>-v0`` tasks.

    Parameters
    ----------
    agent : object with ``act(obs (n, 2), goals (n, 2)) -> (n, 2)`` (``n = 1`` unless ``parallel > 1``)
    maze : {"medium", "large", "giant"}
    task_ids : tuple of int in 1..5
    episodes : int
        Episodes per task (OGBench: 50 per task; the start and goal get small random noise).
    max_steps : int
        Episode limit (OGBench pointmaze: 1000).
    seed : int
    parallel : int
        Episodes stepped side by side (one batched ``agent.act`` call per step for all of them; the agent must
        then accept ``n > 1`` rows, as :class:`GCIVL` does). The starts are drawn one after the other on one
        environment exactly as a sequential loop would draw them, so for a deterministic row-wise policy the results
        do not depend on ``parallel`` (only the cost does: the actor's per-call overhead is shared).

    Returns
    -------
    dict with ``success`` (mean over all episodes), ``per_task`` {task_id: success rate}, ``steps`` (mean
    episode length) and ``episodes`` {task_id: [success of each episode, 0.0 or 1.0]}.

    Examples
    --------
    >>> class Towards:  # goes straight for the goal (no maze knowledge)
    ...     def act(self, obs, goals):
    ...         d = goals - obs
    ...         return d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-6)
    >>> r = evaluate(Towards(), "medium", task_ids=(3,), episodes=1, max_steps=200, show_progress=False)  # doctest: +SKIP
    >>> r["per_task"][3]  # doctest: +SKIP
    1.0
    """
    if not callable(getattr(agent, "act", None)):
        raise TypeError(f"agent must have an act(obs, goals) method, got {type(agent).__name__}")
    check_option(maze, "maze", MAZES)
    if not isinstance(task_ids, (tuple, list)) or not task_ids:
        raise TypeError(f"task_ids must be a non-empty tuple of ints in 1..5, got {task_ids!r}")
    for t in task_ids:
        check_int(t, "task_ids", low=1, high=5)
    episodes = check_int(episodes, "episodes", low=1)
    max_steps = check_int(max_steps, "max_steps", low=1)
    seed = check_int(seed, "seed", low=0)
    parallel = check_int(parallel, "parallel", low=1)
    import mujoco

    env = make_env(maze, terminate_at_goal=True, max_episode_steps=max_steps)
    jobs = [t for t in task_ids for _ in range(episodes)]
    workers: list[Any] = []
    state = np.random.get_state()  # ogbench draws its start/goal noise from the global numpy generator
    np.random.seed(seed)
    env.action_space.seed(seed)
    try:
        u = env.unwrapped
        spec = mujoco.mjtState.mjSTATE_INTEGRATION
        snap = np.empty(mujoco.mj_stateSize(u.model, spec))
        # all resets first, on one environment and in the sequential order (the same random numbers as one
        # episode after the other: stepping a point maze draws none), each start saved as mujoco's full
        # integration state; then up to `parallel` episodes are stepped side by side, one actor call for all
        starts = []
        for k, t in enumerate(jobs):
            ob, info = env.reset(seed=seed if k == 0 else None, options=dict(task_id=int(t), render_goal=False))
            mujoco.mj_getState(u.model, u.data, snap, spec)
            starts.append((snap.copy(), np.array(u.cur_goal_xy, dtype=float), np.asarray(ob, dtype=float)[:2],
                           np.asarray(info["goal"], dtype=float)[:2]))
        succ = np.zeros(len(jobs))
        lengths = np.zeros(len(jobs), dtype=int)
        it = progress(range(0, len(jobs), parallel), f"evaluating on pointmaze-{maze}",
                      total=-(-len(jobs) // parallel)) if show_progress else range(0, len(jobs), parallel)
        for lo in it:
            ids = list(range(lo, min(lo + parallel, len(jobs))))
            while len(workers) < len(ids):
                workers.append(make_env(maze, terminate_at_goal=True, max_episode_steps=max_steps))
            obs = np.stack([starts[k][2] for k in ids])
            goals = np.stack([starts[k][3] for k in ids])
            for w, k in zip(workers, ids):
                wu = w.unwrapped
                mujoco.mj_setState(wu.model, wu.data, starts[k][0], spec)
                wu.set_goal(goal_xy=starts[k][1])
            active = np.ones(len(ids), dtype=bool)
            for _step in range(max_steps):
                act = np.asarray(agent.act(obs[active], goals[active]), dtype=float)
                if act.ndim != 2 or len(act) != active.sum():
                    raise ValueError(f"agent.act returned shape {act.shape} for {int(active.sum())} observations; "
                                     "with parallel > 1 it must return one action per row (or use parallel=1)")
                for a, n in zip(act, np.nonzero(active)[0]):
                    ob, _, term, _, info = workers[n].unwrapped.step(a)
                    obs[n] = np.asarray(ob, dtype=float)[:2]
                    lengths[ids[n]] += 1
                    if info["success"]:
                        succ[ids[n]] = 1.0
                        active[n] = False  # terminate_at_goal
                if not active.any():
                    break
    finally:
        np.random.set_state(state)
        env.close()
        for w in workers:
            w.close()
    per_episode = {t: [float(s) for s, j in zip(succ, jobs) if j == t] for t in task_ids}
    per_task = {t: float(np.mean(v)) for t, v in per_episode.items()}
    return {"success": float(np.mean(list(per_task.values()))), "per_task": per_task,
            "steps": float(np.mean(lengths)), "episodes": per_episode}
