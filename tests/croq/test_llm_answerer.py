"""LLMAnswerer: letter distribution vs brute force, batching, prompts, backends (fakes and the real SmolLM2)."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.croq import CROQ, LETTERS, MCQ, LLMAnswerer, build_mcq, revise
from icml25.croq.experiment.real_models import CachingAnswerer, resplit_coverage


class ByteLM:
    """A fake backend: 128 byte tokens, next-token logits depend on the prompt (its length and last byte)."""

    class tokenizer:  # noqa: N801
        @staticmethod
        def encode(text: str) -> list[int]:
            return [ord(c) % 128 for c in text]

    def next_token_logits(self, prompts: list[str]) -> np.ndarray:
        rng = np.random.default_rng([len(p) for p in prompts])
        return rng.normal(size=(len(prompts), 128)) * 3


class ServerLM:
    """A fake OpenAIServer: only top-k log-probabilities."""

    def top_logprobs(self, prompts: list[str], k: int = 20) -> list[dict[str, float]]:
        return [{" C": -0.3, "A": -1.5, " A": -2.5, "\n": -3.0} for _ in prompts]


def _qs() -> list[MCQ]:
    return [MCQ("What is 2 + 2?", ("3", "4", "5"), 1), MCQ("Capital of France?", ("Lyon", "Nice", "Paris", "Metz"), 2)]


def test_generic_backend_equals_brute_force_softmax() -> None:
    """letter log-probs = logsumexp over the letter's token variants of log_softmax(full logits)."""
    lm = ByteLM()
    ans = LLMAnswerer(lm, letter_variants=("", " "), batch_size=1)
    qs = _qs()
    out = ans.answer(qs)
    for i, q in enumerate(qs):
        full = lm.next_token_logits([ans.prompt(q)])[0]
        logp = full - np.log(np.exp(full - full.max()).sum()) - full.max()
        # " A" is two byte tokens, so only "A" is a single-token spelling: the pool is {"A"}
        brute = np.array([logp[ord(L)] for L in LETTERS[:q.n_options]])
        assert np.allclose(out.letter_logits[i, :q.n_options], brute, atol=1e-10)
        p = np.exp(brute - brute.max())
        assert np.allclose(out.probabilities()[i, :q.n_options], p / p.sum(), atol=1e-10)
    assert np.isneginf(out.letter_logits[0, 3])
    assert out.hidden is None and ans.backend == "generic" and not ans.chat


def test_server_backend_uses_top_logprobs_with_floor() -> None:
    ans = LLMAnswerer(ServerLM())
    out = ans.answer(_qs())
    assert ans.backend == "server" and out.hidden is None
    assert out.answers.tolist() == [2, 2]
    assert out.letter_logits[1, 0] == pytest.approx(np.logaddexp(-1.5, -2.5))
    assert out.letter_logits[1, 1] == out.letter_logits[1, 3] < -3.0  # floor below the smallest listed


def test_openai_server_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real OpenAIServer client (HTTP faked): top-k letter log-probs through the shared interface."""
    pytest.importorskip("httpx")
    from icml25.llm import OpenAIServer

    server = OpenAIServer("http://localhost:9/v1", "m")
    sent = {}

    def fake_top(prompts, k=20):
        sent["prompts"], sent["k"] = prompts, k
        return [{" B": -0.2, " A": -2.0} for _ in prompts]

    monkeypatch.setattr(server, "top_logprobs", fake_top)
    ans = LLMAnswerer(server, top_k=7)
    out = ans.answer(_qs())
    assert ans.backend == "server" and not ans.chat and sent["k"] == 7
    assert sent["prompts"][0].endswith("C. 5\nAnswer:") and out.answers.tolist() == [1, 1]


def test_few_shot_prompt_and_revised_prompt_order() -> None:
    demo = MCQ("1 + 1?", ("2", "3"), 0)
    ans = LLMAnswerer(ByteLM(), examples=[demo])
    q = MCQ("Pick", tuple(f"o{j}" for j in range(6)), 4)
    assert ans.prompt(q).startswith("1 + 1?\nA. 2\nB. 3\nAnswer: A\n\nPick\nA. o0")
    rq, idx = revise(q, np.array([5, 1, 4]))
    assert idx.tolist() == [1, 4, 5]
    assert ans.prompt(rq).endswith("Pick\nA. o1\nB. o4\nC. o5\nAnswer:")


def test_caching_answerer_asks_each_question_once() -> None:
    inner = LLMAnswerer(ByteLM(), letter_variants=("",))
    cached = CachingAnswerer(inner)
    qs = _qs()
    a = cached.answer(qs + qs[:1])
    assert cached.asked == 2
    assert np.array_equal(a.letter_logits[0], a.letter_logits[2])
    assert np.allclose(a.letter_logits[:2], inner.answer(qs).letter_logits)


def test_resplit_coverage_matches_exact_expectation() -> None:
    """Mean coverage over random splits of one pool = 1 - floor(alpha (n+1)) / (n+1) (exchangeability)."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=200)
    y = rng.integers(0, 4, size=200)
    cov, _ = resplit_coverage(p, y, np.full(200, 4), 99, 0.1, 2000, rng)
    assert cov == pytest.approx(1 - 10 / 100, abs=0.006)


def test_llm_answerer_bad_input() -> None:
    with pytest.raises(TypeError, match="lm must be"):
        LLMAnswerer(object())
    with pytest.raises(ValueError, match="chat=True"):
        LLMAnswerer(ByteLM(), chat=True)
    with pytest.raises(ValueError, match="single token"):
        LLMAnswerer(ByteLM(), letter_variants=("xy",))
    with pytest.raises(ValueError, match="examples"):
        LLMAnswerer(ByteLM(), examples=[MCQ("q", ("a", "b"))])
    with pytest.raises(TypeError, match="batch_size"):
        LLMAnswerer(ByteLM(), batch_size="8")
    with pytest.raises(TypeError, match="mcqs"):
        LLMAnswerer(ByteLM()).answer("not a question")


def test_mcq_rejects_duplicates_bad_answer_and_too_many_options() -> None:
    with pytest.raises(ValueError, match="distinct"):
        MCQ("q", ("Paris", "Rome", " Paris"), 0)
    with pytest.raises(ValueError, match="outside the option range"):
        MCQ("q", ("a", "b", "c"), 3)
    with pytest.raises(ValueError, match="between 2 and 15"):
        MCQ("q", tuple(f"o{j}" for j in range(16)))


def test_countries_mcq_uses_same_continent_distractors() -> None:
    qs = build_mcq("countries", 4, seed=0)
    assert len(qs) == 168
    from icml25.croq import load_countries

    cont = {r["capital"]: r["continent"] for r in load_countries()}
    same = np.mean([all(cont[o] == q.meta["continent"] for o in q.options) for q in qs])
    assert same > 0.9  # every continent but Oceania (9 countries) fills 4 options from the same continent
    assert all(q.options[q.answer] == next(r["capital"] for r in load_countries() if r["country"] == q.meta["country"])
               for q in qs[:20])


# ---------------------------------------------------------------- the real model (one SmolLM2 per session)
def test_real_model_letter_distribution_equals_brute_force(smollm2) -> None:
    """Letter distribution from one batched forward = softmax over letters of the letters' token log-probs,
    computed independently with HFModel.logprobs (one continuation per spelling and letter)."""
    ans = LLMAnswerer(smollm2, batch_size=4)
    assert ans.chat and ans.backend == "hf"
    qs = _qs()
    out = ans.answer(qs)
    tok = smollm2.tokenizer
    for i, q in enumerate(qs):
        prompt = ans.prompt(q)
        # chat text carries its own special tokens: the brute force must see the same ids
        assert tok(prompt)["input_ids"] == tok(prompt, add_special_tokens=False)["input_ids"]
        conts = [v + L for L in LETTERS[:q.n_options] for v in ("", " ")]
        lps = smollm2.logprobs([prompt] * len(conts), conts)
        per = np.array([lp[0] for lp in lps]).reshape(q.n_options, 2)
        brute = np.logaddexp(per[:, 0], per[:, 1])
        assert np.allclose(out.letter_logits[i, :q.n_options], brute, atol=1e-4)
        p = np.exp(brute - brute.max())
        assert np.allclose(out.probabilities()[i, :q.n_options], p / p.sum(), atol=1e-4)
    assert out.hidden.shape == (2, smollm2.model.config.hidden_size)
    h = smollm2.hidden_states([ans.prompt(qs[1])])[0]
    assert np.allclose(out.hidden[1], h, atol=1e-4)


def test_real_model_batched_equals_one_by_one_and_croq_runs(smollm2) -> None:
    ans = LLMAnswerer(smollm2, batch_size=3)
    qs = build_mcq("countries", 4, seed=0)[:6]
    batched = ans.answer(qs)
    for i in (0, 3, 5):
        single = ans.answer([qs[i]])
        assert np.allclose(single.letter_logits[0], batched.letter_logits[i], atol=1e-4)
        assert np.allclose(single.hidden[0], batched.hidden[i], atol=1e-4)
    croq = CROQ(ans, alpha=0.4).fit(None, qs[:4], cal_pass=AnswerSlice(batched, 0, 4))
    res = croq.predict(qs[4:], AnswerSlice(batched, 4, 6))
    assert res.final_answer.shape == (2,)


def AnswerSlice(out, a: int, b: int):  # noqa: N802 - reads like a constructor in the test
    from icml25.croq import AnswerOutput

    return AnswerOutput(out.letter_logits[a:b], out.hidden[a:b])


def test_knowledge_sets_have_300_questions_with_true_answers() -> None:
    from icml25.croq.data import KNOWLEDGE_SETS, load_country_facts

    facts = {r["country"]: r for r in load_country_facts()}
    key = {"country->capital": "capital", "capital->country": "country", "country->continent": "continent",
           "capital->continent": "continent", "country->demonym": "demonym", "demonym->country": "country",
           "country->name_fr": "name_fr", "country->name_es": "name_es"}
    for ds in KNOWLEDGE_SETS:
        qs = build_mcq(ds, 4, seed=0)
        assert len(qs) >= 300, ds
        for q in qs:
            assert q.options[q.answer] == facts[q.meta["country"]][key[q.meta["direction"]]]
            assert len({o.lower() for o in q.options}) == 4
    assert all(q.options[q.answer] != q.meta["country"] for q in build_mcq("translations", 4, seed=0))


def test_option_text_answerer_equals_brute_force_first_token(smollm2) -> None:
    """Option scores = log-prob of each option's first token after the prompt, computed independently with
    HFModel.logprobs; few-shot demonstrations end in the answer's text."""
    from icml25.croq import OptionTextAnswerer

    ans = OptionTextAnswerer(smollm2, batch_size=2)
    qs = _qs()
    out = ans.answer(qs)
    for i, q in enumerate(qs):
        lps = smollm2.logprobs([ans.prompt(q)] * q.n_options, [" " + o for o in q.options])
        assert np.allclose(out.letter_logits[i, :q.n_options], [lp[0] for lp in lps], atol=1e-4)
    assert np.isneginf(out.letter_logits[0, 3]) and out.hidden.shape[0] == 2
    # SmolLM2 spells " 3" as " " + "3": the digit options share their first token, the city names do not
    assert ans.collisions(qs[1:]) == 0.0 and ans.collisions(qs[:1]) == 1.0
    shot = OptionTextAnswerer(smollm2, examples=[qs[1]])
    assert "Answer: Paris" in shot.prompt(qs[0])
