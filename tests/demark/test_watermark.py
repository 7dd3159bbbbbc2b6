"""KGW watermark: green lists against an independent re-implementation of the official PRF, the z-test against
its closed form, the logits processor and bad parameters."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from scipy.stats import norm

from icml25.demark import PRF_SCHEMES, KGWWatermark, kgw_z_score

torch = pytest.importorskip("torch")


def _official_green(vocab: int, key: int, ctx: list[int], gamma: float) -> np.ndarray:
    """Spec §2.1: seed = SHA-256(key string + rendering of the h ids) mod 2^32 - 1, torch.randperm, first gamma|V|."""
    seed = int(hashlib.sha256((f"{key}:" + ",".join(map(str, ctx))).encode()).hexdigest(), 16) % (2 ** 32 - 1)
    perm = torch.randperm(vocab, generator=torch.Generator().manual_seed(seed))
    return np.sort(perm[: int(np.floor(gamma * vocab))].numpy())


@pytest.mark.parametrize("h,gamma", [(1, 0.5), (3, 0.25), (2, 0.7)])
def test_green_list_equals_official_prf_on_fixed_ids(h: int, gamma: float) -> None:
    wm = KGWWatermark(1000, gamma=gamma, h=h, key=15485863)
    for ctx in ([5, 17, 999], [0, 0, 0], [123, 456, 789, 1, 2]):
        np.testing.assert_array_equal(wm.green_list(ctx), _official_green(1000, 15485863, ctx[-h:], gamma))


@pytest.mark.parametrize("prf", PRF_SCHEMES)
def test_green_list_size_window_and_key(prf: str) -> None:
    wm = KGWWatermark(501, gamma=0.3, h=2, key=11, prf=prf)
    g = wm.green_mask([4, 8, 15])
    assert g.sum() == int(np.floor(0.3 * 501))
    assert (g == wm.green_mask([99, 8, 15])).all()  # only the last h ids
    other = KGWWatermark(501, gamma=0.3, h=2, key=12, prf=prf).green_mask([4, 8, 15])
    assert (g != other).any()  # the key matters
    # over many contexts each token is green about gamma of the time (a PRF, not a fixed list)
    ctxs = np.random.default_rng(0).integers(0, 501, (400, 2))
    freq = np.mean([wm.green_mask(c) for c in ctxs], axis=0)
    assert abs(freq.mean() - 0.3) < 0.01 and freq.std() < 0.1


def _sequence_with(wm: KGWWatermark, n_green: int, T: int, rng: np.random.Generator) -> list[int]:
    seq = [int(x) for x in rng.integers(0, wm.vocab_size, wm.h)]
    flags = np.zeros(T, dtype=bool)
    flags[rng.choice(T, n_green, replace=False)] = True
    for f in flags:
        mask = wm.green_mask(seq)
        seq.append(int(rng.choice(np.flatnonzero(mask if f else ~mask))))
    return seq


@pytest.mark.parametrize("gamma,n_green,T", [(0.5, 30, 40), (0.25, 5, 50), (0.5, 10, 30)])
def test_detection_matches_closed_form(gamma: float, n_green: int, T: int) -> None:
    rng = np.random.default_rng(1)
    wm = KGWWatermark(300, gamma=gamma, h=2, key=3)
    seq = _sequence_with(wm, n_green, T, rng)
    d = wm.detect(seq, prompt_len=wm.h)
    z = (n_green - gamma * T) / np.sqrt(T * gamma * (1 - gamma))
    assert d.n_scored == T and d.n_green == n_green
    assert d.z == pytest.approx(z) and d.p_value == pytest.approx(norm.sf(z))
    assert float(kgw_z_score(n_green, T, gamma)) == pytest.approx(z)


def test_detection_scores_only_generated_tokens_and_repeats() -> None:
    wm = KGWWatermark(50, h=1, key=1)
    seq = [3, 4, 3, 4, 3, 4]
    assert wm.detect(seq, prompt_len=4).n_scored == 2
    assert wm.detect(seq, ignore_repeated_ngrams=True).n_scored == 2  # (3,4) and (4,3) once each
    assert np.isnan(wm.detect([1], prompt_len=0).z)


def test_logits_processor_adds_delta_on_green() -> None:
    wm = KGWWatermark(40, delta=1.5, h=2, key=9)
    ids = torch.tensor([[1, 2, 3], [4, 5, 6]])
    scores = torch.zeros(2, 40)
    out = wm(ids, scores)
    for r in range(2):
        np.testing.assert_allclose(out[r].numpy(), 1.5 * wm.green_mask(ids[r].tolist()))
    np.testing.assert_allclose(wm.apply(np.zeros(40), [2, 3]), 1.5 * wm.green_mask([2, 3]))


def test_transformers_generate_with_the_processor() -> None:
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=64, n_layer=1, n_embd=16, n_head=2,
                                                                  n_positions=64)).eval()
    wm = KGWWatermark(64, delta=50.0, h=1, key=2)  # a huge delta: every sampled token must be green
    out = model.generate(torch.tensor([[1, 2]]), max_new_tokens=20, do_sample=True, top_k=0,
                         logits_processor=transformers.LogitsProcessorList([wm.as_logits_processor()]),
                         pad_token_id=0)
    d = wm.detect(out[0].tolist(), prompt_len=2)
    assert d.n_green == d.n_scored == 20


@pytest.mark.parametrize("kw,match", [({"h": 0}, "h"), ({"gamma": 0.0}, "gamma"), ({"gamma": 1.0}, "gamma"),
                                      ({"delta": -1.0}, "delta"), ({"prf": "md5"}, "prf"), ({"vocab_size": 1},
                                                                                             "vocab_size")])
def test_bad_parameters(kw: dict, match: str) -> None:
    args = {"vocab_size": 100, **kw}
    with pytest.raises((ValueError, TypeError), match=match):
        KGWWatermark(**args)


def test_bad_context() -> None:
    wm = KGWWatermark(100, h=3)
    with pytest.raises(ValueError, match="context"):
        wm.green_mask([1, 2])
    with pytest.raises(ValueError, match="context"):
        wm.green_mask([1, 2, 100])
    with pytest.raises(ValueError, match="logits"):
        wm.apply(np.zeros(99), [1, 2, 3])
