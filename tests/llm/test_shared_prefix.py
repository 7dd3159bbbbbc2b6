"""Shared-prefix sampling and scoring against per-sequence decoding and a full forward pass."""

import numpy as np
import pytest
import torch

from icml25.llm import CharTokenizer, TinyGPT, TinyGPTConfig
from icml25.llm.shared_prefix import prefix_hidden_states, sample_shared_prefix

STOP = "<|stop|>"


def _lm(seed: int = 0) -> TinyGPT:
    tok = CharTokenizer.from_texts(["abcdefgh ", "xyz"], extra=[STOP])
    return TinyGPT(TinyGPTConfig(n_layer=2, n_head=2, n_embd=16, block_size=48), tok, seed=seed)


def test_greedy_equals_generate_and_seeds_reproduce():
    torch.set_num_threads(1)
    lm = _lm()
    prompts = ["abc", "hgfedcba", "x"]  # different lengths: left padding
    stop_id = lm.tokenizer.stoi[STOP]
    fast = sample_shared_prefix(lm, prompts, n=2, temperature=0.0, max_tokens=10, stop_ids=[stop_id])
    ref = lm.generate(prompts, n=2, temperature=0.0, max_tokens=10, stop=[STOP])
    for rows, refs in zip(fast, ref):
        for (ids, stop), g in zip(rows, refs):
            assert lm.tokenizer.decode(ids) == g.text
            assert (stop is not None) == (g.stop == STOP)
    a = sample_shared_prefix(lm, prompts, n=3, temperature=1.0, max_tokens=10, seed=4)
    assert a == sample_shared_prefix(lm, prompts, n=3, temperature=1.0, max_tokens=10, seed=4)
    assert all(len(r) == 3 for r in a)
    fresh = [sample_shared_prefix(lm, prompts, n=3, temperature=1.0, max_tokens=10) for _ in range(2)]
    assert fresh[0] != fresh[1]  # seed=None draws fresh entropy


def test_prefix_hidden_states_equal_a_full_forward_pass():
    torch.set_num_threads(1)
    lm = _lm(1)
    tok = lm.tokenizer
    prefixes = [[tok.eot_id, *tok.encode("abcdefgh abc")], [tok.eot_id, *tok.encode("xy")]]
    steps = [tok.encode("de"), tok.encode("z"), tok.encode("hhhhhhhhhhhhhhh"), tok.encode("a b")]
    row_of = [0, 0, 1, 1]
    h = prefix_hidden_states(lm.module, tok.pad_id, prefixes, row_of, steps).numpy()
    texts = [tok.decode(prefixes[r][1:] + s) for r, s in zip(row_of, steps)]
    np.testing.assert_allclose(h, lm.hidden_states(texts), atol=1e-5, rtol=1e-5)


def test_prefix_hidden_states_near_the_context_limit():
    lm = _lm(2)
    tok = lm.tokenizer
    long_prefix = [tok.eot_id, *tok.encode("abcdefgh" * 5 + "abcde")]  # 46 of 48 positions
    prefixes = [long_prefix, [tok.eot_id, *tok.encode("x")]]
    steps = [tok.encode("ab"), tok.encode("abcdefghabcdefgh")]
    h = prefix_hidden_states(lm.module, tok.pad_id, prefixes, [0, 1], steps).numpy()
    texts = [tok.decode(long_prefix[1:] + steps[0]), tok.decode(prefixes[1][1:] + steps[1])]
    np.testing.assert_allclose(h, lm.hidden_states(texts), atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="block_size"):
        prefix_hidden_states(lm.module, tok.pad_id, prefixes, [0], [tok.encode("abc")])
    with pytest.raises(ValueError, match="row_of"):
        prefix_hidden_states(lm.module, tok.pad_id, prefixes, [0, 1, 1], steps)


def test_expand_for_any_backend_equals_generate():
    from icml25.llm import expand

    tok = CharTokenizer.from_texts(["abcab cab"])
    lm = TinyGPT(TinyGPTConfig(n_layer=1, n_head=2, n_embd=16, block_size=32), tok, seed=0)
    kids = expand(lm, ["ab", "ca"], n_children=3, max_tokens=5, temperature=0)
    ref = lm.generate(["ab", "ca"], n=3, max_tokens=5, temperature=0)
    assert [[k.text for k in r] for r in kids] == [[g.text for g in r] for r in ref]
    sampled = expand(lm, ["ab"], n_children=4, max_tokens=5, temperature=1.0, seed=2)
    assert [k.text for k in sampled[0]] == [g.text for g in lm.generate(["ab"], n=4, max_tokens=5, seed=2)[0]]
    with pytest.raises(TypeError, match="token-id prefixes need HFModel"):
        expand(lm, [[1, 2]])
