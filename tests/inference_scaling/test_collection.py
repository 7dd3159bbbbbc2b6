"""collect_counts with a fake LanguageModel (protocol-conformant), a plain callable and TinyGPT."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.inference_scaling import collect_counts, fit_counts
from icml25.llm.base import Generation, LanguageModel
from icml25.testing import requires


class FakeModel:
    """Answers problem ``"q<i>"`` correctly with a per-prompt probability; seeded like a real backend."""

    tokenizer = None

    def __init__(self, success: dict[str, float]) -> None:
        self.success = success
        self.calls: list[tuple[int, int, int | None]] = []

    def generate(self, prompts, n=1, temperature=1.0, top_p=1.0, max_tokens=64, stop=None, seed=None):
        self.calls.append((len(prompts), n, seed))
        rng = np.random.default_rng(seed)
        return [[Generation(text="right" if rng.random() < self.success[p] else "wrong") for _ in range(n)]
                for p in prompts]

    def logprobs(self, prompts, continuations):
        return [np.zeros(1) for _ in prompts]

    def next_token_logits(self, prompts):
        return np.zeros((len(prompts), 2))


def verify(problem, text):
    return text == "right"


def test_fake_model_satisfies_protocol_and_counts_are_binomial() -> None:
    rng = np.random.default_rng(0)
    p_success = rng.beta(0.5, 3.0, 60)
    probs = {f"q{i}": float(p) for i, p in enumerate(p_success)}
    model = FakeModel(probs)
    assert isinstance(model, LanguageModel)
    res = collect_counts(list(probs), model, verify, n_attempts=400, batch_size=64, prompts_per_call=16, seed=1,
                         return_outcomes=True)
    assert res.n.tolist() == [400] * 60
    assert np.array_equal(res.c, res.outcomes.sum(axis=1))
    z = (res.c - 400 * p_success) / np.sqrt(400 * p_success * (1 - p_success) + 1e-9)
    assert np.mean(np.abs(z) < 3) > 0.9
    # 4 chunks of <= 16 prompts x ceil(400 / 64) = 7 calls, seeds 1, 2, ... in order
    assert res.n_calls == 28 and [s for _, _, s in model.calls] == list(range(1, 29))
    assert [n for _, n, _ in model.calls[:7]] == [64] * 6 + [16]


def test_same_seed_same_counts_and_end_to_end_fit() -> None:
    rng = np.random.default_rng(1)
    probs = {f"q{i}": float(1 - p) for i, p in enumerate(rng.beta(3.0, 0.6, 300))}  # failure ~ Beta(3, 0.6)
    a = collect_counts(list(probs), FakeModel(probs), verify, n_attempts=300, batch_size=300, prompts_per_call=100,
                       seed=7)
    b = collect_counts(list(probs), FakeModel(probs), verify, n_attempts=300, batch_size=300, prompts_per_call=100,
                       seed=7)
    assert np.array_equal(a.c, b.c)
    fit = fit_counts(a.n, a.c)
    assert fit.beta == pytest.approx(0.6, abs=0.15)


def test_plain_callable_dict_problems_and_prompt_fn() -> None:
    problems = [{"prompt": "2+2", "answer": "4"}, {"prompt": "3+3", "answer": "6"}]

    def gen(prompts, n):
        return [[str(eval(p)) if j % 2 == 0 else "?" for j in range(n)] for p in prompts]

    res = collect_counts(problems, gen, lambda prob, t: t == prob["answer"], n_attempts=10, batch_size=4)
    assert res.c.tolist() == [5, 5]
    res2 = collect_counts(["x"], gen, lambda prob, t: True, n_attempts=3, prompt_fn=lambda prob: "1+1")
    assert res2.c.tolist() == [3]


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="empty"):
        collect_counts([], lambda p, n: [], verify, 3)
    with pytest.raises(ValueError, match="n_attempts"):
        collect_counts(["a"], lambda p, n: [["x"] * n], verify, 0)
    with pytest.raises(TypeError, match="generate_fn"):
        collect_counts(["a"], 42, verify, 2)
    with pytest.raises(ValueError, match="samples for a prompt"):
        collect_counts(["a"], lambda p, n: [["x"]], verify, 2)
    with pytest.raises(TypeError, match="bool"):
        collect_counts(["a"], lambda p, n: [["x"] * n], lambda prob, t: "yes", 2)
    with pytest.raises(TypeError, match="prompt"):
        collect_counts([3], lambda p, n: [["x"] * n], verify, 2)


@requires("torch")
def test_with_tiny_gpt_backend() -> None:
    from icml25.llm import CharTokenizer, TinyGPT, TinyGPTConfig

    tok = CharTokenizer("ab")
    model = TinyGPT(TinyGPTConfig(n_layer=1, n_head=1, n_embd=8, block_size=16), tok, seed=0)
    assert isinstance(model, LanguageModel)
    problems = ["a", "b", "ab"]
    res = collect_counts(problems, model, lambda prob, t: t.startswith("a"), n_attempts=20, batch_size=8,
                         max_tokens=4, seed=3, return_outcomes=True)
    again = collect_counts(problems, model, lambda prob, t: t.startswith("a"), n_attempts=20, batch_size=8,
                           max_tokens=4, seed=3)
    assert res.n.tolist() == [20, 20, 20]
    assert np.array_equal(res.c, again.c)  # seeded backend: reproducible counts
    assert 0 < res.c.sum() < 60  # an untrained model writes 'a' first sometimes, not always
