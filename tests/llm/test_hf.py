"""HFModel on a tiny randomly initialised GPT-2 built locally: greedy decoding equals transformers' generate."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from icml25.llm import HFModel, LanguageModel  # noqa: E402

CORPUS = ["the quick brown fox jumps over the lazy dog", "a stitch in time saves nine"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from icml25.llm import save_random_gpt2

    return save_random_gpt2(tmp_path_factory.mktemp("gpt2tiny"), CORPUS * 5, initializer_range=0.2)


@pytest.fixture(scope="module")
def lm(model_dir):
    return HFModel(model_dir)


def _reference_greedy(lm, prompt, max_new):
    tok = lm.tokenizer
    enc = tok(prompt, return_tensors="pt")
    out = lm.model.generate(**enc, max_new_tokens=max_new, do_sample=False, pad_token_id=tok.eos_token_id)
    new = out[0, enc["input_ids"].shape[1]:].tolist()
    if tok.eos_token_id in new:
        new = new[:new.index(tok.eos_token_id)]
    return tok.decode(new, skip_special_tokens=True)


def test_greedy_matches_transformers_generate(lm):
    assert isinstance(lm, LanguageModel)
    for prompt in ["the quick", "a stitch in", "over"]:
        ours = lm.generate([prompt], temperature=0, max_tokens=20)[0][0]
        assert ours.text == _reference_greedy(lm, prompt, 20)


def test_batched_left_padding_equals_one_by_one(lm):
    prompts = ["the quick brown fox", "a", "saves nine and"]
    batched = lm.generate(prompts, temperature=0, max_tokens=15)
    for p, g in zip(prompts, batched):
        single = lm.generate([p], temperature=0, max_tokens=15)[0][0]
        assert g[0].text == single.text
        np.testing.assert_allclose(g[0].token_logprobs, single.token_logprobs, atol=1e-4)


def test_logprobs_agree_with_next_token_logits(lm):
    lps = lm.logprobs(["the quick", "a"], [" brown fox", " stitch"])
    cont = lm.tokenizer(" brown fox", add_special_tokens=False)["input_ids"]
    assert len(lps[0]) == len(cont)
    for k, tid in enumerate(cont):
        prefix = "the quick" + lm.tokenizer.decode(cont[:k])
        ref = torch.log_softmax(torch.tensor(lm.next_token_logits([prefix])[0], dtype=torch.float64), -1)[tid]
        assert abs(lps[0][k] - float(ref)) < 1e-4


def test_greedy_token_logprobs_and_hidden_states(lm):
    g = lm.generate(["the lazy"], temperature=0, max_tokens=6)[0][0]
    ids = lm.tokenizer(g.text, add_special_tokens=False)["input_ids"]
    if len(ids) == len(g.token_logprobs):  # re-tokenisation of random text may merge differently
        np.testing.assert_allclose(lm.logprobs(["the lazy"], [g.text])[0], g.token_logprobs, atol=1e-4)
    h = lm.hidden_states(["the lazy", "a"])
    assert h.shape == (2, 32) and np.isfinite(h).all()


def test_sampling_seed_stop_and_n(lm):
    a = lm.generate(["the"], n=3, temperature=1.0, max_tokens=12, seed=5, stop=["o"])
    b = lm.generate(["the"], n=3, temperature=1.0, max_tokens=12, seed=5, stop=["o"])
    assert [g.text for g in a[0]] == [g.text for g in b[0]] and len(a[0]) == 3
    for g in a[0]:
        assert "o" not in g.text
        assert (g.stop == "o") == (g.finish_reason == "stop" and g.stop is not None)


def test_missing_path_is_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="allow_download=True"):
        HFModel(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="has no config.json"):
        HFModel(tmp_path)
    with pytest.raises(FileNotFoundError, match="local transformers model folder"):
        HFModel("gpt2")  # a Hub id is never fetched unless asked


@pytest.fixture(scope="module")
def tag_model_dir(tmp_path_factory):
    """A tiny GPT-2 whose tokenizer registers ``<tag>`` / ``</tag>`` as special tokens and whose output always
    prefers ``</tag>`` after ``x``-like states: the final layer norm is constant, so the logits are the same at every
    position and greedy decoding writes ``</tag>`` at once; sampling mixes ``</tag>`` with ordinary tokens."""
    from transformers import AutoTokenizer, GPT2LMHeadModel

    from icml25.llm import save_random_gpt2

    d = save_random_gpt2(tmp_path_factory.mktemp("gpt2tag"), CORPUS * 5, initializer_range=0.2)
    tok = AutoTokenizer.from_pretrained(d)
    tok.add_special_tokens({"additional_special_tokens": ["<tag>", "</tag>"]})
    model = GPT2LMHeadModel.from_pretrained(d)
    model.resize_token_embeddings(len(tok))
    with torch.no_grad():
        b = torch.randn(model.config.n_embd, generator=torch.Generator().manual_seed(0))
        model.transformer.ln_f.weight.zero_()
        model.transformer.ln_f.bias.copy_(b)
        wte = model.transformer.wte.weight
        end = tok.convert_tokens_to_ids("</tag>")
        logits = wte @ b
        wte[end] = b * (float(logits.max()) + 1.0) / float(b @ b)  # '</tag>' is the arg-max, not overwhelming
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d


def test_stop_string_that_is_a_special_token(tag_model_dir):
    lm = HFModel(tag_model_dir)
    assert "</tag>" in lm.tokenizer.all_special_tokens
    g = lm.generate(["the quick"], temperature=0, max_tokens=8, stop=["</tag>"])[0][0]
    assert (g.text, g.stop, g.finish_reason) == ("", "</tag>", "stop") and len(g.token_logprobs) == 1
    # without that stop string the special token is dropped from the text as before, and the length is used up
    g = lm.generate(["the quick"], temperature=0, max_tokens=8, stop=["zzz"])[0][0]
    assert (g.text, g.stop, g.finish_reason) == ("", None, "length") and len(g.token_logprobs) == 8
    # sampled: every row that stopped was cut before '</tag>' and holds no special-token text
    outs = lm.generate(["the"], n=20, temperature=1.5, max_tokens=10, stop=["</tag>"], seed=1)[0]
    assert any(o.stop == "</tag>" for o in outs) and any(o.text for o in outs)
    for o in outs:
        assert "<tag>" not in o.text and "</tag>" not in o.text
        assert o.stop is None or o.finish_reason == "stop"  # (end-of-text also stops, with stop=None)


def test_logprobs_fast_equals_plain_and_bad_input(lm):
    prompts = ["the quick brown", "a", "saves nine and the lazy dog"]
    conts = [" fox jumps", " stitch in time saves", " dog"]
    fast, plain = lm.logprobs(prompts, conts), lm.logprobs(prompts, conts, fast=False)
    for f, p in zip(fast, plain):
        assert f.shape == p.shape
        np.testing.assert_allclose(f, p, atol=1e-4)
    with pytest.raises(ValueError, match=r"continuations\[1\] = '' has no tokens"):
        lm.logprobs(["a", "b"], [" x", ""])
    with pytest.raises(ValueError, match="prompts is an empty list"):
        lm.logprobs([], [])
    with pytest.raises(ValueError, match="no chat template"):
        lm.chat([{"role": "user", "content": "hi"}])
