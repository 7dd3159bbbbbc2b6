"""Generator (BFS-4 stitch goals, determinism, oracle reaches its goal), npz round trip and loader errors."""

import numpy as np
import pytest

from icml25.cgcivl import check_dataset, generate_pointmaze_dataset, load_dataset, maze_layout, save_dataset
from icml25.testing import requires


@pytest.fixture(scope="module")
def stitch():
    return generate_pointmaze_dataset("medium", "stitch", 12, seed=3, show_progress=False)


@requires("ogbench")
def test_stitch_generator(stitch):
    lay = maze_layout("medium")
    assert stitch["observations"].shape == (12 * 201, 2) and stitch["actions"].shape == (12 * 201, 2)
    assert stitch["terminals"].sum() == 12 and stitch["terminals"][200] == 1
    for s, g in zip(stitch["start_cells"], stitch["goal_cells"]):
        assert lay.bfs(tuple(s))[tuple(g)] == 4
    obs = stitch["observations"].reshape(12, 201, 2)
    assert np.array_equal(lay.xy_to_ij(obs[:, 0]), stitch["start_cells"])
    # the noisy oracle reaches the goal cell within 200 steps (about 60 steps are needed)
    assert np.mean(np.all(lay.xy_to_ij(obs[:, -1]) == stitch["goal_cells"], axis=1)) >= 0.9
    assert np.all(np.abs(stitch["actions"]) <= 1.0)
    step = np.linalg.norm(np.diff(obs, axis=1), axis=-1)
    assert step.max() <= 0.2 * np.sqrt(2) + 1e-4  # the point agent moves at most 0.2 per axis per step


@requires("ogbench")
def test_generator_is_seeded(stitch):
    again = generate_pointmaze_dataset("medium", "stitch", 12, seed=3, show_progress=False)
    other = generate_pointmaze_dataset("medium", "stitch", 12, seed=4, show_progress=False)
    assert np.array_equal(again["observations"], stitch["observations"])
    assert not np.array_equal(other["observations"], stitch["observations"])


@requires("ogbench")
def test_navigate_redraws_goals():
    d = generate_pointmaze_dataset("medium", "navigate", 1, seed=0, episode_steps=400, show_progress=False)
    cells = maze_layout("medium").xy_to_ij(d["observations"])
    assert len({tuple(c) for c in cells}) > 8  # visits many cells, not only the first goal


def test_npz_round_trip_and_ogbench_keys(tmp_path):
    rng = np.random.default_rng(0)
    data = {"observations": rng.normal(size=(10, 2)).astype(np.float32), "actions": rng.normal(size=(10, 2)),
            "terminals": np.r_[np.zeros(4), 1, np.zeros(5)], "qpos": rng.normal(size=(10, 2))}
    path = save_dataset(tmp_path / "d.npz", data)
    back = load_dataset(path)
    assert np.allclose(back["observations"], data["observations"]) and back["terminals"][-1] == 1
    assert "qpos" in back  # OGBench's extra keys are kept


def test_bad_datasets(tmp_path):
    with pytest.raises(ValueError, match="same number of rows"):
        check_dataset(np.zeros((10, 2)), np.zeros((9, 2)), np.zeros(10))
    with pytest.raises(ValueError, match="terminals"):
        check_dataset(np.zeros((10, 2)), np.zeros((10, 2)), np.full(10, 0.5))
    np.savez(tmp_path / "bad.npz", observations=np.zeros((5, 2)), actions=np.zeros((5, 2)))
    with pytest.raises(ValueError, match="terminals"):
        load_dataset(tmp_path / "bad.npz")
    with pytest.raises(FileNotFoundError, match="path"):
        load_dataset(tmp_path / "missing.npz")
