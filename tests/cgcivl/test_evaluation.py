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


def _sequential(agent, maze, task_ids, episodes, max_steps, seed):
    """The evaluation loop before issue 50: one episode after the other on one environment."""
    from icml25.cgcivl.maze import make_env

    env = make_env(maze, terminate_at_goal=True, max_episode_steps=max_steps)
    state = np.random.get_state()
    np.random.seed(seed)
    env.action_space.seed(seed)
    out, first = [], True
    for t in task_ids:
        for _ in range(episodes):
            ob, info = env.reset(seed=seed if first else None, options=dict(task_id=int(t), render_goal=False))
            first = False
            goal = np.asarray(info["goal"], dtype=float)[None, :2]
            done, steps = False, 0
            while not done:
                a = np.asarray(agent.act(np.asarray(ob, dtype=float)[None, :2], goal))[0]
                ob, _, term, trunc, info = env.step(a)
                steps += 1
                done = term or trunc
            out.append((float(info["success"]), steps))
    np.random.set_state(state)
    return out


@requires("ogbench")
def test_parallel_rollouts_equal_the_sequential_loop():
    ref = _sequential(Straight(), "medium", (1, 2, 3), 3, 250, 5)
    for parallel in (1, 4, 50):
        r = evaluate(Straight(), "medium", task_ids=(1, 2, 3), episodes=3, max_steps=250, seed=5,
                     show_progress=False, parallel=parallel)
        assert [x for t in (1, 2, 3) for x in r["episodes"][t]] == [s for s, _ in ref]
        assert r["steps"] == np.mean([n for _, n in ref])
    assert 0 < np.mean([s for s, _ in ref]) < 1  # some episodes reach the goal, some do not


@requires("ogbench")
def test_single_row_policy_with_parallel_rollouts_is_refused():
    import pytest

    with pytest.raises(ValueError, match="one action per row"):
        evaluate(Oracle(), "medium", task_ids=(1,), episodes=2, max_steps=5, show_progress=False, parallel=2)
