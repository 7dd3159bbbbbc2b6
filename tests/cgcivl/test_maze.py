"""Maze geometry against networkx shortest paths and ogbench's own cell map."""

import numpy as np
import pytest

from icml25.cgcivl import MazeLayout, maze_layout
from icml25.testing import requires

MAP = np.array([[1, 1, 1, 1, 1, 1],
                [1, 0, 0, 1, 0, 1],
                [1, 1, 0, 0, 0, 1],
                [1, 0, 1, 1, 0, 1],
                [1, 1, 1, 1, 1, 1]])


def test_bfs_matches_networkx():
    nx = pytest.importorskip("networkx")
    lay = MazeLayout(MAP)
    G = nx.grid_2d_graph(*MAP.shape)
    G.remove_nodes_from([tuple(c) for c in np.argwhere(MAP == 1)])
    for src in lay.free_cells:
        d = lay.bfs(tuple(src))
        lengths = nx.single_source_shortest_path_length(G, tuple(src))
        for cell in lay.free_cells:
            assert d[tuple(cell)] == lengths.get(tuple(cell), -1)
    assert lay.bfs((3, 1))[1, 1] == -1  # the isolated cell is unreachable


def test_xy_ij_round_trip_and_cell_distance():
    lay = MazeLayout(MAP)
    cells = lay.free_cells
    xy = lay.ij_to_xy(cells) + np.random.default_rng(0).uniform(-1.9, 1.9, size=(len(cells), 2))
    assert np.array_equal(lay.xy_to_ij(xy), cells)
    a, b = lay.ij_to_xy(np.array([1, 1])), lay.ij_to_xy(np.array([3, 4]))
    assert int(lay.cell_distance(a, b)) == 5
    with pytest.raises(ValueError, match="xy"):
        lay.cell_distance(np.array([-100.0, 0.0]), b)


@requires("ogbench")
def test_layout_matches_ogbench_env():
    from icml25.cgcivl.maze import make_env

    lay = maze_layout("medium")
    env = make_env("medium", max_episode_steps=5)
    u = env.unwrapped
    rng = np.random.default_rng(1)
    for xy in rng.uniform(-2, 22, size=(50, 2)):
        assert tuple(lay.xy_to_ij(xy)) == tuple(u.xy_to_ij(xy))
    sub, bfs = u.get_oracle_subgoal(np.array(lay.ij_to_xy(np.array([1, 1]))), np.array(lay.ij_to_xy(np.array([6, 6]))))
    assert bfs[1, 1] == lay.bfs((6, 6))[1, 1]
    env.close()
