"""Offline pointmaze data: a seeded OGBench-style generator (built-in BFS oracle + Gaussian noise), ``.npz``
save/load (our files and OGBench's own), and a cache so that a configuration is generated once.

Spec §5: ``stitch`` = short episodes (201 steps) from a random cell to a cell exactly 4 BFS cells away;
``navigate`` = long episodes (1001 steps) that re-draw a random goal cell whenever the current one is reached.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.files import FileFormatError, read_npz
from icml25.core.progress import progress
from icml25.core.validation import check_array, check_int, check_option, check_positive, check_same_length

from .maze import MAZES, MazeLayout, make_env, maze_layout

__all__ = ["generate_pointmaze_dataset", "load_dataset", "save_dataset", "cached_pointmaze_dataset",
           "check_dataset", "oracle_direction", "DATASET_KINDS"]

DATASET_KINDS = ("stitch", "navigate")
_EPISODE_STEPS = {"stitch": 201, "navigate": 1001}
_STITCH_CELLS = 4


def oracle_direction(layout: MazeLayout, xy: np.ndarray, goal_ij: tuple[int, int]) -> np.ndarray:
    """Unit vector from ``xy`` (shape (2,)) towards the oracle waypoint for goal cell ``goal_ij``.

    The waypoint is the centre of the 4-neighbour cell with the smallest BFS distance to the goal (OGBench's
    ``get_oracle_subgoal``), or the goal centre once the agent is in the goal cell.

    Examples
    --------
    >>> lay = MazeLayout(np.array([[1, 1, 1, 1], [1, 0, 0, 1], [1, 1, 1, 1]]))
    >>> oracle_direction(lay, np.array([0.0, 0.0]), (1, 2)).round(3).tolist()
    [1.0, 0.0]
    """
    xy = check_array(xy, "xy", shape=(2,))
    dist = layout.bfs(goal_ij)
    cur = layout._snap(layout.xy_to_ij(xy))
    i, j = int(cur[0]), int(cur[1])
    best = (i, j)
    if (i, j) != tuple(goal_ij):
        H, W = dist.shape
        for di, dj in ((-1, 0), (0, -1), (1, 0), (0, 1)):
            ni, nj = i + di, j + dj
            if 0 <= ni < H and 0 <= nj < W and dist[ni, nj] >= 0 and (
                    dist[best] < 0 or dist[ni, nj] < dist[best]):
                best = (ni, nj)
    d = layout.ij_to_xy(np.array(best)) - xy
    return d / max(float(np.linalg.norm(d)), 1e-6)


def generate_pointmaze_dataset(maze: str = "medium", kind: str = "stitch", episodes: int = 100, *,
                               noise: float = 0.5, seed: int = 0, episode_steps: int | None = None,
                               show_progress: bool = True) -> dict[str, np.ndarray]:
    """Generate an OGBench-style pointmaze dataset with the built-in BFS oracle (spec §5).

    Each step records the observation ``(x, y)`` and the action ``clip(unit direction to the oracle waypoint +
    N(0, noise^2), -1, 1)``; ``terminals`` is 1 at the last step of every episode.

    Parameters
    ----------
    maze : {"medium", "large", "giant"}
    kind : {"stitch", "navigate"}
        stitch: start cell uniform, goal cell uniform among cells exactly 4 BFS cells away (the start cell when
        none exists); navigate: goal cell uniform, re-drawn whenever ``info['success']``.
    episodes : int
        Number of episodes (official: 5000 stitch / 1000 navigate).
    noise : float
        Standard deviation of the Gaussian action noise (official 0.5).
    seed : int
        Seed of every random choice (cells, noise, the environment's reset noise).
    episode_steps : int, optional
        Steps per episode (default 201 stitch, 1001 navigate).

    Returns
    -------
    dict with ``observations`` (N, 2) float32, ``actions`` (N, 2) float32, ``terminals`` (N,) float32,
    ``start_cells`` and ``goal_cells`` (episodes, 2) int (the first goal for navigate).
    """
    check_option(maze, "maze", MAZES)
    check_option(kind, "kind", DATASET_KINDS)
    episodes = check_int(episodes, "episodes", low=1)
    noise = check_positive(noise, "noise", allow_zero=True)
    seed = check_int(seed, "seed", low=0)
    T = _EPISODE_STEPS[kind] if episode_steps is None else check_int(episode_steps, "episode_steps", low=2)
    layout = maze_layout(maze)
    env = make_env(maze, terminate_at_goal=False, max_episode_steps=T)
    rng = np.random.default_rng(seed)
    cells = layout.free_cells
    obs = np.zeros((episodes * T, 2), np.float32)
    act = np.zeros((episodes * T, 2), np.float32)
    term = np.zeros(episodes * T, np.float32)
    starts, goals = np.zeros((episodes, 2), int), np.zeros((episodes, 2), int)
    state = np.random.get_state()  # ogbench draws its reset noise from the global numpy generator
    np.random.seed(seed)
    env.action_space.seed(seed)
    try:
        first = True
        for ep in progress(range(episodes), f"generating pointmaze-{maze}-{kind}", total=episodes) \
                if show_progress else range(episodes):
            init = tuple(int(v) for v in cells[rng.integers(len(cells))])
            if kind == "stitch":
                d = layout.bfs(init)
                cand = np.argwhere(d == _STITCH_CELLS)
                goal = tuple(int(v) for v in cand[rng.integers(len(cand))]) if len(cand) else init
            else:
                goal = tuple(int(v) for v in cells[rng.integers(len(cells))])
            starts[ep], goals[ep] = init, goal
            ob, _ = env.reset(seed=seed if first else None, options=dict(task_info=dict(init_ij=init, goal_ij=goal)))
            first = False
            for t in range(T):
                k = ep * T + t
                a = oracle_direction(layout, ob[:2], goal) + rng.normal(0.0, noise, size=2)
                a = np.clip(a, -1.0, 1.0)
                obs[k], act[k] = ob[:2], a
                ob, _, _, _, info = env.step(a)
                if kind == "navigate" and info["success"]:
                    goal = tuple(int(v) for v in cells[rng.integers(len(cells))])
                    env.unwrapped.set_goal(goal_ij=goal)
            term[ep * T + T - 1] = 1.0
    finally:
        np.random.set_state(state)
        env.close()
    return {"observations": obs, "actions": act, "terminals": term, "start_cells": starts, "goal_cells": goals}


def check_dataset(observations: Any, actions: Any, terminals: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate an offline dataset: 2-D float observations/actions and 0/1 terminals of one common length.

    The last transition is always an episode end, so ``terminals[-1]`` is set to 1 when it is not.
    """
    obs = check_array(observations, "observations", ndim=2).astype(np.float32)
    act = check_array(actions, "actions", ndim=2).astype(np.float32)
    term = check_array(terminals, "terminals", ndim=1).astype(np.float32)
    check_same_length(observations=obs, actions=act, terminals=term)
    if not np.all((term == 0) | (term == 1)):
        raise ValueError("terminals must hold only 0 and 1")
    if len(obs) < 2:
        raise ValueError(f"observations must hold at least 2 steps, got {len(obs)}")
    term = term.copy()
    term[-1] = 1.0
    return obs, act, term


def save_dataset(path: str | Path, data: dict[str, np.ndarray]) -> Path:
    """Write a dataset dict to a compressed ``.npz`` (OGBench's key names)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **data)
    return path


def load_dataset(path: str | Path) -> dict[str, np.ndarray]:
    """Load an ``.npz`` dataset: ours or OGBench's own file (keys ``observations``, ``actions``, ``terminals``).

    Pointmaze observations are the 2-D position; other keys are kept as they are.
    """
    path = Path(path)
    what = "an .npz dataset with arrays observations, actions and terminals (OGBench layout)"
    if not path.exists():
        raise FileNotFoundError(f"path must name an existing .npz dataset file, got {str(path)!r}")
    data = read_npz(path, what)  # a directory, a damaged archive or a pickle: FileFormatError naming the file
    for key in ("observations", "actions", "terminals"):
        if key not in data:
            raise FileFormatError(f"the dataset at {str(path)!r} has no {key!r} array (keys: {sorted(data)}); "
                                  f"expected {what}")
    try:
        data["observations"], data["actions"], data["terminals"] = check_dataset(
            data["observations"], data["actions"], data["terminals"])
    except (ValueError, TypeError) as exc:
        raise FileFormatError(f"{path}: {exc}; expected {what}") from None
    return data


def cached_pointmaze_dataset(maze: str, kind: str, episodes: int, *, noise: float = 0.5, seed: int = 0,
                             cache: str | Path | None = None, show_progress: bool = True) -> dict[str, np.ndarray]:
    """:func:`generate_pointmaze_dataset`, cached as ``.npz`` under ``cache`` (default ``~/.cache/icml25/cgcivl``)."""
    from icml25.core.data import cache_dir

    key = json.dumps({"maze": maze, "kind": kind, "episodes": episodes, "noise": noise, "seed": seed, "v": 1},
                     sort_keys=True)
    name = f"pointmaze-{maze}-{kind}-{hashlib.sha256(key.encode()).hexdigest()[:12]}.npz"
    path = Path(cache) / name if cache is not None else cache_dir("cgcivl") / name
    if path.is_file():
        try:
            return load_dataset(path)
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
    data = generate_pointmaze_dataset(maze, kind, episodes, noise=noise, seed=seed, show_progress=show_progress)
    tmp = path.with_suffix(".tmp.npz")
    save_dataset(tmp, data)
    tmp.replace(path)
    return data


#: where OGBench's data sets live (ogbench.utils.DEFAULT_DATASET_URL)
OGBENCH_URL = "https://rail.eecs.berkeley.edu/datasets/ogbench"


def stitch_dataset(maze: str, episodes: int, seed: int, source: str = "generated") -> dict[str, np.ndarray]:
    """The stitch data set of ``maze``: generated (cached, ``episodes`` episodes from ``seed``) when ``source`` is
    ``"generated"``, else OGBench's official ``pointmaze-<maze>-stitch-v0.npz`` (``core.data.resolve_data``)."""
    if source == "generated":
        return cached_pointmaze_dataset(maze, "stitch", episodes, seed=seed)
    from icml25.core.data import resolve_data

    name = f"pointmaze-{maze}-stitch-v0.npz"
    return load_dataset(resolve_data("cgcivl", name, url=f"{OGBENCH_URL}/{name}"))
