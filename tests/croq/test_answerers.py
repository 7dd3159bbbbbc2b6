"""Answerers on the shared LLM interface: letter columns of next-token logits, top-logprob floors, the reader."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from icml25.croq import (
    MCQ,
    KnowledgeTask,
    LMAnswerer,
    OpenAICompatibleAnswerer,
    TinyMCQReader,
    TopLogprobsAnswerer,
    letter_logits_from_top_logprobs,
    render_prompt,
)
from icml25.croq.knowledge_task import TASK_OPTION_FORMAT, TASK_SEPARATOR, TASK_TEMPLATE


class FakeTokenizer:
    vocab_size = 40

    def encode(self, text: str) -> list[int]:
        return [ord(c) % 40 for c in text]


class FakeLM:
    """next-token logits = a fixed function of the prompt length, to check column selection."""

    tokenizer = FakeTokenizer()

    def next_token_logits(self, prompts):
        return np.stack([np.arange(40.0) * (len(p) % 3 + 1) for p in prompts])


def test_lm_answerer_selects_letter_columns_and_masks() -> None:
    ans = LMAnswerer(FakeLM())
    qs = [MCQ("q", ("a", "b")), MCQ("qq", ("a", "b", "c", "d"))]
    out = ans.answer(qs)
    full = FakeLM().next_token_logits(ans.prompts(qs))
    assert np.array_equal(out.letter_logits[1], full[1, [ord(c) % 40 for c in "ABCD"]])
    assert np.isneginf(out.letter_logits[0, 2:]).all() and out.hidden is None
    assert np.allclose(out.probabilities()[0, :2].sum(), 1.0)


def test_top_logprobs_floor() -> None:
    z = letter_logits_from_top_logprobs({" A": -0.5, "B": -1.5, " B": -1.5, "x": -3.0}, 4)
    assert z[0] == -0.5 and z[1] == pytest.approx(np.logaddexp(-1.5, -1.5))
    assert z[2] == z[3] == pytest.approx(-3.0 - np.log(2))
    assert letter_logits_from_top_logprobs({"A": -1.0}, 3, floor=-50)[2] == -50
    ans = TopLogprobsAnswerer(lambda ps: [{"C": -0.1}] * len(ps))
    assert ans.answer([MCQ("q", ("a", "b", "c"))]).answers.tolist() == [2]


def test_openai_answerer_parses_completions(monkeypatch: pytest.MonkeyPatch) -> None:
    httpx = pytest.importorskip("httpx")
    sent = {}

    def fake_post(url, json=None, headers=None, timeout=None):
        sent.update(url=url, body=json)
        choices = [{"index": i, "logprobs": {"top_logprobs": [{" B": -0.2, " A": -2.0}]}}
                   for i in range(len(json["prompt"]))]
        return httpx.Response(200, json={"choices": choices}, request=httpx.Request("POST", url))

    monkeypatch.setattr(httpx, "post", fake_post)
    ans = OpenAICompatibleAnswerer("http://x/v1/", "m", top_logprobs=5)
    out = ans.answer([MCQ("q", ("a", "b", "c")), MCQ("r", ("a", "b"))])
    assert sent["url"] == "http://x/v1/completions" and sent["body"]["logprobs"] == 5
    assert out.answers.tolist() == [1, 1] and out.letter_logits.shape == (2, 3)
    assert json.dumps(sent["body"])  # serialisable request


def test_reader_uses_tinygpt_interface_consistently() -> None:
    """The reader's differentiable training logits equal what TinyGPT.next_token_logits gives at inference."""
    task = KnowledgeTask(seed=0)
    reader = TinyMCQReader(task, seed=1)
    qs = task.sample(16, (2, 15), np.random.default_rng(0))
    with torch.no_grad():
        train_view = reader.letter_logits_torch(qs).numpy()
    out = reader.answer(qs)
    fin = np.isfinite(train_view)
    assert np.array_equal(fin, np.isfinite(out.letter_logits))
    assert np.allclose(train_view[fin], out.letter_logits[fin], atol=1e-4)
    assert out.hidden.shape == (16, 64)
    p = render_prompt(qs[0], TASK_TEMPLATE, TASK_OPTION_FORMAT, TASK_SEPARATOR)
    assert len(reader.lm.tokenizer.encode(p)) == 4 + 2 * qs[0].n_options  # one token per symbol


def test_knowledge_task_questions() -> None:
    task = KnowledgeTask(seed=3)
    qs = task.sample(300, 15, np.random.default_rng(0))
    facts = task.facts
    for q in qs:
        assert q.options[q.answer] == task.value_text(facts[q.meta["entity"], q.meta["relation"]])
        assert len(set(q.options)) == 15
    with pytest.raises(ValueError, match="n_options"):
        task.sample(1, 16, np.random.default_rng(0))


def test_reader_learns_on_tiny_budget() -> None:
    """A few hundred steps on 2-option questions move the reader clearly above chance."""
    task = KnowledgeTask(n_entities=8, n_relations=1, n_values=20, cluster_size=5, seed=0)
    reader = TinyMCQReader(task, n_layer=1, n_embd=32, seed=0)
    before = reader.accuracy(task.sample(300, 2, np.random.default_rng(1)))
    reader.train(max_steps=150, lr=3e-3, batch_size=32, eval_every=1000, n_options=(2, 2), seed=0,
                 show_progress=False, n_eval=50)
    after = reader.accuracy(task.sample(300, 2, np.random.default_rng(1)))
    assert after > max(before, 0.5) + 0.15
