"""Proxy labelling, the dataset layout, D_SFT, the parsers and the annotators."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.teduo import (
    LLMAnnotator,
    OfflineDataset,
    RuleBackend,
    SymbolicState,
    TabularQ,
    build_sft_dataset,
    decode_state,
    encode_state,
    goal_reached,
    parse_action,
    parse_yes_no,
)


def test_collection_is_seeded_and_roundtrips(tmp_path) -> None:
    a = OfflineDataset.collect(3, episode_length=10, seed=4, goals=["go to the red key"])
    b = OfflineDataset.collect(3, episode_length=10, seed=4)
    assert all((x["actions"] == y["actions"]).all() and x["observations"] == y["observations"]
               for x, y in zip(a.episodes, b.episodes))
    c = OfflineDataset.load(a.save(tmp_path / "d.npz"))
    assert c.goals == a.goals and c.episodes[2]["observations"] == a.episodes[2]["observations"]
    import zipfile

    names = zipfile.ZipFile(tmp_path / "d.npz").namelist()
    assert "episode_0/observations.npy" in names and "episode_2/actions.npy" in names  # Minari-style layout


def test_encode_decode_inverse() -> None:
    s = SymbolicState(3, 4, 2, ("grey", "box"), (("red", "key", 1, 1), ("blue", "ball", 6, 6)))
    assert decode_state(encode_state(s)) == s


def test_empty_dataset_rejected() -> None:
    with pytest.raises(ValueError, match="no episodes"):
        OfflineDataset([]).transitions()


def test_proxy_labels_match_rule(small_data) -> None:
    _, lab = small_data
    for g, m in lab.mdps_.items():
        held = ~lab.labelled_mask_[g]
        assert (m.r[held] == m.truth[held]).mean() > 0.99, g
    n = sum(len(m.s) for m in lab.mdps_.values())
    assert 0.2 * n < lab.n_annotator_calls_ < 0.4 * n  # ~label_fraction of the pairs went to the annotator


def test_rule_backend_noise_rate() -> None:
    s = SymbolicState(1, 1, 0, None, ())
    y = RuleBackend(noise=0.2, random_state=0).judge([s] * 5000, ["pick up the red key"] * 5000)
    assert abs(y.mean() - 0.2) < 0.02


def test_sft_examples_are_optimal_first_steps(small_data) -> None:
    ds, lab = small_data
    qs = {g: TabularQ().fit(m.s, m.a, m.r, m.s_next, m.n_states) for g, m in lab.mdps_.items()}
    ex = build_sft_dataset(ds, lab.mdps_, qs, n_starts=300)
    assert len(ex) > 50
    for e in ex[:100]:
        m, q = lab.mdps_[e.goal], qs[e.goal]
        row = q.Q_[m.index[m.abstraction(e.state)]]
        assert row[e.action] == row.max() > 0 and not goal_reached(e.state, e.goal)
        # Bellman: an optimal first step of a rollout of length n has value gamma^(n-1) at most
        assert row.max() >= 0.9 ** (e.steps_to_goal - 1) - 1e-9 or e.steps_to_goal > 1


@pytest.mark.parametrize("text, expected", [("left", 0), (" Right.", 1), ("FORWARD", 2), ("pick up", 3),
                                            ("pickup now", 3), ("", None), ("go left", None), ("<|im_end|>", None),
                                            ("1", None), ("leftright", None)])
def test_parse_action_on_model_outputs(text: str, expected: int | None) -> None:
    assert parse_action(text) == expected


@pytest.mark.parametrize("text, expected", [("Yes.", True), (" no", False), ("\"yes\"", True), ("Yesterday", None),
                                            ("", None), ("I think so", None)])
def test_parse_yes_no(text: str, expected: bool | None) -> None:
    assert parse_yes_no(text) == expected


def test_parsers_reject_non_strings() -> None:
    for f in (parse_action, parse_yes_no):
        with pytest.raises(TypeError, match="text"):
            f(None)


class _Scripted:
    """A fake LanguageModel (not an LLM): says 'yes' exactly when the prompt states 'carrying red key'."""

    tokenizer = None

    def __init__(self) -> None:
        self.calls = 0

    def logprobs(self, prompts, continuations):
        self.calls += 1
        return [np.array([0.0 if ("carrying red key" in p) == (c == "yes") else -5.0])
                for p, c in zip(prompts, continuations)]

    def generate(self, prompts, **kw):
        from icml25.llm import Generation

        return [[Generation("Here:\n```python\ndef abstract(state):\n    return state.carrying\n```")]
                for _ in prompts]


def test_llm_annotator_batches_and_reads_answers() -> None:
    lm = _Scripted()
    ann = LLMAnnotator(lm, batch_size=4)
    s1 = SymbolicState(1, 1, 0, ("red", "key"), ())
    s0 = SymbolicState(1, 1, 0, None, ())
    y = ann.judge([s1, s0] * 5, ["pick up the red key"] * 10)
    assert y.tolist() == [True, False] * 5 and lm.calls == 2 * 3  # 3 batches x (yes, no)
    assert ann.abstraction_code("pick up the red key").startswith("def abstract(state)")
