"""Goal sampler: mixture frequencies, rewards/masks, trajectory boundaries, geometric offsets."""

import numpy as np
import pytest

from icml25.cgcivl import GCDataset


def _ds(**kw):
    T, n = 50, 40
    obs = np.arange(T * n * 2, dtype=float).reshape(T * n, 2)
    term = np.zeros(T * n)
    term[T - 1::T] = 1
    return GCDataset(obs, np.zeros((T * n, 2)), term, random_state=0, **kw)


def test_frequencies_rewards_and_boundaries():
    ds = _ds()
    b = ds.sample(60_000)
    freq = np.bincount(b["goal_kind"], minlength=3) / 60_000
    assert np.allclose(freq, [0.2, 0.5, 0.3], atol=0.01)
    assert np.array_equal(b["rewards"], (b["goal_idx"] == b["idx"]) - 1.0)
    assert np.array_equal(b["masks"], (b["goal_idx"] != b["idx"]).astype(float))
    traj = b["goal_kind"] == 1
    assert np.all(b["goal_idx"][traj] > b["idx"][traj])
    assert np.all(b["goal_idx"][traj] // 50 == b["idx"][traj] // 50)  # never crosses a trajectory end
    assert np.array_equal(b["next_obs"], ds.observations[b["idx"] + 1])
    assert np.all(b["idx"] % 50 != 49)  # the last step of a trajectory has no successor
    assert np.array_equal(b["is_cross"], b["goal_kind"] == 2)


def test_geometric_offsets():
    ds = _ds(discount=0.9)
    b = ds.sample(40_000)
    traj = (b["goal_kind"] == 1) & (b["idx"] % 50 < 5)  # far from the end: clipping is rare
    off = b["goal_idx"][traj] - b["idx"][traj]
    assert abs(off.mean() - 10.0) < 0.6  # Geometric(0.1) has mean 10 (clipped at >= 45 steps)


def test_actor_goals_and_subgoals():
    b = _ds(actor_goals="future", subgoal_steps=5).sample(5000)
    assert np.all(b["actor_goals"][:, 0] > b["obs"][:, 0])
    assert np.all((b["actor_goals"][:, 0] // 100) == (b["obs"][:, 0] // 100))
    expected = np.minimum(b["idx"] + 5, (b["idx"] // 50) * 50 + 49)
    assert np.array_equal(b["subgoals"][:, 0], 2.0 * expected)


def test_bad_parameters():
    with pytest.raises(ValueError, match="discount"):
        _ds(discount=1.0)
    with pytest.raises(ValueError, match="sum to 1"):
        _ds(p_rand=0.5)
    with pytest.raises(ValueError, match="rows"):
        GCDataset(np.zeros((5, 2)), np.zeros((4, 2)), np.zeros(5))
