"""Our KGW watermark against independent implementations: MarkLLM (PyPI ``markllm``, its KGW module) and the
transformers ``WatermarkLogitsProcessor`` (lm-watermarking's LeftHash). Under the matched seeding scheme the green
lists, the watermarked logits, the per-token green flags and the z-scores must be identical."""

from __future__ import annotations

import json

import numpy as np
import pytest

from icml25.demark import KGWWatermark, LocalLM, WatermarkedOracle

torch = pytest.importorskip("torch")

V = 5003  # a prime vocabulary size, so that the "mod |V|" reductions are not degenerate
KEY = 15485863  # MarkLLM's / lm-watermarking's default hash key


def _markllm_kgw(tmp_path, f_scheme: str, h: int, gamma: float = 0.5, delta: float = 2.0, key: int = KEY):
    kgw = pytest.importorskip("markllm.watermark.kgw.kgw")
    tc = pytest.importorskip("markllm.utils.transformers_config")
    cfg = tmp_path / f"KGW_{f_scheme}_{h}.json"
    cfg.write_text(json.dumps({"algorithm_name": "KGW", "gamma": gamma, "delta": delta, "hash_key": key,
                               "prefix_length": h, "z_threshold": 4.0, "f_scheme": f_scheme,
                               "window_scheme": "left"}))
    return kgw.KGW(str(cfg), tc.TransformersConfig(None, None, vocab_size=V, device="cpu"))


@pytest.mark.parametrize("f_scheme", ["time", "additive", "skip", "min"])
@pytest.mark.parametrize("h", [1, 2, 3])
def test_green_lists_and_z_equal_markllm(tmp_path, f_scheme: str, h: int) -> None:
    ref = _markllm_kgw(tmp_path, f_scheme, h)
    ours = KGWWatermark(V, gamma=0.5, delta=2.0, h=h, key=KEY, prf=f"markllm-{f_scheme}")
    rng = np.random.default_rng(100 * h + len(f_scheme))
    for _ in range(20):
        ctx = rng.integers(0, V, size=h + 2).tolist()
        theirs = np.sort(ref.utils.get_greenlist_ids(torch.tensor(ctx)).numpy())
        np.testing.assert_array_equal(ours.green_list(ctx), theirs)
    for _ in range(3):
        seq = rng.integers(0, V, size=80).tolist()
        z, flags = ref.utils.score_sequence(torch.tensor(seq))
        det = ours.detect(seq)  # MarkLLM scores every token after the first h (prompt_len = 0)
        assert det.z == pytest.approx(z, abs=1e-12)
        np.testing.assert_array_equal(ours.green_flags(seq), np.asarray(flags[h:]))


@pytest.mark.parametrize("f_scheme", ["time", "min"])
def test_watermarked_logits_equal_markllm_processor(tmp_path, f_scheme: str) -> None:
    ref = _markllm_kgw(tmp_path, f_scheme, 2, gamma=0.25, delta=1.5, key=12345)
    ours = KGWWatermark(V, gamma=0.25, delta=1.5, h=2, key=12345, prf=f"markllm-{f_scheme}")
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, V, (3, 6), generator=g)
    scores = torch.randn(3, V, generator=g, dtype=torch.float64)
    expect = ref.logits_processor(ids, scores.clone())
    torch.testing.assert_close(ours.as_logits_processor()(ids, scores.clone()), expect)


def test_watermarked_oracle_serves_markllm_processor_like_ours(tmp_path) -> None:
    """An outside LogitsProcessor (MarkLLM's) is accepted by WatermarkedOracle and serves what ours serves."""
    ref = _markllm_kgw(tmp_path, "time", 1)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Embedding(V, 8), torch.nn.Linear(8, V)).double()
    ours = KGWWatermark(V, gamma=0.5, delta=2.0, h=1, key=KEY, prf="markllm-time")
    batch = [[5, 77, 901], [4000, 12]]
    a = WatermarkedOracle(LocalLM(net, V), ref.logits_processor).topk_logprobs(batch, 20)
    b = WatermarkedOracle(LocalLM(net, V), ours).topk_logprobs(batch, 20)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_allclose(a[1], b[1], atol=1e-6)


def test_lmw_additive_equals_transformers_lefthash() -> None:
    lp = pytest.importorskip("transformers.generation.logits_process")
    ref = lp.WatermarkLogitsProcessor(vocab_size=V, device="cpu", greenlist_ratio=0.5, bias=2.0, hashing_key=KEY,
                                      seeding_scheme="lefthash", context_width=1)
    ours = KGWWatermark(V, gamma=0.5, delta=2.0, h=1, key=KEY, prf="lmw-additive")
    rng = np.random.default_rng(1)
    for _ in range(20):
        ctx = rng.integers(0, V, size=3).tolist()
        np.testing.assert_array_equal(ours.green_list(ctx), np.sort(ref._get_greenlist_ids(torch.tensor(ctx)).numpy()))
    ids = torch.as_tensor(rng.integers(0, V, size=(2, 4)))
    scores = torch.randn(2, V)
    torch.testing.assert_close(ours.as_logits_processor()(ids, scores.clone()), ref(ids, scores.clone()))


def test_lmw_multiplicative_wraps_like_torch_int64() -> None:
    """lm-watermarking multiplies the window as a torch int64 tensor (wrapping); our seed must do the same."""
    ours = KGWWatermark(262144, h=4, key=KEY, prf="lmw-multiplicative")
    w = [262000, 261999, 250000, 199999]  # the product overflows int64
    expect = (KEY * torch.tensor(w).prod().item()) % (2 ** 64 - 1)
    assert ours.seed(w) == expect


def test_callable_prf_and_seed_range() -> None:
    wm = KGWWatermark(101, h=2, key=9, prf=lambda key, w: key * (w[0] + 31 * w[1]))
    ref = torch.randperm(101, generator=torch.Generator().manual_seed(9 * (3 + 31 * 4)))[:50]
    np.testing.assert_array_equal(wm.green_list([3, 4]), np.sort(ref.numpy()))
    with pytest.raises(ValueError, match="seed"):
        KGWWatermark(101, h=1, prf=lambda key, w: -1).green_list([3])


def test_markllm_detector_scores_generated_tokens_like_ours() -> None:
    pytest.importorskip("markllm.watermark.kgw.kgw")
    from icml25.demark.markllm_detector import MarkLLMDetector

    wm = KGWWatermark(V, gamma=0.5, delta=2.0, h=3, key=77, prf="markllm-additive")
    det = MarkLLMDetector(wm)
    rng = np.random.default_rng(5)
    for prompt_len in (0, 2, 10):
        seq = rng.integers(0, V, size=60).tolist()
        a, b = det.detect(seq, prompt_len=prompt_len), wm.detect(seq, prompt_len=prompt_len)
        assert (a.n_green, a.n_scored) == (b.n_green, b.n_scored)
        assert a.z == pytest.approx(b.z, abs=1e-12) and a.p_value == pytest.approx(b.p_value, abs=1e-12)
    with pytest.raises(ValueError, match="markllm"):
        MarkLLMDetector(KGWWatermark(V, h=1))
