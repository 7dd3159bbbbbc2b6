"""Bad-input registry of ``icml25.teduo`` for the fuzz contract (tests/core/test_bad_input.py)."""

from __future__ import annotations

import functools

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase

_G = "go to the red key"


def _state():
    from icml25.teduo import SymbolicState

    return SymbolicState(2, 2, 0, None, (("red", "key", 4, 2), ("blue", "ball", 3, 3)))


class _FakeLM:
    """A deterministic stand-in with the LanguageModel methods LLMAnnotator uses (not an LLM)."""

    tokenizer = None

    def logprobs(self, prompts, continuations):
        return [np.array([-1.0 if c == "yes" else -2.0]) for c in continuations]

    def generate(self, prompts, **kw):
        from icml25.llm import Generation

        return [[Generation("def abstract(state):\n    return (state.x, state.y)\n")] for _ in prompts]


@functools.cache
def _ds():
    from icml25.teduo import OfflineDataset

    return OfflineDataset.collect(n_episodes=40, seed=0)


def _g2() -> str:  # a goal whose object is in the first room
    c, t, _, _ = _ds().episodes[0]["observations"][0].objects[0]
    return f"go to the {c} {t}"


@functools.cache
def _lab():
    from icml25.teduo import HindsightLabeler, RuleBackend

    return HindsightLabeler(RuleBackend(), label_fraction=0.5).fit(_ds(), [_g2()])


@functools.cache
def _qs():
    from icml25.teduo import TabularQ

    m = _lab().mdps_[_g2()]
    return {_g2(): TabularQ().fit(m.s, m.a, m.r, m.s_next, m.n_states)}


def _q_args():
    return {"s": np.array([0, 1]), "a": np.array([0, 0]), "r": np.array([0.0, 1.0]), "s_next": np.array([1, 1]),
            "n_states": 2, "n_actions": 1}


@functools.cache
def _sft():
    from icml25.teduo import build_sft_dataset

    return build_sft_dataset(_ds(), _lab().mdps_, _qs(), n_starts=200)


def _proxy():
    from icml25.teduo import ProxyRewardModel

    return ProxyRewardModel(epochs=1, dim=16)


@functools.cache
def _fitted_proxy():
    return _proxy().fit(np.eye(16)[:4], np.array([0, 1, 0, 1]))


def _episodes():
    from icml25.teduo import draw_episodes

    return draw_episodes([_G], 2)


CASES = [
    BadInputCase("Goal", skip="a parsed-goal record; parse_goal builds and validates it"),
    BadInputCase("SymbolicState", skip="a state record read from the env (state_from_env)"),
    BadInputCase("AbstractionFn", skip="a result record of compile_abstraction / identity_abstraction"),
    BadInputCase("GoalMDP", skip="a result record of HindsightLabeler"),
    BadInputCase("SFTExample", skip="a result record of build_sft_dataset"),
    BadInputCase("all_goal_strings", lambda: {}),
    BadInputCase("parse_goal", lambda: {"goal": _G}, bad={"goal": TEXT}),
    BadInputCase("goal_reached", lambda: {"state": _state(), "goal": _G}, bad={"goal": TEXT}),
    BadInputCase("describe_state", lambda: {"state": _state()}),
    BadInputCase("relative_position", lambda: {"state": _state(), "x": 4, "y": 2}, bad={"x": REAL, "y": REAL}),
    BadInputCase("OfflineDataset", skip="a record of episodes; build it with OfflineDataset.collect or .load"),
    BadInputCase("OfflineDataset.collect", lambda: {"n_episodes": 2, "episode_length": 3, "seed": 0,
                                                    "env_id": "BabyAI-PickupLoc-v0"},
                 obj=lambda: __import__("icml25.teduo", fromlist=["OfflineDataset"]).OfflineDataset,
                 bad={"n_episodes": SIZE, "episode_length": SIZE, "seed": REAL, "env_id": TEXT}),
    BadInputCase("encode_state", lambda: {"s": _state()}),
    BadInputCase("decode_state", lambda: {"v": __import__("icml25.teduo", fromlist=["x"]).encode_state(_state())},
                 bad={"v": ARRAY}),
    BadInputCase("compile_abstraction", lambda: {"code": "def abstract(state):\n    return state.x\n", "goal": _G,
                                                 "sample_states": [_state()], "name": "abstract"},
                 bad={"code": TEXT, "goal": TEXT, "name": TEXT}),
    BadInputCase("identity_abstraction", lambda: {"goal": _G}, bad={"goal": TEXT}),
    BadInputCase("template_abstraction_code", lambda: {"goal": _G}, bad={"goal": TEXT}),
    BadInputCase("RuleBackend", lambda: {"noise": 0.1, "random_state": 0}, bad={"noise": PROB, "random_state": REAL}),
    BadInputCase("RuleBackend.abstraction_code", lambda: {"goal": _G},
                 obj=lambda: __import__("icml25.teduo", fromlist=["x"]).RuleBackend(), bad={"goal": TEXT}),
    BadInputCase("LLMAnnotator", lambda: {"model": _FakeLM(), "batch_size": 4, "max_code_tokens": 64},
                 bad={"batch_size": SIZE, "max_code_tokens": SIZE}),
    BadInputCase("parse_action", lambda: {"text": "forward"},
                 ),
    BadInputCase("parse_yes_no", lambda: {"text": "yes"}),
    BadInputCase("extract_code", lambda: {"text": "```python\ndef abstract(s):\n    return 1\n```"}),
    BadInputCase("Abstractor", lambda: {"annotator": __import__("icml25.teduo", fromlist=["x"]).RuleBackend()}),
    BadInputCase("Abstractor.build", lambda: {"goal": _G, "sample_states": [_state()]},
                 obj=lambda: __import__("icml25.teduo", fromlist=["x"]).Abstractor(
                     __import__("icml25.teduo", fromlist=["x"]).RuleBackend()), bad={"goal": TEXT}),
    BadInputCase("HindsightLabeler", lambda: {"annotator": __import__("icml25.teduo", fromlist=["x"]).RuleBackend(),
                                              "label_fraction": 0.2, "random_state": 0},
                 bad={"label_fraction": PROB, "random_state": REAL}),
    BadInputCase("ProxyRewardModel", lambda: {"hidden": 8, "epochs": 1, "lr": 1e-3, "pos_weight": 2.0,
                                              "batch_size": 8, "dim": 16, "random_state": 0},
                 bad={"hidden": SIZE, "epochs": SIZE, "lr": POSITIVE, "pos_weight": POSITIVE, "batch_size": SIZE,
                      "dim": SIZE, "random_state": REAL}),
    BadInputCase("ProxyRewardModel.fit", lambda: {"X": np.eye(16)[:4], "y": np.array([0.0, 1.0, 0.0, 1.0])},
                 obj=_proxy, bad={"X": ARRAY, "y": ARRAY}),
    BadInputCase("ProxyRewardModel.predict", lambda: {"X": np.eye(16)[:3]}, obj=_fitted_proxy, bad={"X": ARRAY}),
    BadInputCase("abstract_features", lambda: {"abstract_state": ((1, 0), False), "goal": _G, "dim": 32},
                 bad={"goal": TEXT, "dim": SIZE}),
    BadInputCase("TabularQ", lambda: {"gamma": 0.9, "max_sweeps": 10, "tol": 1e-6},
                 bad={"gamma": PROB, "max_sweeps": SIZE, "tol": REAL}),
    BadInputCase("TabularQ.fit", _q_args, obj=lambda: __import__("icml25.teduo", fromlist=["x"]).TabularQ(),
                 bad={"s": ARRAY, "a": ARRAY, "r": ARRAY, "s_next": ARRAY, "n_states": SIZE, "n_actions": SIZE}),
    BadInputCase("TabularPolicy", lambda: {"table": np.eye(2), "index": {"a": 0, "b": 1}, "mode": "greedy"},
                 bad={"table": ARRAY, "mode": TEXT}),
    BadInputCase("gcbc_table", lambda: {"s": np.array([0, 1]), "a": np.array([0, 1]), "r": np.array([0, 1]),
                                        "episode": np.array([0, 0]), "t": np.array([0, 1]), "n_states": 2,
                                        "n_actions": 2, "window": 3},
                 bad={"s": ARRAY, "a": ARRAY, "r": ARRAY, "n_states": SIZE, "n_actions": SIZE, "window": SIZE}),
    BadInputCase("build_sft_dataset", lambda: {"dataset": _ds(), "mdps": _lab().mdps_, "qs": _qs(),
                                               "n_starts": 50, "goals_per_start": 2, "horizon": 20,
                                               "random_state": 0},
                 bad={"n_starts": SIZE, "goals_per_start": SIZE, "horizon": SIZE}),
    BadInputCase("rollout_empirical", lambda: {"q": _qs()[_g2()], "m": _lab().mdps_[_g2()], "start": 0, "horizon": 10,
                                               "rng": np.random.default_rng(0)},
                 bad={"start": REAL, "horizon": SIZE}),
    BadInputCase("RandomPolicy", lambda: {}),
    BadInputCase("GoalTabularAgent", lambda: {"policies": {}}),
    BadInputCase("draw_episodes", lambda: {"goal_pool": [_G], "n": 2, "seed": 10_000}, bad={"n": SIZE, "seed": REAL}),
    BadInputCase("evaluate", lambda: {"policy": __import__("icml25.teduo", fromlist=["x"]).RandomPolicy(),
                                      "episodes": _episodes(), "horizon": 5, "seed": 0, "batch": 2},
                 bad={"horizon": SIZE, "seed": REAL, "batch": SIZE}),
    BadInputCase("MLPPolicy", lambda: {"hidden": 8, "steps": 2, "lr": 1e-3, "batch_size": 4, "random_state": 0},
                 bad={"hidden": SIZE, "steps": SIZE, "lr": POSITIVE, "batch_size": SIZE, "random_state": REAL}),
    BadInputCase("MLPPolicy.fit", lambda: {"examples": _sft()[:8]},
                 obj=lambda: __import__("icml25.teduo", fromlist=["x"]).MLPPolicy(steps=2)),
    BadInputCase("TinyLMPolicy", lambda: {"d_model": 16, "n_heads": 2, "n_layers": 1, "steps": 2, "lr": 1e-3,
                                          "batch_size": 4, "random_state": 0},
                 bad={"d_model": SIZE, "n_heads": SIZE, "n_layers": SIZE, "steps": SIZE, "lr": POSITIVE,
                      "batch_size": SIZE}),
    BadInputCase("LoRAPolicy", skip="needs a loaded transformers model; its arguments are validated in "
                                    "tests/teduo/test_lm_policy.py (slow)"),
]
