"""TinyGPT: learns a deterministic language, KV cache == no cache, batching, scoring consistency, save/load."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml25.llm import CharTokenizer, LanguageModel, TinyGPT, TinyGPTConfig

ALPHA = "abcdefghijklmnopqrstuvwxyz"
TEXTS = [ALPHA[i:] + ALPHA[:i] for i in range(26)]  # rotations: 3 characters determine the rest


@pytest.fixture(scope="module")
def trained():
    tok = CharTokenizer.from_texts(TEXTS)
    lm = TinyGPT(TinyGPTConfig(n_layer=2, n_head=4, n_embd=48, block_size=64), tok, seed=0)
    losses = lm.fit(TEXTS, steps=250, batch_size=32, lr=3e-3, warmup=20, seed=0, progress=False)
    return lm, losses


def test_learns_deterministic_language(trained):
    lm, losses = trained
    assert isinstance(lm, LanguageModel)
    assert losses[0] > 2.5  # starts near log(29)
    assert np.mean(losses[-20:]) < 0.35
    out = lm.generate(["abc", "xyz", "mno"], temperature=0, max_tokens=40)
    assert out[0][0].text == ALPHA[3:]
    assert out[1][0].text == ALPHA[:23]
    assert out[2][0].text == ALPHA[15:] + ALPHA[:12]
    assert all(g[0].finish_reason == "stop" and g[0].stop is None for g in out)  # ended on <|eot|>


def test_kv_cache_equals_recomputation(trained):
    lm, _ = trained
    prompts = ["abc", "q", "hijklm", ""]
    a = lm.generate(prompts, n=2, temperature=1.0, max_tokens=30, seed=3)
    b = lm.generate(prompts, n=2, temperature=1.0, max_tokens=30, seed=3, use_cache=False)
    for ga, gb in zip(a, b):
        for x, y in zip(ga, gb):
            assert x.text == y.text
            np.testing.assert_allclose(x.token_logprobs, y.token_logprobs, atol=1e-4)


def test_batched_equals_one_by_one(trained):
    lm, _ = trained
    prompts = ["abc", "vwxyzab", "k", "rstu"]
    batched = lm.generate(prompts, temperature=0, max_tokens=25)
    for p, g in zip(prompts, batched):
        single = lm.generate([p], temperature=0, max_tokens=25)[0][0]
        assert single.text == g[0].text
        np.testing.assert_allclose(single.token_logprobs, g[0].token_logprobs, atol=1e-4)


def test_logprobs_agree_with_next_token_logits(trained):
    lm, _ = trained
    prompts, conts = ["abc", "xy", ""], ["defg", "za", "mnop"]
    lps = lm.logprobs(prompts, conts)
    assert [len(x) for x in lps] == [4, 2, 4]
    for p, c, lp in zip(prompts, conts, lps):
        for k, ch in enumerate(c):
            logits = lm.next_token_logits([p + c[:k]])[0]
            ref = torch.log_softmax(torch.tensor(logits, dtype=torch.float64), -1)[lm.tokenizer.encode(ch)[0]]
            assert abs(lp[k] - float(ref)) < 1e-4


def test_greedy_token_logprobs_match_scoring(trained):
    lm, _ = trained
    g = lm.generate(["abc"], temperature=0, max_tokens=40)[0][0]
    lp = lm.logprobs(["abc"], [g.text + "<|eot|>"])[0]
    np.testing.assert_allclose(g.token_logprobs, lp, atol=1e-4)


def test_stop_strings(trained):
    lm, _ = trained
    g = lm.generate(["abc"], temperature=0, max_tokens=40, stop=["xyz", "kl"])[0][0]
    assert g.text == "defghij" and g.stop == "kl" and g.finish_reason == "stop"
    g = lm.generate(["abc"], temperature=0, max_tokens=5)[0][0]
    assert g.text == "defgh" and g.finish_reason == "length" and len(g.token_logprobs) == 5


def test_sampling_seeded_and_shapes(trained):
    lm, _ = trained
    a = lm.generate(["ab", "cd"], n=3, temperature=1.5, max_tokens=10, seed=7)
    b = lm.generate(["ab", "cd"], n=3, temperature=1.5, max_tokens=10, seed=7)
    assert [[g.text for g in r] for r in a] == [[g.text for g in r] for r in b]
    assert len(a) == 2 and all(len(r) == 3 for r in a)
    tiny_p = lm.generate(["ab"], n=2, temperature=1.0, top_p=1e-6, max_tokens=10, seed=1)[0]
    greedy = lm.generate(["ab"], temperature=0, max_tokens=10)[0][0]
    assert all(g.text == greedy.text for g in tiny_p)


def test_hidden_states_and_module(trained):
    lm, _ = trained
    h = lm.hidden_states(["abc", "x"])
    assert h.shape == (2, 48)
    idx = torch.tensor([[lm.tokenizer.eot_id, *lm.tokenizer.encode("abc")]])
    logits, hid = lm.module(idx, return_hidden=True)
    np.testing.assert_allclose(hid[0, -1].detach().numpy(), h[0], atol=1e-5)
    np.testing.assert_allclose(logits[0, -1].detach().numpy(), lm.next_token_logits(["abc"])[0], atol=1e-5)


def test_save_load_roundtrip(trained, tmp_path):
    lm, _ = trained
    lm.save(tmp_path / "m")
    back = TinyGPT.load(tmp_path / "m")
    assert back.config == lm.config and back.num_parameters() == lm.num_parameters()
    np.testing.assert_array_equal(back.next_token_logits(["abc"]), lm.next_token_logits(["abc"]))
    with pytest.raises(FileNotFoundError, match="TinyGPT.save"):
        TinyGPT.load(tmp_path / "missing")


def test_prompt_masking_and_windows():
    tok = CharTokenizer.from_texts(["0123456789"])
    lm = TinyGPT(TinyGPTConfig(n_layer=1, n_head=1, n_embd=8, block_size=16), tok)
    ws, ms = lm._windows(["0123"], [3])
    assert ws == [[tok.eot_id, *tok.encode("0123"), tok.eot_id]]
    assert ms == [[False, False, False, True, True]]  # only "3" and the closing <|eot|> are targets
    short = TinyGPT(TinyGPTConfig(n_layer=1, n_head=1, n_embd=8, block_size=4), tok)
    ws, ms = short._windows(["0123456789"], [3])
    assert len(ws) > 1 and all(len(w) <= 5 and len(m) == len(w) - 1 for w, m in zip(ws, ms))
    trained_targets = {w[j + 1] for w, m in zip(ws, ms) for j in range(len(m)) if m[j]}  # digits are unique
    assert trained_targets == set(tok.encode("3456789")) | {tok.eot_id}
    losses = short.fit(["0123456789"] * 4, steps=3, batch_size=2, prompt_chars=[3] * 4, progress=False)
    assert len(losses) == 3 and all(np.isfinite(losses))


def test_bad_inputs():
    tok = CharTokenizer.from_texts(["ab"])
    with pytest.raises(ValueError, match="n_embd"):
        TinyGPTConfig(n_embd=10, n_head=3)
    with pytest.raises(TypeError, match="config must be a TinyGPTConfig"):
        TinyGPT({"n_layer": 1}, tok)
    lm = TinyGPT(TinyGPTConfig(n_layer=1, n_head=1, n_embd=8, block_size=16), tok)
    with pytest.raises(ValueError, match="max_tokens must be < block_size"):
        lm.generate(["a"], max_tokens=16)
    with pytest.raises(ValueError, match="temperature"):
        lm.generate(["a"], temperature=-1)
    with pytest.raises(ValueError, match="n must be"):
        lm.generate(["a"], n=0)
    with pytest.raises(TypeError, match=r"prompts\[1\] must be a string"):
        lm.generate(["a", 1])
    with pytest.raises(ValueError, match="same length"):
        lm.logprobs(["a"], ["b", "c"])
    with pytest.raises(ValueError, match="prompt_chars"):
        lm.fit(["ab"], steps=1, prompt_chars=[5], progress=False)
    with pytest.warns(UserWarning, match="keeping the last"):
        lm.generate(["ab" * 20], max_tokens=2)


def test_kv_cache_fork_rows_equals_separate_prefill(trained):
    from icml25.llm.tiny_module import KVCache

    lm, _ = trained
    module, tok = lm.module, lm.tokenizer
    prompts = torch.tensor([tok.encode("abcd"), tok.encode("mnop")])
    cache = KVCache(lm.config, 2, 8, torch.float32)
    with torch.no_grad():
        module(prompts, cache=cache, last_only=True)
        cache.select_rows(torch.tensor([0, 0, 1, 1, 1]))  # prefill once, fork 2 + 3 samples
        nxt = torch.tensor([tok.encode("e"), tok.encode("x"), tok.encode("q"), tok.encode("a"), tok.encode("z")])
        forked = module(nxt, cache=cache, last_only=True)[:, -1]
        full = torch.cat([prompts[[0, 0, 1, 1, 1]], nxt], dim=1)
        ref = module(full, last_only=True)[:, -1]
    torch.testing.assert_close(forked, ref, atol=1e-5, rtol=1e-5)


def test_init_and_tying_options(tmp_path):
    """``init`` / ``tie_embeddings``: the defaults are GPT-2's; the options change exactly what they claim."""
    tok = CharTokenizer.from_texts(TEXTS)
    kw = {"n_layer": 2, "n_head": 2, "n_embd": 64, "block_size": 32}
    default = TinyGPT(TinyGPTConfig(**kw), tok, seed=0)
    assert (default.config.init, default.config.tie_embeddings) == ("gpt2", True)
    explicit = TinyGPT(TinyGPTConfig(**kw, init="gpt2", tie_embeddings=True), tok, seed=0)
    for a, b in zip(default.module.state_dict().values(), explicit.module.state_dict().values()):
        assert torch.equal(a, b)
    m = default.module
    assert m.lm_head.weight is m.wte.weight
    # GPT-2 statistics: N(0, 0.02) everywhere, N(0, 0.02 / sqrt(2 n_layer)) on the residual output projections
    assert float(m.wte.weight.std()) == pytest.approx(0.02, rel=0.1)
    assert float(m.blocks[0].attn.c_attn.weight.std()) == pytest.approx(0.02, rel=0.1)
    assert float(m.blocks[0].attn.c_proj.weight.std()) == pytest.approx(0.02 / 2.0, rel=0.1)

    torch_init = TinyGPT(TinyGPTConfig(**kw, init="torch", tie_embeddings=False), tok, seed=0)
    t = torch_init.module
    assert t.lm_head.weight is not t.wte.weight
    assert torch_init.num_parameters() == default.num_parameters() + tok.vocab_size * 64
    # PyTorch defaults: nn.Embedding N(0, 1); nn.Linear U(-1/sqrt(fan_in), 1/sqrt(fan_in)), std 1/sqrt(3 fan_in)
    assert float(t.wte.weight.std()) == pytest.approx(1.0, rel=0.15)
    w = t.blocks[0].attn.c_attn.weight
    assert float(w.abs().max()) <= 1 / np.sqrt(64) + 1e-7
    assert float(w.std()) == pytest.approx(1 / np.sqrt(3 * 64), rel=0.1)
    assert float(t.blocks[0].mlp[2].weight.abs().max()) <= 1 / np.sqrt(256) + 1e-7
    assert float(t.lm_head.weight.abs().max()) <= 1 / np.sqrt(64) + 1e-7  # its own Linear init, not the embedding
    # untied: training changes the two matrices independently
    losses = torch_init.fit(TEXTS, steps=3, batch_size=4, progress=False)
    assert all(np.isfinite(losses)) and not torch.equal(t.lm_head.weight, t.wte.weight)

    torch_init.save(tmp_path / "m")
    back = TinyGPT.load(tmp_path / "m")
    assert (back.config.init, back.config.tie_embeddings) == ("torch", False) and back.config == torch_init.config
    assert back.module.lm_head.weight is not back.module.wte.weight
    np.testing.assert_array_equal(back.next_token_logits(["abc"]), torch_init.next_token_logits(["abc"]))
    with pytest.raises(ValueError, match="init must be"):
        TinyGPTConfig(init="xavier")
    with pytest.raises(TypeError, match="tie_embeddings must be a bool"):
        TinyGPTConfig(tie_embeddings="no")
