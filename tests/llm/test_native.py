"""The native decoder (icml25.llm.native) and HFModel's native backend against transformers: tiny random Llama,
Qwen2 and Gemma 3 folders (left padding, sliding windows, grouped-query attention, biases, untied output layers),
the fast tokenizer, the safetensors reader/writer, and the two real pretrained models."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from icml25.llm import HFModel  # noqa: E402
from icml25.llm.native import (  # noqa: E402
    Int4Weight,
    Int8Weight,
    NativeDecoder,
    check_quantize,
    native_order,
    quantize_int4,
    read_safetensors,
    unsupported_reason,
    write_safetensors,
)

ARCHS = ["llama", "qwen2", "gemma3_text"]
PROMPTS = ["the quick brown fox jumps", "a", "France -> Paris\nJapan ->", "3 + 4 = 7 and the lazy dog saves nine"]


@pytest.fixture(scope="module", params=ARCHS)
def tiny(request, tmp_path_factory, tiny_models):
    return tiny_models.save_random_decoder(tmp_path_factory.mktemp(request.param), request.param)


def _ref(folder):
    return transformers.AutoModelForCausalLM.from_pretrained(folder).eval()


def _padded(tok, texts):
    enc = tok(texts, padding=True, padding_side="left", return_tensors="pt")
    mask = enc["attention_mask"]
    return enc["input_ids"], mask, (mask.cumsum(-1) - 1).clamp(min=0)


def test_native_forward_equals_transformers(tiny):
    nat, ref = NativeDecoder.from_folder(tiny), _ref(tiny)
    tok = transformers.AutoTokenizer.from_pretrained(tiny)
    assert nat.num_parameters() == sum(p.numel() for p in ref.parameters())
    ids, mask, pos = _padded(tok, PROMPTS)  # rows longer than Gemma's sliding window (4) and left padding
    with torch.inference_mode():
        r = ref(input_ids=ids, attention_mask=mask, position_ids=pos, output_hidden_states=True)
        logits = nat.forward(ids, pos, valid=mask.bool(), keep=None)
        hidden = nat.forward(ids, pos, valid=mask.bool(), keep=None, hidden=True)
    m = mask.bool()
    assert float((logits - r.logits)[m].abs().max()) < 1e-5
    assert float((hidden - r.hidden_states[-1])[m].abs().max()) < 1e-5
    # the KV cache: prefill a part, then one token at a time, equals one full pass
    one = ids[3:4, mask[3].argmax():]
    T = one.shape[1]
    with torch.inference_mode():
        full = ref(input_ids=one).logits
        cache = nat.new_cache(1, 4)  # too small on purpose: it grows
        parts = [nat.forward(one[:, :3], torch.arange(3)[None], cache=cache, keep=None)]
        parts += [nat.forward(one[:, j:j + 1], torch.tensor([[j]]), cache=cache) for j in range(3, T)]
    assert float((torch.cat(parts, 1) - full).abs().max()) < 1e-5


def test_shared_prefix_is_run_once_and_equals_separate_rows(tiny):
    from icml25.llm.runners import NativeRunner

    nat = NativeDecoder.from_folder(tiny)
    run = NativeRunner(nat, pad_id=0)
    base = list(range(5, 17))  # 12 shared tokens, then different continuations
    rows = [base + [20, 21, 22], base + [30], base + [40, 41]]
    with torch.inference_mode():
        shared = run.logits(rows, keep=2)
        plain = run.logits(rows, keep=2, share=False)
        first, st = run.prefill(rows, extra=3, keep=1)
        plain_first, _ = run.prefill(rows, extra=3, keep=1, share=False)
    window = min([w for w in nat.cfg.window if w] or [10**9])
    if window >= 15:
        assert (run._shared(rows, 1, True), run._shared(rows, 2, True)) == (12, 11)  # kept positions stay out
    else:  # Gemma's tiny sliding window (4): the padding between prefix and rows would shift it; not shared
        assert run._shared(rows, 1, True) == 0
    assert float((shared - plain).abs().max()) < 1e-5
    assert float((first - plain_first).abs().max()) < 1e-5
    with torch.inference_mode():
        run.select(st, torch.tensor([0, 0, 2]))
        nxt = run.step(st, torch.tensor([[7], [8], [9]]))
        ref = run.logits([rows[0] + [7], rows[0] + [8], rows[2] + [9]], keep=1, share=False)[:, -1]
    assert float((nxt - ref).abs().max()) < 1e-5


def test_hfmodel_native_and_transformers_backends_agree(tiny):
    a, b = HFModel(tiny), HFModel(tiny, backend="transformers")
    assert (a.backend, b.backend) == ("native", "transformers") and a.num_parameters() == b.num_parameters()
    ga = a.generate(PROMPTS, n=2, temperature=0, max_tokens=8)
    gb = b.generate(PROMPTS, n=2, temperature=0, max_tokens=8)
    for ra, rb in zip(ga, gb):
        assert [g.text for g in ra] == [g.text for g in rb]
        np.testing.assert_allclose(ra[0].token_logprobs, rb[0].token_logprobs, atol=1e-4)
    conts = [" fox", " stitch in time", " Tokyo", " 7"]
    for fast in (True, False):
        for x, y in zip(a.logprobs(PROMPTS, conts, fast=fast), b.logprobs(PROMPTS, conts, fast=fast)):
            np.testing.assert_allclose(x, y, atol=1e-4)
    np.testing.assert_allclose(a.next_token_logits(PROMPTS), b.next_token_logits(PROMPTS), atol=1e-4)
    np.testing.assert_allclose(a.hidden_states(PROMPTS), b.hidden_states(PROMPTS), atol=1e-4)
    # sampled: same seed, same samples (logits agree to float rounding)
    sa = a.generate(PROMPTS[:2], n=4, temperature=1.0, max_tokens=6, seed=3)
    sb = b.generate(PROMPTS[:2], n=4, temperature=1.0, max_tokens=6, seed=3)
    assert [[g.text for g in r] for r in sa] == [[g.text for g in r] for r in sb]


def test_n_samples_share_one_prefill_and_equal_repeated_prompts(tiny):
    lm = HFModel(tiny)
    calls = []
    real = lm._engine.prefill

    def counting(rows, *args, **kw):
        calls.append(len(rows))
        return real(rows, *args, **kw)

    lm._engine.prefill = counting
    shared = lm.generate(PROMPTS[:2], n=3, temperature=0.8, max_tokens=6, seed=1)
    assert calls == [2]  # two prompts prefilled once each, not 6 rows
    repeated = lm.generate([PROMPTS[0]] * 3 + [PROMPTS[1]] * 3, n=1, temperature=0, max_tokens=6)
    greedy = lm.generate(PROMPTS[:2], n=3, temperature=0, max_tokens=6)
    assert [g[0].text for g in repeated] == [g.text for r in greedy for g in r]
    assert len(shared) == 2 and all(len(r) == 3 for r in shared)


def test_expand_children_from_text_and_token_prefixes(tiny):
    lm = HFModel(tiny)
    kids = lm.expand([PROMPTS[0], PROMPTS[2], PROMPTS[0]], n_children=2, max_tokens=5, temperature=0)
    ref = lm.generate([PROMPTS[0], PROMPTS[2]], temperature=0, max_tokens=5)
    assert [c.text for c in kids[0]] == [ref[0][0].text] * 2 and kids[2][0].text == ref[0][0].text
    assert kids[1][0].text == ref[1][0].text
    for c in kids[0]:
        assert c.token_ids is not None and lm._decode(c.token_ids) == c.text
    ids = lm._prompt_ids(PROMPTS[0])
    by_ids = lm.expand([ids], n_children=1, max_tokens=5, temperature=0)
    assert by_ids[0][0].text == ref[0][0].text
    # children of a child: the tree grows by token ids
    deeper = lm.expand([ids + kids[0][0].token_ids], max_tokens=3, temperature=0)
    assert deeper[0][0].finish_reason in ("stop", "length")
    with pytest.raises(TypeError, match="prefixes"):
        lm.expand("abc")
    with pytest.raises(ValueError, match="token"):
        lm.expand([[10**9]])


def test_model_access_switches_to_transformers_and_sees_hooks(tiny):
    lm = HFModel(tiny)
    before = lm.next_token_logits(["the quick"])
    net = lm.model  # builds the transformers network; from now on it runs the model
    assert lm.backend == "transformers"
    np.testing.assert_allclose(lm.next_token_logits(["the quick"]), before, atol=1e-4)
    handle = net.lm_head.register_forward_hook(lambda mod, inp, out: out * 0)
    try:
        assert np.abs(lm.next_token_logits(["the quick"])).max() == 0
    finally:
        handle.remove()
    lm.model = _ref(tiny)  # assignable, as before
    np.testing.assert_allclose(lm.next_token_logits(["the quick"]), before, atol=1e-4)


def test_fast_tokenizer_equals_transformers_only_where_verified(tiny):
    from icml25.llm.fast_tokenizer import load_fast_tokenizer, verify_fast_tokenizer

    fast = load_fast_tokenizer(tiny)
    tok = transformers.AutoTokenizer.from_pretrained(tiny)
    assert fast is not None
    if tiny.name.startswith("qwen2"):
        # transformers' Qwen2Tokenizer replaces the pre-tokeniser of tokenizer.json: not the same tokenizer, so it
        # is not used unless verified or asked for
        assert not verify_fast_tokenizer(tiny)
        assert HFModel(tiny)._fast is None and HFModel(tiny, fast_tokenizer=True)._fast is not None
        return
    assert verify_fast_tokenizer(tiny)
    assert (fast.bos_token_id, fast.eos_token_id, fast.pad_token_id) == \
        (tok.bos_token_id, tok.eos_token_id, tok.pad_token_id)
    for text in PROMPTS + ["", "  two  spaces\n\ttab", "<tag>x<eos> <pad>", "café 日本"]:
        for special in (True, False):
            ids = tok(text, add_special_tokens=special)["input_ids"]
            assert fast.encode(text, special) == ids
            for skip in (True, False):
                assert fast.decode(ids, skip) == tok.decode(ids, skip_special_tokens=skip)
    assert {tok.convert_tokens_to_ids("<tag>"), tok.eos_token_id} <= set(fast.special_text)


def test_unsupported_architectures_fall_back_to_transformers(tmp_path):
    from icml25.llm import save_random_gpt2

    d = save_random_gpt2(tmp_path / "gpt2", ["a b c abc"] * 4)
    assert "gpt2" in unsupported_reason(d)
    assert HFModel(d).backend == "transformers"
    with pytest.raises(ValueError, match="backend='native' cannot run.*gpt2"):
        HFModel(d, backend="native")
    with pytest.raises(ValueError, match="backend must be one of auto, native, transformers"):
        HFModel(d, backend="fast")


def test_safetensors_writer_order_and_zero_copy_fused_views(tmp_path, tiny):
    from safetensors.torch import load_file

    tensors = {"b": torch.randn(3, 4), "a": torch.arange(5), "c": torch.randn(2).bfloat16(), "e": torch.zeros(0)}
    write_safetensors(tmp_path / "x.safetensors", tensors)
    for got in (load_file(tmp_path / "x.safetensors"), read_safetensors(tmp_path / "x.safetensors")):
        assert all(torch.equal(got[k], v) for k, v in tensors.items())
    # a checkpoint in native order maps q/k/v and gate/up as single matrices without a copy
    sd = load_file(tiny / "model.safetensors")
    write_safetensors(tmp_path / "model.safetensors", {k: sd[k] for k in native_order(list(sd))})
    (tmp_path / "config.json").write_text((tiny / "config.json").read_text())
    nat = NativeDecoder.from_folder(tmp_path)
    L = nat.layers[0]
    assert L.wqkv.data_ptr() == L.wq.data_ptr() and L.wgu.data_ptr() == L.wg.data_ptr()
    ref = NativeDecoder.from_folder(tiny)
    ids = torch.tensor([[1, 5, 9, 12]])
    with torch.inference_mode():
        a, b = nat.forward(ids, torch.arange(4)[None]), ref.forward(ids, torch.arange(4)[None])
    assert float((a - b).abs().max()) < 1e-6


# ---------------------------------------------------------------- the real models (session fixtures)
@pytest.mark.parametrize("name", ["smollm2-135m-instruct",
                                  pytest.param("gemma-3-270m", marks=pytest.mark.long)])  # Gemma: ~15-140 s
def test_real_models_native_equals_transformers(name, request, transformers_reference):
    lm = request.getfixturevalue("smollm2" if name.startswith("smollm2") else "gemma")
    tok, ref = transformers_reference(name)
    texts = ["France -> Paris\nJapan -> Tokyo\nItaly -> Rome\nGermany ->", "The cat sat on the",
             "<|im_start|>user\nHi<|im_end|>\n", "3 + 4 = 7\n10 + 5 = 15\n8 + 6 ="]
    for t in texts + ["", " x  y", "café"]:  # the Rust tokenizer gives transformers' ids and text
        assert lm._prompt_ids(t) == (tok(t)["input_ids"] or [lm._start_id])
        assert lm._cont_ids(t) == tok(t, add_special_tokens=False)["input_ids"]
    assert lm.pad_id == tok.pad_token_id and lm.eos_ids == [ref.generation_config.eos_token_id]
    ids, mask, pos = _padded(tok, texts)
    with torch.inference_mode():
        want = ref(input_ids=ids, attention_mask=mask, position_ids=pos).logits
        got = lm._native.forward(ids, pos, valid=mask.bool(), keep=None) if lm._native is not None else None
    if got is not None:  # (another test may have switched the shared fixture to transformers)
        assert float((got - want)[mask.bool()].abs().max()) < 1e-4
    enc = tok(texts[0], return_tensors="pt")
    out = ref.generate(**enc, max_new_tokens=12, do_sample=False, pad_token_id=lm.pad_id)[0, enc["input_ids"].shape[1]:]
    new = out.tolist()
    for e in lm.eos_ids:
        new = new[:new.index(e)] if e in new else new
    assert lm.generate([texts[0]], temperature=0, max_tokens=12)[0][0].text == tok.decode(new,
                                                                                         skip_special_tokens=True)


@pytest.mark.parametrize("mode", ["int8", "int4"])
def test_quantisation_is_close_and_only_native(tiny, mode):
    f, q = HFModel(tiny), HFModel(tiny, quantize=mode)
    L = q._native.layers[0]
    if mode == "int8":
        assert type(L.wqkv) is Int8Weight and L.wqkv.q.dtype == torch.int8
    else:
        assert type(L.wqkv) is Int4Weight and L.wqkv.packed.dtype == torch.uint8
    assert L.wq is None and L.wg is None  # no float32 projection kept
    assert q.num_parameters() == f.num_parameters()
    conts = [" fox", " stitch in time", " Tokyo", " 7"]
    # approximate: int8 per-row or int4 per-32-group weights, bfloat16 activations in the decoding steps
    tol = 0.15 if mode == "int8" else 0.3
    for a, b in zip(f.logprobs(PROMPTS, conts), q.logprobs(PROMPTS, conts)):
        np.testing.assert_allclose(a, b, atol=tol)
    g = q.generate(PROMPTS[:2], n=2, temperature=0, max_tokens=5)
    assert len(g) == 2 and all(len(r) == 2 for r in g)
    with pytest.raises(ValueError, match="needs the native backend"):
        HFModel(tiny, backend="transformers", quantize=mode)


@pytest.mark.parametrize("bad", ["int3", "INT8", 4, "", "float32"])
def test_bad_quantize_values_name_the_allowed_ones(tiny, bad):
    with pytest.raises(ValueError, match=r"quantize must be None, 'int8' or 'int4', got"):
        HFModel(tiny, quantize=bad)
    with pytest.raises(ValueError, match=r"quantize must be None, 'int8' or 'int4'"):
        NativeDecoder.from_folder(tiny, quantize=bad)
    with pytest.raises(ValueError, match="CPU only"):
        check_quantize("int4", "cuda")
    check_quantize("int4", "cpu")  # this torch has the kernel


def test_int4_matmul_equals_the_dequantised_weight():
    g = torch.Generator().manual_seed(0)
    w = torch.randn(200, 96, generator=g)  # 200 rows: padded to 256 inside
    q = Int4Weight(w)
    W = q.dequantize()
    assert q.shape == w.shape and W.shape == w.shape
    # 4-bit per group of 32: within half a step (range / 30) of the original, and not a copy of it
    step = (w.view(200, 3, 32).amax(-1) - w.view(200, 3, 32).amin(-1)) / 15
    err = (W - w).abs().view(200, 3, 32).amax(-1)
    assert bool((err <= 0.5 * step * 1.02 + 1e-6).all()) and float(err.max()) > 1e-3
    for rows in (1, 3, Int4Weight.MAX_ROWS, Int4Weight.MAX_ROWS + 1, 100):
        x = torch.randn(rows, 96, generator=g)
        y = q(x)
        assert y.shape == (rows, 200) and y.dtype == torch.float32
        if rows <= Int4Weight.MAX_ROWS:  # the kernel: bfloat16 activations, float32 sums, a bfloat16 result
            want = x.bfloat16().float() @ W.T
            torch.testing.assert_close(y, want, rtol=2 ** -7, atol=1e-4)
        else:  # the de-quantised weight in float32
            torch.testing.assert_close(y, x @ W.T, rtol=1e-5, atol=1e-5)
    b = torch.randn(200, generator=g)
    x = torch.randn(2, 5, 96, generator=g)
    torch.testing.assert_close(q(x, b), q(x) + b)
    with pytest.raises(ValueError, match="multiple of group"):
        Int4Weight(torch.randn(64, 40))


def test_int4_round_trips_an_exactly_representable_tensor():
    g = torch.Generator().manual_seed(1)
    n, k = 192, 128
    codes = torch.randint(0, 16, (n, k // 32, 32), generator=g)
    codes[..., 0], codes[..., 31] = 0, 15  # every group spans the full range, as GGUF Q4_1 blocks do
    # scales, minima and offsets m + 8 d: multiples of 2^-8 below 1 in magnitude, exact in bfloat16
    d = torch.randint(1, 16, (n, k // 32, 1), generator=g).float() * 2.0 ** -8
    m = -torch.randint(0, 16, (n, k // 32, 1), generator=g).float() * 2.0 ** -6
    w = (codes * d + m).view(n, k)
    c, s, z = quantize_int4(w)
    assert torch.equal(c.long().view(n, k // 32, 32), codes)
    assert torch.equal(s.float(), d[..., 0]) and torch.equal(z.float(), (m + 8 * d)[..., 0])
    q = Int4Weight(w)
    assert torch.equal(q.dequantize(), w) and torch.equal(q.codes().long(), codes.view(n, k))
    w2 = w.clone()
    w2[5, 7] += 2.0 ** -12  # off the grid: no longer exact
    assert not torch.equal(Int4Weight(w2).dequantize(), w2)
    # a grid of fewer steps (codes 0..11 in every group, as GGUF Q4_K sub-blocks may have) is kept, not re-quantised
    short = torch.randint(0, 12, (n, k // 32, 32), generator=g)
    short[..., 0], short[..., 31] = 0, 11
    w3 = (short * d + m).view(n, k)
    c3, s3, _ = quantize_int4(w3)
    assert torch.equal(c3.long().view(n, k // 32, 32), short) and torch.equal(s3.float(), d[..., 0])
    assert torch.equal(Int4Weight(w3).dequantize(), w3)
    assert not torch.equal(quantize_int4(w3, grid=False)[0].long().view(n, k // 32, 32), short)


def test_int4_decoding_logits_are_close_to_float32(tiny):
    f = NativeDecoder.from_folder(tiny)
    q = NativeDecoder.from_folder(tiny, quantize="int4")
    assert type(q.lm_head_q) is Int4Weight and q.lm_head_q.shape == f.lm_head.shape
    idx = torch.randint(3, f.cfg.vocab_size, (2, 9), generator=torch.Generator().manual_seed(2))
    pos = torch.arange(9).expand(2, 9)
    with torch.inference_mode():
        cf, cq = f.new_cache(2, 16), q.new_cache(2, 16)
        a, b = f.forward(idx[:, :8], pos[:, :8], cache=cf), q.forward(idx[:, :8], pos[:, :8], cache=cq)
        steps = [(a, b)]
        for t in (8,):  # one decoding step (2 rows: the int4 kernel)
            steps.append((f.forward(idx[:, t:t + 1], pos[:, t:t + 1], cache=cf),
                          q.forward(idx[:, t:t + 1], pos[:, t:t + 1], cache=cq)))
    for x, y in steps:
        lx, ly = torch.log_softmax(x, -1), torch.log_softmax(y, -1)
        assert float((lx - ly).abs().max()) < 0.3
        assert float((lx - ly).abs().mean()) < 0.05
        assert not torch.equal(x, y)  # quantised: close, not the same numbers


def test_score_continuations_equals_teacher_forcing_on_both_backends_with_hooks(tiny):
    p, conts = "France -> Paris\nJapan ->", [" Tokyo", " a stitch in time", " x"]
    v = torch.randn(32, generator=torch.Generator().manual_seed(0))

    def put(h):
        h = h.clone()
        h[:, -1] = v
        return h

    hooked = {}
    for backend in ("native", "transformers"):
        lm = HFModel(tiny, backend=backend)
        got = lm.score_continuations(p, conts)
        for g, r in zip(got, lm.logprobs([p] * 3, conts)):
            np.testing.assert_allclose(g, r, atol=1e-4)
        ids = lm.score_continuations(lm._prompt_ids(p), [lm._cont_ids(c) for c in conts])
        for g, r in zip(ids, got):
            np.testing.assert_allclose(g, r, atol=1e-9)
        hooked[backend] = lm.score_continuations(p, conts, hook=(2, put))  # patch decoder layer 2's last position
        assert abs(hooked[backend][0][0] - got[0][0]) > 1e-3
        with pytest.raises(ValueError, match="hook must be"):
            lm.score_continuations(p, conts, hook=(99, put))
        with pytest.raises(ValueError, match="has no tokens"):
            lm.score_continuations(p, [" x", ""])
    for a, b in zip(hooked["native"], hooked["transformers"]):
        np.testing.assert_allclose(a, b, atol=1e-4)


def test_next_token_logprobs_oracle_shares_prefixes_and_extends_caches(tiny):
    from icml25.llm import NextTokenLogprobs

    base = list(range(3, 20))
    batch = [base + [30 + i, 40 + i, 50] for i in range(6)]  # more rows than `incremental`: shared-prefix path

    for model in (HFModel(tiny), HFModel(tiny, backend="transformers"), _ref(tiny)):
        run = model._engine if isinstance(model, HFModel) else None

        def plain(seq, model=model, run=run):
            with torch.inference_mode():
                if run is None:
                    x = model(torch.tensor([seq])).logits[0, -1].double()
                else:
                    x = run.logits([seq], keep=1, share=False)[0, -1].double()
                return torch.log_softmax(x, -1).numpy()

        oracle = NextTokenLogprobs(model, batch_size=4, incremental=2)
        got = oracle(batch)
        for r, s in enumerate(batch):
            np.testing.assert_allclose(got[r], plain(s), atol=1e-4)
        seq = [5, 6, 7]
        for t in range(4):  # one sequence at a time: continues its stored KV cache
            seq = seq + [11 + t]
            np.testing.assert_allclose(oracle([seq])[0], plain(seq), atol=1e-4)
        assert len(oracle._inc) <= 2
    with pytest.raises(TypeError, match="HFModel or a transformers causal LM"):
        NextTokenLogprobs(object())


def test_inverse_cdf_sampler_draws_the_softmax_distribution():
    from icml25.llm.sampling import sample_tokens

    g = torch.Generator().manual_seed(0)
    logits = torch.full((1, 1300), -1e9)  # three live tokens in different 512-blocks, one in the padded last block
    logits[0, [5, 700, 1299]] = torch.log(torch.tensor([0.2, 0.5, 0.3]))
    rows = logits.repeat(40000, 1)
    tok, lp = sample_tokens(rows, 1.0, 1.0, g, method="cdf")
    freq = torch.bincount(tok, minlength=1300)[[5, 700, 1299]].double() / len(tok)
    assert torch.allclose(freq, torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64), atol=0.01)
    assert set(tok.tolist()) == {5, 700, 1299}
    np.testing.assert_allclose(lp.numpy(), np.log([0.2, 0.5, 0.3])[[{5: 0, 700: 1, 1299: 2}[t] for t in tok.tolist()]],
                               atol=1e-5)
    top, _ = sample_tokens(rows[:5000], 1.0, 0.6, g, method="cdf")  # nucleus: only the 0.5 and 0.3 tokens
    assert set(top.tolist()) == {700, 1299}
    hot, _ = sample_tokens(rows[:5000], 0.5, 1.0, g, method="cdf")  # temperature 0.5: p^2 renormalised
    f = torch.bincount(hot, minlength=1300)[[5, 700, 1299]].double() / 5000
    want = torch.tensor([0.04, 0.25, 0.09], dtype=torch.float64) / 0.38
    assert torch.allclose(f, want, atol=0.03)
