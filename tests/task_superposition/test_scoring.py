"""Exact answer probabilities: against brute-force softmax products, a mock LM with known masses, the plain
per-pair teacher forcing of icml25.llm, and beam enumeration."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.task_superposition import (
    MixturePromptBuilder,
    MockAnswerLM,
    answer_probabilities,
    official_setting,
    synthetic_family,
    token_lm,
    top_continuations,
    topk_membership,
)


def test_mock_lm_masses_are_recovered_to_1e6():
    masses = {"12": 0.31, "1": 0.2, "123": 0.05, "7": 0.17, "Paris": 0.04}
    lm = MockAnswerLM(masses)
    p = answer_probabilities(lm, ["q=", "other prompt->"], [list(masses)] * 2)
    assert np.abs(p - np.array(list(masses.values()))).max() < 1e-6
    # official unterminated variant: P(continuation starts with "1") counts "12" and "123" too (overlap)
    p0 = answer_probabilities(lm, ["q="], [["1", "12"]], terminator="")
    assert p0[0] == pytest.approx([0.56, 0.36])


def test_tiny_scorer_equals_brute_force_softmax_product(tiny_fab):
    import torch

    fam = synthetic_family("F-AB")
    items = MixturePromptBuilder(fam, m=5, random_state=0).sample(4)
    p = answer_probabilities(tiny_fab, items)
    for i, it in enumerate(items):
        for k, a in enumerate(it.answers):
            ids = tiny_fab._ids(it.prompt)
            cont = tiny_fab.tokenizer.encode(a + "\n")
            prob = 1.0
            for t in range(len(cont)):  # one full forward pass per prefix, full softmax
                with torch.no_grad():
                    logits = tiny_fab.module(torch.tensor([ids + cont[:t]]))[0, -1]
                prob *= float(torch.softmax(logits.double(), -1)[cont[t]])
            assert p[i, k] == pytest.approx(prob, rel=1e-5)


def test_terminated_probabilities_over_all_single_char_answers_sum_to_one(tiny_fab):
    # a char model: the answers "0".."9", "=", and every other single character + "\n" are disjoint events; over the
    # whole vocabulary of 1-char answers the mass is P(first char) * P("\n" | char) <= 1
    vocab = [c for c in "0123456789="]
    p = answer_probabilities(tiny_fab, ["12="], [vocab])
    assert p.sum() <= 1 + 1e-9
    p0 = answer_probabilities(tiny_fab, ["12="], [vocab], terminator="")
    assert np.all(p <= p0 + 1e-12)


def test_hf_prefix_scorer_equals_plain_teacher_forcing(random_gpt2):
    fam = official_setting("country")
    items = MixturePromptBuilder(fam, m=6, random_state=0).sample(3)
    p = answer_probabilities(random_gpt2, items)
    ps = [it.prompt for it in items for _ in it.answers]
    cs = [a + "\n" for it in items for a in it.answers]
    ref = np.array([lp.sum() for lp in random_gpt2.logprobs(ps, cs, fast=False)]).reshape(p.shape)
    assert np.log(p) == pytest.approx(ref, abs=1e-4)
    bf = answer_probabilities(token_lm(random_gpt2), items)  # one forward per prefix, no cache
    assert np.log(p) == pytest.approx(np.log(bf), abs=1e-4)


def test_beam_enumeration_and_topk_membership_on_the_mock():
    lm = MockAnswerLM({"12": 0.4, "13": 0.25, "7": 0.2, "1": 0.1})
    top = top_continuations(lm, "q=", num_beams=5)
    assert list(top)[:4] == ["12", "13", "7", "1"]
    assert [top[k] for k in ("12", "13", "7", "1")] == pytest.approx([0.4, 0.25, 0.2, 0.1])
    p = answer_probabilities(lm, ["q="], [["12", "7", "1"]])[0]
    assert topk_membership(lm, "q=", p).tolist() == [True, True, False]  # K = 3: tau = P("7") = 0.2
    assert topk_membership(lm, "q=", p, K=4).tolist() == [True, True, True]


def test_bad_inputs_to_the_scorer(tiny_fab):
    with pytest.raises(ValueError, match="answers"):
        answer_probabilities(tiny_fab, ["12="], None)
    with pytest.raises(ValueError, match="answers"):
        answer_probabilities(tiny_fab, ["12=", "34="], [["1"]])
    with pytest.raises(ValueError, match="prompts"):
        answer_probabilities(tiny_fab, [], [])
    with pytest.raises(TypeError, match="model"):
        answer_probabilities(object(), ["x"], [["a"]])


@pytest.mark.slow
def test_real_smollm2_prefix_scorer_equals_plain_teacher_forcing(smollm2):
    fam = official_setting("country", ["capital", "continent"])
    items = MixturePromptBuilder(fam, m=10, random_state=0).sample(2)
    p = answer_probabilities(smollm2, items)
    ps = [it.prompt for it in items for _ in it.answers]
    cs = [a + "\n" for it in items for a in it.answers]
    ref = np.array([lp.sum() for lp in smollm2.logprobs(ps, cs, fast=False)]).reshape(p.shape)
    assert np.log(p) == pytest.approx(ref, abs=1e-3)
    assert np.all(p.sum(axis=1) <= 1 + 1e-6)
