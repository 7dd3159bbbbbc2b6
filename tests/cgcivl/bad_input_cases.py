"""Bad-input registry of ``icml25.cgcivl`` for the fuzz contract (tests/core/test_bad_input.py)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase

MAP = np.array([[1, 1, 1, 1, 1], [1, 0, 0, 0, 1], [1, 1, 1, 0, 1], [1, 1, 1, 1, 1]])


def _torch():
    import torch

    return torch


def _t(*shape, seed=0):
    torch = _torch()
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


@functools.cache
def _tmp() -> Path:
    return Path(tempfile.mkdtemp(prefix="icml25_cgcivl_fuzz_"))


def _layout():
    from icml25.cgcivl import MazeLayout

    return MazeLayout(MAP)


def _data():
    rng = np.random.default_rng(0)
    term = np.zeros(40)
    term[9::10] = 1
    return {"observations": rng.normal(size=(40, 2)), "actions": rng.uniform(-1, 1, size=(40, 2)), "terminals": term}


def _wall_run():
    eu, bfs = np.array([4.1, 4.2, 4.3, 4.4]), np.array([5, 1, 5, 1])
    return ({"neg_v": np.array([9.0, 1.0, 8.0, 2.0]), "euclid": eu, "bfs": bfs},
            {"neg_v": np.array([1.0, 9.0, 2.0, 8.0]), "euclid": eu, "bfs": bfs})


@functools.cache
def _npz() -> Path:
    from icml25.cgcivl import save_dataset

    return save_dataset(_tmp() / "d.npz", _data())


def _ds():
    from icml25.cgcivl import GCDataset

    d = _data()
    return GCDataset(d["observations"], d["actions"], d["terminals"], random_state=0)


def _small_cfg():
    from icml25.cgcivl import AgentConfig

    return AgentConfig(hidden=(8,), latent=8, actor="flat")


def _agent(cls_name: str):
    import icml25.cgcivl as m

    return getattr(m, cls_name)(2, 2, _small_cfg(), seed=0)


class _Still:
    def act(self, obs, goals):
        return np.zeros((len(obs), 2))


def _v2():
    return _t(2, 6)


_AGENT_CFG = {"value": "mrn", "alpha_c": 0.3, "penalty_floor": True, "hidden": (8,), "latent": 8,
              "discount": 0.99, "expectile": 0.9, "lr": 3e-4, "tau": 0.005, "actor": "flat", "beta": 10.0,
              "beta_high": 3.0, "beta_low": 3.0, "adv_clip": 100.0}
_AGENT_BAD = {"value": TEXT, "alpha_c": REAL, "latent": SIZE, "discount": PROB, "expectile": PROB, "lr": POSITIVE,
              "tau": PROB, "actor": TEXT, "beta": REAL, "beta_high": REAL, "beta_low": REAL, "adv_clip": POSITIVE}


def _agent_case(name: str) -> list[BadInputCase]:
    return [
        BadInputCase(name, lambda: {"obs_dim": 2, "action_dim": 2, "config": _small_cfg(), "obs_mean": np.zeros(2),
                                    "obs_std": np.ones(2), "seed": 0},
                     bad={"obs_dim": SIZE, "action_dim": SIZE, "obs_mean": ARRAY, "obs_std": ARRAY}),
        BadInputCase(f"{name}.value", lambda: {"obs": np.zeros((3, 2)), "goals": np.ones((3, 2))},
                     obj=lambda: _agent(name), bad={"obs": ARRAY, "goals": ARRAY}),
        BadInputCase(f"{name}.act", lambda: {"obs": np.zeros((3, 2)), "goals": np.ones((3, 2))},
                     obj=lambda: _agent(name), bad={"obs": ARRAY, "goals": ARRAY}),
    ]


CASES = [
    BadInputCase("generate_pointmaze_dataset",
                 lambda: {"maze": "medium", "kind": "stitch", "episodes": 1, "noise": 0.5, "seed": 0,
                          "episode_steps": 5, "show_progress": False},
                 bad={"maze": TEXT, "kind": TEXT, "episodes": SIZE, "noise": REAL, "episode_steps": SIZE}),
    BadInputCase("cached_pointmaze_dataset",
                 lambda: {"maze": "medium", "kind": "stitch", "episodes": 1, "noise": 0.5, "seed": 0,
                          "cache": _tmp(), "show_progress": False},
                 bad={"maze": TEXT, "kind": TEXT, "episodes": SIZE, "noise": REAL}),
    BadInputCase("load_dataset", lambda: {"path": _npz()}),
    BadInputCase("save_dataset", lambda: {"path": _tmp() / "s.npz", "data": _data()}),
    BadInputCase("check_dataset", lambda: _data(), bad={"observations": ARRAY, "actions": ARRAY, "terminals": ARRAY}),
    BadInputCase("oracle_direction", lambda: {"layout": _layout(), "xy": np.array([0.0, 0.0]), "goal_ij": (2, 3)},
                 bad={"xy": ARRAY}),
    BadInputCase("MazeLayout", lambda: {"maze_map": MAP, "unit": 4.0, "offset": (4.0, 4.0)},
                 bad={"maze_map": ARRAY, "unit": POSITIVE}),
    BadInputCase("MazeLayout.cell_distance", lambda: {"xy_a": np.zeros((3, 2)), "xy_b": np.full((3, 2), 4.0)},
                 obj=_layout, bad={"xy_a": ARRAY, "xy_b": ARRAY}),
    BadInputCase("MazeLayout.xy_to_ij", lambda: {"xy": np.zeros((3, 2))}, obj=_layout, bad={"xy": ARRAY}),
    BadInputCase("maze_layout", lambda: {"maze": "medium"}, bad={"maze": TEXT}),
    BadInputCase("GCDataset", lambda: {**_data(), "discount": 0.99, "p_cur": 0.2, "p_traj": 0.5, "p_rand": 0.3,
                                       "actor_goals": "stitch", "subgoal_steps": 5, "random_state": 0},
                 bad={"observations": ARRAY, "actions": ARRAY, "terminals": ARRAY, "discount": PROB, "p_cur": PROB,
                      "p_traj": PROB, "p_rand": PROB, "actor_goals": TEXT, "subgoal_steps": SIZE}),
    BadInputCase("GCDataset.sample", lambda: {"batch_size": 16}, obj=_ds, bad={"batch_size": SIZE}),
    BadInputCase("MRN", lambda: {"dim": 4}, bad={"dim": SIZE}),
    BadInputCase("MRN.forward", lambda: {"x": _t(5, 4), "y": _t(5, 4, seed=1)}, obj=lambda: _mods("MRN"),
                 bad={"x": ARRAY, "y": ARRAY}),
    BadInputCase("IQE", lambda: {"components": 2, "k": 4}, bad={"components": SIZE, "k": SIZE}),
    BadInputCase("IQE.forward", lambda: {"x": _t(5, 8), "y": _t(5, 8, seed=1)}, obj=lambda: _mods("IQE"),
                 bad={"x": ARRAY, "y": ARRAY}),
    BadInputCase("interval_union_length", lambda: {"lo": _t(3, 4), "hi": _t(3, 4) .abs() + _t(3, 4)},
                 bad={"lo": ARRAY}),
    BadInputCase("QuasimetricValue", lambda: {"obs_dim": 2, "hidden": (8,), "head": "mrn", "latent": 8},
                 bad={"obs_dim": SIZE, "head": TEXT, "latent": SIZE}),
    BadInputCase("QuasimetricValue.forward", lambda: {"s": _t(4, 2), "g": _t(4, 2, seed=1)},
                 obj=lambda: _mods("QuasimetricValue"), bad={"s": ARRAY, "g": ARRAY}),
    BadInputCase("MLPValue", lambda: {"obs_dim": 2, "hidden": (8,)}, bad={"obs_dim": SIZE}),
    BadInputCase("MLPValue.forward", lambda: {"s": _t(4, 2), "g": _t(4, 2, seed=1)}, obj=lambda: _mods("MLPValue"),
                 bad={"s": ARRAY, "g": ARRAY}),
    BadInputCase("expectile_weight", lambda: {"adv": _t(6), "expectile": 0.9}, bad={"adv": ARRAY, "expectile": PROB}),
    BadInputCase("ivl_loss", lambda: {"v": _v2(), "next_v_target": _v2() - 1, "v_target": _v2() + 1,
                                      "rewards": -_torch().ones(6), "masks": _torch().ones(6), "discount": 0.99,
                                      "expectile": 0.9},
                 bad={"v": ARRAY, "next_v_target": ARRAY, "v_target": ARRAY, "rewards": ARRAY, "masks": ARRAY,
                      "discount": PROB, "expectile": PROB}),
    BadInputCase("conservative_penalty", lambda: {"v": _v2(), "is_cross": _torch().arange(6) % 2 == 0,
                                                  "alpha": 0.3, "floor": -100.0},
                 bad={"v": ARRAY, "alpha": REAL, "floor": REAL}),
    BadInputCase("awr_loss", lambda: {"log_prob": _t(6), "adv": _t(6, seed=1), "beta": 3.0, "clip": 100.0},
                 bad={"log_prob": ARRAY, "adv": ARRAY, "beta": REAL, "clip": POSITIVE}),
    BadInputCase("value_floor", lambda: {"discount": 0.99}, bad={"discount": PROB}),
    BadInputCase("AgentConfig", lambda: dict(_AGENT_CFG), bad=dict(_AGENT_BAD)),
    *_agent_case("GCIVL"),
    *_agent_case("CGCIVL"),
    BadInputCase("GCIVL.update", skip="takes a batch dict produced by GCDataset.sample"),
    BadInputCase("evaluate", lambda: {"agent": _Still(), "maze": "medium", "task_ids": (3,), "episodes": 1,
                                      "max_steps": 5, "seed": 0, "show_progress": False, "parallel": 1},
                 bad={"maze": TEXT, "episodes": SIZE, "max_steps": SIZE, "parallel": SIZE}),
    BadInputCase("overestimation_rate", lambda: {"neg_v": np.array([1.0, 50.0, 3.0]), "bfs": np.array([2, 9, 0]),
                                                 "discount": 0.99, "cell_size": 4.0, "max_step": 0.283,
                                                 "factor": 0.5},
                 bad={"neg_v": ARRAY, "bfs": ARRAY, "discount": PROB, "cell_size": POSITIVE, "max_step": POSITIVE,
                      "factor": POSITIVE}),
    BadInputCase("discounted_distance_bound", lambda: {"bfs": np.array([0, 3, 7]), "discount": 0.99,
                                                       "cell_size": 4.0, "max_step": 0.283},
                 bad={"bfs": ARRAY, "discount": PROB, "cell_size": POSITIVE, "max_step": POSITIVE}),
    BadInputCase("rank_correlation", lambda: {"neg_v": np.array([1.0, 3.0, 2.0]), "bfs": np.array([1, 4, 2])},
                 bad={"neg_v": ARRAY, "bfs": ARRAY}),
    BadInputCase("binned_auc", lambda: {"scores": np.array([1.0, 2.0, 3.0, 0.5]),
                                        "positive": np.array([False, True, True, False]),
                                        "bins": np.array([0, 0, 1, 1])},
                 bad={"scores": ARRAY, "bins": ARRAY}),
    BadInputCase("wall_auc", lambda: {"neg_v": np.array([10.0, 1.0, 4.0]), "euclid": np.array([4.1, 4.2, 5.0]),
                                      "bfs": np.array([5, 1, 1]), "bin_width": 0.5},
                 bad={"neg_v": ARRAY, "euclid": ARRAY, "bfs": ARRAY, "bin_width": POSITIVE}),
    BadInputCase("wall_auc_gain_ci", lambda: {"runs": [_wall_run()], "n_boot": 5, "level": 0.9, "seed": 0},
                 bad={"n_boot": SIZE, "level": PROB}),
    BadInputCase("value_diagnostics", lambda: {"neg_value": lambda s, g: np.linalg.norm(s - g, axis=1),
                                               "observations": np.random.default_rng(0).uniform(-2, 6, (50, 2)) * [1, 0],
                                               "layout": _layout(), "discount": 0.99, "n_pairs": 20, "n_wall": 20,
                                               "seed": 0},
                 bad={"observations": ARRAY, "discount": PROB, "n_pairs": SIZE, "n_wall": SIZE}),
]


def _mods(name: str):
    import icml25.cgcivl as m

    _torch().manual_seed(0)
    return {"MRN": lambda: m.MRN(4), "IQE": lambda: m.IQE(2, 4),
            "QuasimetricValue": lambda: m.QuasimetricValue(2, (8,), "mrn", 8),
            "MLPValue": lambda: m.MLPValue(2, (8,))}[name]()
