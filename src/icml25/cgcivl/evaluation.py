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
             max_steps: int = 1000, seed: int = 0, show_progress: bool = True) -> dict[str, Any]:
    """Roll out ``agent.act(obs, goal)`` (deterministic) on ``pointmaze-<maze>-v0`` tasks.

    Parameters
    ----------
    agent : object with ``act(obs (1, 2), goals (1, 2)) -> (1, 2)``
    maze : {"medium", "large", "giant"}
    task_ids : tuple of int in 1..5
    episodes : int
        Episodes per task (OGBench: 50 per task; the start and goal get small random noise).
    max_steps : int
        Episode limit (OGBench pointmaze: 1000).
    seed : int

    Returns
    -------
    dict with ``success`` (mean over all episodes), ``per_task`` {task_id: success rate} and ``steps`` (mean
    episode length).

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
    env = make_env(maze, terminate_at_goal=True, max_episode_steps=max_steps)
    state = np.random.get_state()  # ogbench draws its start/goal noise from the global numpy generator
    np.random.seed(seed)
    env.action_space.seed(seed)
    per_task: dict[int, float] = {}
    lengths = []
    try:
        jobs = [(t, e) for t in task_ids for e in range(episodes)]
        it = progress(jobs, f"evaluating on pointmaze-{maze}", total=len(jobs)) if show_progress else jobs
        succ: dict[int, list[float]] = {t: [] for t in task_ids}
        first = True
        for t, _ in it:
            ob, info = env.reset(seed=seed if first else None, options=dict(task_id=int(t), render_goal=False))
            first = False
            goal = np.asarray(info["goal"], dtype=float)[None, :2]
            done, steps, success = False, 0, 0.0
            while not done:
                a = np.asarray(agent.act(np.asarray(ob, dtype=float)[None, :2], goal))[0]
                ob, _, term, trunc, info = env.step(a)
                steps += 1
                success = float(info["success"])
                done = term or trunc
            succ[t].append(success)
            lengths.append(steps)
        per_task = {t: float(np.mean(v)) for t, v in succ.items()}
    finally:
        np.random.set_state(state)
        env.close()
    return {"success": float(np.mean(list(per_task.values()))), "per_task": per_task,
            "steps": float(np.mean(lengths))}
