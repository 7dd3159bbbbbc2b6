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


class _FewShotScripted:
    """A fake LanguageModel (not an LLM) reading the query block of a few-shot prompt: ' yes' exactly when the
    query's state carries the red key; a constant bias towards ' no' (removed by calibration); and continuations of
    the constrained writer scored by whether they name the object of the prompt's last goal."""

    tokenizer = None

    def logprobs(self, prompts, continuations):
        out = []
        for p, c in zip(prompts, continuations):
            query = p.rsplit("\n\n", 1)[-1]
            if c in (" yes", " no"):
                yes = "carrying red key" in query
                out.append(np.array([(0.0 if yes == (c == " yes") else -3.0) + (-1.0 if c == " yes" else 0.0)]))
            else:
                goal = p.rsplit("goal '", 1)[-1].split("'")[0].split()
                named = len(goal) >= 2 and c.startswith(f'{goal[-2]}", "{goal[-1]}")')  # 'N/A': all equal
                out.append(np.array([0.0 if named else -4.0]))
        return out

    def generate(self, prompts, **kw):
        raise AssertionError("the few-shot judge and the constrained writer never generate")


def test_few_shot_judge_scores_label_words_and_calibrates() -> None:
    from icml25.teduo.annotators import few_shot_judge_prompt, judge_shots, judge_view

    s1 = SymbolicState(2, 2, 0, ("red", "key"), (("blue", "ball", 3, 2),))
    s0 = SymbolicState(2, 2, 0, None, (("red", "key", 4, 4), ("blue", "ball", 3, 2)))
    assert judge_view(s0, "go to the red key", "goal") == "red key 2 forward 2 right; ahead object; carrying nothing"
    shots = judge_shots([s1, s0, s1, s0], ["pick up the red key"] * 4, 2, rng=0)
    assert sorted(y for _, _, y in shots) == [False, True]
    prompt = few_shot_judge_prompt(s0, "pick up the red key", shots)
    assert prompt.count("Achieved:") == 3 and prompt.endswith("Achieved:") and "Achieved: yes" in prompt
    ann = LLMAnnotator(_FewShotScripted(), batch_size=3, shots=shots, calibrate=True)
    m = ann.judge_margins([s1, s0] * 2, ["pick up the red key"] * 4)
    assert ann.bias_ == pytest.approx(-4.0) and m.tolist() == pytest.approx([6.0, 0.0] * 2)  # 2 - (-4), -4 - (-4)
    assert ann.judge([s1, s0] * 2, ["pick up the red key"] * 4).tolist() == [True, False] * 2
    with pytest.raises(ValueError, match="view"):
        LLMAnnotator(_FewShotScripted(), shots=shots, view="abstract")


def test_constrained_writer_picks_among_the_vocabulary() -> None:
    from icml25.teduo import compile_abstraction, template_abstraction_code

    ann = LLMAnnotator(_FewShotScripted(), writer="constrained")
    (c, t), scores = ann.constrained_target("pick up the purple ball")
    assert (c, t) == ("purple", "ball") and scores.shape == (18,)
    code = ann.abstraction_code("pick up the purple ball")
    assert code == template_abstraction_code("go to the purple ball")
    s = SymbolicState(2, 2, 0, None, (("purple", "ball", 4, 2),))
    assert compile_abstraction(code, "pick up the purple ball", [s])(s) == ((2, 0), False, False, False)


def test_llm_parts_add_judge_and_writer_claims_per_model(monkeypatch) -> None:
    import dataclasses

    from icml25.core import Report
    from icml25.teduo.experiment import goal_split
    from icml25.teduo.experiment import llm as L
    from icml25.teduo.reproduce import Config

    monkeypatch.setattr(L, "load_llm", lambda cfg: _FewShotScripted())
    cfg = dataclasses.replace(Config.quick(), llm="pretrained:a", llm_extra="pretrained:b", llm_judgements=8,
                              llm_shots=2, llm_abstraction_goals=0)
    train, held = goal_split()
    rep = Report(slug="teduo", title="t")
    assert L.llm_parts(rep, cfg, 0, OfflineDataset.collect(n_episodes=20, seed=0), [], train, held) == (None, None)
    claims = {c.id: c for c in rep.claims}
    assert sorted(claims) == ["L1a", "L1b", "L2a", "L2b"]
    assert claims["L2a"].held and claims["L2b"].held  # the scripted writer names the goal's object
    rows = rep.tables[next(k for k in rep.tables if k.startswith("LLM judge competence"))]
    assert len(rows) == 2 * 2 * 2 and {r["view"] for r in rows} == {"raw", "goal"}
