"""Rollouts: the BFS oracle solves every OGBench task; a straight-line policy fails the walled ones."""

import numpy as np

from icml25.cgcivl import evaluate, maze_layout, oracle_direction
from icml25.testing import requires


class Oracle:
    """The data-collection policy: BFS waypoint direction + N(0, 0.5^2) noise (noise frees it from wall corners)."""

    def __init__(self):
        self.lay = maze_layout("medium")
        self.rng = np.random.default_rng(0)

    def act(self, obs, goals):
        a = oracle_direction(self.lay, obs[0], tuple(self.lay.xy_to_ij(goals[0]))) + self.rng.normal(0, 0.5, 2)
        return np.clip(a, -1, 1)[None]


class Straight:
    def act(self, obs, goals):
        d = goals - obs
        return d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-6)


@requires("ogbench")
def test_oracle_solves_all_tasks_and_straight_line_does_not():
    r = evaluate(Oracle(), "medium", episodes=2, seed=0, show_progress=False)
    assert r["success"] == 1.0 and set(r["per_task"]) == {1, 2, 3, 4, 5}
    s = evaluate(Straight(), "medium", task_ids=(1, 3), episodes=1, max_steps=300, seed=0, show_progress=False)
    assert s["success"] < 1.0
