"""Maze geometry of the OGBench point mazes: cell <-> position maps and breadth-first-search cell distances.

Pure numpy; :func:`maze_layout` reads the wall map from ``ogbench`` (imported on first use).
"""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from icml25.core.validation import check_array, check_option, check_positive

__all__ = ["MazeLayout", "maze_layout", "MAZES"]

#: maze sizes whose pointmaze environments ship with ogbench
MAZES = ("medium", "large", "giant")


@dataclass(frozen=True, eq=False)
class MazeLayout:
    """A grid maze: wall map, cell size and offset (OGBench convention ``x = j*unit - offset_x``).

    Parameters
    ----------
    maze_map : array of int, shape (H, W)
        1 = wall, 0 = free cell.
    unit : float
        Side of a cell in world units (OGBench: 4.0).
    offset : (float, float)
        ``(offset_x, offset_y)`` subtracted from ``j*unit`` and ``i*unit`` (OGBench: (4, 4)).

    Examples
    --------
    >>> lay = MazeLayout(np.array([[1, 1, 1, 1], [1, 0, 0, 1], [1, 1, 0, 1], [1, 1, 1, 1]]))
    >>> lay.xy_to_ij(np.array([[0.0, 0.0], [4.0, 4.0]])).tolist()
    [[1, 1], [2, 2]]
    >>> int(lay.cell_distance(np.array([0.0, 0.0]), np.array([4.0, 4.0])))
    2
    """

    maze_map: np.ndarray
    unit: float = 4.0
    offset: tuple[float, float] = (4.0, 4.0)
    _dist: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        m = check_array(self.maze_map, "maze_map", ndim=2, dtype=int, low=0, high=1)
        if m.shape[0] < 1 or m.shape[1] < 1 or not np.any(m == 0):
            raise ValueError(f"maze_map must have at least one free (0) cell, got shape {m.shape}")
        object.__setattr__(self, "maze_map", m)
        check_positive(self.unit, "unit")
        if len(self.offset) != 2:
            raise ValueError(f"offset must be a pair (offset_x, offset_y), got {self.offset!r}")

    @property
    def free_cells(self) -> np.ndarray:
        """Free cells as an ``(n, 2)`` int array of ``(i, j)`` in row-major order."""
        return np.argwhere(self.maze_map == 0)

    def xy_to_ij(self, xy: np.ndarray) -> np.ndarray:
        """Cell ``(i, j)`` of positions ``xy`` (shape ``(..., 2)``), as OGBench's ``xy_to_ij``."""
        xy = check_array(xy, "xy", ndim=(1, 2))
        if xy.shape[-1] != 2:
            raise ValueError(f"xy must have shape (2,) or (n, 2), got shape {xy.shape}")
        i = np.floor((xy[..., 1] + self.offset[1] + 0.5 * self.unit) / self.unit).astype(int)
        j = np.floor((xy[..., 0] + self.offset[0] + 0.5 * self.unit) / self.unit).astype(int)
        return np.stack([i, j], axis=-1)

    def ij_to_xy(self, ij: np.ndarray) -> np.ndarray:
        """Centre ``(x, y)`` of cells ``ij`` (shape ``(..., 2)``)."""
        ij = np.asarray(ij)
        return np.stack([ij[..., 1] * self.unit - self.offset[0], ij[..., 0] * self.unit - self.offset[1]],
                        axis=-1).astype(float)

    def bfs(self, source_ij: tuple[int, int]) -> np.ndarray:
        """4-neighbour BFS cell distances from ``source_ij`` to every cell (``-1``: wall or unreachable)."""
        si, sj = int(source_ij[0]), int(source_ij[1])
        key = (si, sj)
        if key in self._dist:
            return self._dist[key]
        H, W = self.maze_map.shape
        if not (0 <= si < H and 0 <= sj < W) or self.maze_map[si, sj] != 0:
            raise ValueError(f"source_ij must be a free cell of the maze, got {source_ij}")
        d = -np.ones((H, W), dtype=int)
        d[si, sj] = 0
        queue = deque([(si, sj)])
        while queue:
            i, j = queue.popleft()
            for di, dj in ((-1, 0), (0, -1), (1, 0), (0, 1)):
                ni, nj = i + di, j + dj
                if 0 <= ni < H and 0 <= nj < W and self.maze_map[ni, nj] == 0 and d[ni, nj] < 0:
                    d[ni, nj] = d[i, j] + 1
                    queue.append((ni, nj))
        self._dist[key] = d
        return d

    def cell_distance(self, xy_a: np.ndarray, xy_b: np.ndarray) -> np.ndarray:
        """BFS cell distance between the cells of ``xy_a`` and ``xy_b`` (same shape, ``(2,)`` or ``(n, 2)``).

        Positions inside walls (possible within a cell's border after a collision) are snapped to the nearest
        free cell; unreachable pairs give ``-1``.
        """
        for name, v in (("xy_a", xy_a), ("xy_b", xy_b)):
            v = check_array(v, name, ndim=(1, 2))
            if v.shape[-1] != 2 or v.shape != np.shape(xy_a):
                raise ValueError(f"{name} must have shape (2,) or (n, 2), the same for xy_a and xy_b; got {v.shape} "
                                 f"and {np.shape(xy_a)}")
        a = self._snap(self.xy_to_ij(xy_a))
        b = self._snap(self.xy_to_ij(xy_b))
        W = self.maze_map.shape[1]
        return self.distance_table()[a[..., 0] * W + a[..., 1], b[..., 0] * W + b[..., 1]]

    def distance_table(self) -> np.ndarray:
        """All-pairs BFS cell distances, shape ``(H*W, H*W)`` indexed by ``i*W + j`` (-1: wall/unreachable)."""
        if "table" not in self._dist:
            H, W = self.maze_map.shape
            t = -np.ones((H * W, H * W), dtype=int)
            for i, j in self.free_cells:
                t[i * W + j] = self.bfs((int(i), int(j))).reshape(-1)
            self._dist["table"] = t
        return self._dist["table"]

    def _snap(self, ij: np.ndarray) -> np.ndarray:
        H, W = self.maze_map.shape
        outside = (ij[..., 0] < 0) | (ij[..., 0] >= H) | (ij[..., 1] < 0) | (ij[..., 1] >= W)
        if np.any(outside):
            bad = ij[outside][0]
            raise ValueError(f"xy must lie inside the maze grid of {H}x{W} cells; a position falls in cell "
                             f"{tuple(int(v) for v in bad)}")
        walls = self.maze_map[ij[..., 0], ij[..., 1]] != 0
        if np.any(walls):
            free = self.free_cells
            bad = ij[walls]
            nearest = free[np.argmin(np.abs(bad[:, None, :] - free[None]).sum(-1), axis=1)]
            ij = ij.copy()
            ij[walls] = nearest
        return ij


@functools.lru_cache(maxsize=8)
def maze_layout(maze: str) -> MazeLayout:
    """The layout of OGBench's ``pointmaze-<maze>-v0`` (``maze`` in :data:`MAZES`), read from ``ogbench``.

    Examples
    --------
    >>> lay = maze_layout("medium")  # doctest: +SKIP
    >>> lay.maze_map.shape  # doctest: +SKIP
    (8, 8)
    """
    check_option(maze, "maze", MAZES)
    env = make_env(maze, max_episode_steps=10)
    u = env.unwrapped
    lay = MazeLayout(np.array(u.maze_map, dtype=int), float(u._maze_unit), (float(u._offset_x), float(u._offset_y)))
    env.close()
    return lay


def make_env(maze: str, *, terminate_at_goal: bool = True, max_episode_steps: int = 1000):
    """``gymnasium.make('pointmaze-<maze>-v0', ...)`` with ``ogbench`` registered (imported here)."""
    check_option(maze, "maze", MAZES)
    import gymnasium
    import ogbench  # noqa: F401  (registers the environments)

    return gymnasium.make(f"pointmaze-{maze}-v0", terminate_at_goal=terminate_at_goal,
                          max_episode_steps=max_episode_steps)
