"""Random selection probing: probes built from ids, both orderings asked, antisymmetry, position bias cancelled,
gray-box unknowns and black-box clipping; the token score against a brute-force loop."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.demark import (
    InstructionFollowingLM,
    KGWWatermark,
    ProbeTemplate,
    RandomSelectionProber,
    WatermarkedOracle,
    token_scores,
)

T = ProbeTemplate(pre=(0, 1), mid=(2,), post=(3,) * 10)


class _Spy:
    """An oracle that records every sequence and answers with a fixed distribution."""

    def __init__(self, vocab: int, answer: int | None = None):
        self.vocab_size, self.seen, self.answer = vocab, [], answer

    def topk_logprobs(self, batch, k):
        self.seen += [list(s) for s in batch]
        ids = np.tile(np.arange(k), (len(batch), 1))
        return ids, np.log(np.full((len(batch), k), 1.0 / k))

    def sample(self, batch, n):
        self.seen += [list(s) for s in batch]
        return np.full((len(batch), n), self.answer)


def test_probe_is_built_from_ids_and_parsed_back() -> None:
    seq = T.build([7, 8, 9], 11, 12)
    assert seq == [0, 1, 7, 8, 9, 11, 2, 7, 8, 9, 12, *([3] * 10), 7, 8, 9]
    assert seq[-3:] == [7, 8, 9]  # the watermark window of the answer = the last ids of c
    assert T.parse(seq) == ((7, 8, 9), 11, 12)
    assert T.parse(seq[:-1]) is None and T.parse([5, *seq[1:]]) is None


def test_both_orderings_are_queried_and_cached() -> None:
    spy = _Spy(30)
    p = RandomSelectionProber(spy, T, top_k=25)
    R = p.ratio_matrix([5], [10, 11, 12])
    assert len(spy.seen) == 6 and p.n_probe_queries == 6
    parsed = {T.parse(s)[1:] for s in spy.seen}
    assert parsed == {(10, 11), (11, 10), (10, 12), (12, 10), (11, 12), (12, 11)}
    np.testing.assert_allclose(R, 0.0)
    p.ratio_matrix([5], [10, 11, 12])
    assert len(spy.seen) == 6  # cached


def test_graybox_unknown_probability_is_nan_not_zero() -> None:
    p = RandomSelectionProber(_Spy(30), T, top_k=3)  # the spy returns ids 0..2 only
    R = p.ratio_matrix([5], [1, 2, 20])
    assert R[0, 1] == 0.0 and np.isnan(R[0, 2]) and np.isnan(R[2, 1])


@pytest.mark.parametrize("n", [5, 10])
def test_blackbox_clipping(n: int) -> None:
    p = RandomSelectionProber(_Spy(30, answer=10), T, mode="blackbox", n_samples=n)
    R = p.ratio_matrix([5], [10, 11])
    assert R[0, 1] == pytest.approx(np.log((2 * n - 1) / 1))  # N_u = 2n clipped to 2n - 1
    assert R[1, 0] == pytest.approx(-R[0, 1])
    assert np.isnan(RandomSelectionProber(_Spy(30, answer=20), T, mode="blackbox").ratio_matrix([5], [10, 11])[0, 1])


@pytest.mark.parametrize("position_bias", [0.0, 0.5])
def test_ratio_matches_the_watermark_and_both_orders_reduce_position_bias(position_bias: float) -> None:
    wm = KGWWatermark(60, delta=2.0, h=1, key=4)
    lm = InstructionFollowingLM(T, vocab_size=60, sigma_b=0.0, sigma_e=0.0, eps_mass=0.01,
                                position_bias=position_bias)
    p = RandomSelectionProber(WatermarkedOracle(lm, wm), T)
    cand = list(range(10, 22))
    R = p.ratio_matrix([40], cand)
    g = wm.green_mask([40])[cand].astype(float)
    np.testing.assert_allclose(R, -R.T)
    ideal = 2.0 * (g[:, None] - g[None, :])
    np.testing.assert_allclose(R, ideal, atol=0.15)
    # one ordering alone: log P1(u) / P1(v) carries the position bias in full
    i, j = int(np.argmax(g)), int(np.argmin(g))
    a1 = p._answers([((40,), cand[i], cand[j])])[0]
    single = np.log(a1[cand[i]] / a1[cand[j]])
    assert abs(single - 2.0) >= abs(R[i, j] - 2.0) - 1e-9
    if position_bias:
        assert abs(single - 2.0) > 0.3


def test_token_scores_brute_force() -> None:
    rng = np.random.default_rng(0)
    A = rng.normal(0, 2, (9, 9))
    R = np.triu(A, 1) - np.triu(A, 1).T
    R[2, 5], R[5, 2] = np.nan, np.nan
    want = [sum(1 for j in range(9) if 0.2 < R[i, j] < 10) - sum(1 for j in range(9) if -10 < R[i, j] < -0.2)
            for i in range(9)]
    assert token_scores(R).tolist() == want


def test_template_from_a_chat_tokenizer() -> None:
    transformers = pytest.importorskip("transformers")
    from icml25.llm.pretrained import is_cached

    if not is_cached("smollm2-135m-instruct"):
        pytest.skip("SmolLM2 not cached")
    from icml25.llm.pretrained import pretrained_path

    tok = transformers.AutoTokenizer.from_pretrained(str(pretrained_path("smollm2-135m-instruct", progress=False)))
    t = ProbeTemplate.from_chat_template(tok)
    assert len(t.post) >= 10  # the watermark window (h <= 10) never reaches the candidates
    u, v = tok(" river", add_special_tokens=False)["input_ids"][0], tok(" stone", add_special_tokens=False)["input_ids"][0]
    text = tok.decode(t.build(tok(" the old", add_special_tokens=False)["input_ids"], u, v))
    assert "«the old river» or «the old stone»" in text.replace("« ", "«") and text.endswith("assistant\n the old")


@pytest.mark.parametrize("mode", ["graybox", "blackbox"])
def test_logmean_cancels_a_strong_position_bias_that_the_sum_shrinks(mode: str) -> None:
    """Symmetrised probing (combine="logmean", our extension): with a position bias of 3 nats the two orderings'
    mean log-ratio stays at +-delta while the paper's summed ratio collapses toward 0; the queries are the same."""
    wm = KGWWatermark(60, delta=2.0, h=1, key=4)
    lm = InstructionFollowingLM(T, vocab_size=60, sigma_b=0.0, sigma_e=0.0, eps_mass=0.01, position_bias=3.0)
    cand = list(range(10, 22))
    g = wm.green_mask([40])[cand].astype(float)
    ideal = 2.0 * (g[:, None] - g[None, :])
    oracle = WatermarkedOracle(lm, wm, random_state=0)
    p_log = RandomSelectionProber(oracle, T, mode=mode, n_samples=400, combine="logmean")
    p_sum = RandomSelectionProber(oracle, T, mode=mode, n_samples=400, combine="sum")
    R_log, R_sum = p_log.ratio_matrix([40], cand), p_sum.ratio_matrix([40], cand)
    mixed = ideal != 0
    if mode == "graybox":
        assert np.abs(R_log - ideal)[mixed].max() < 1e-6
    else:  # 400 draws per ordering at odds up to e^5: sampling noise, but centred on +-delta
        assert np.abs(R_log - ideal)[mixed].mean() < 0.3 and np.abs(R_log - ideal)[mixed].max() < 1.0
    assert np.abs(R_sum[mixed]).mean() < 0.7  # shrunk to about a quarter of delta
    assert np.allclose(R_log, -R_log.T)
    with pytest.raises(ValueError, match="combine"):
        RandomSelectionProber(oracle, T, combine="mean")


def test_reference_contexts_cancel_a_per_word_chooser_bias() -> None:
    """Contextual calibration (our extension): a context-independent per-word preference (sigma_b = 1) cancels when
    the mean ratio matrix over reference contexts is subtracted; the watermark term survives."""
    wm = KGWWatermark(300, delta=2.0, h=1, key=4)
    lm = InstructionFollowingLM(T, vocab_size=300, sigma_b=1.0, sigma_e=0.0, eps_mass=0.01, seed=1)
    oracle = WatermarkedOracle(lm, wm)
    refs = [[int(x)] for x in np.random.default_rng(0).integers(20, 300, 8)]
    cand = list(range(30, 50))
    err = {}
    for n in (0, 8):
        p = RandomSelectionProber(oracle, T, reference_contexts=refs[:n] or None)
        e = []
        for c in (100, 101, 102):
            g = wm.green_mask([c])[cand].astype(float)
            R = p.ratio_matrix([c], cand)
            assert np.allclose(R, -R.T)
            e.append(np.std(R - 2.0 * (g[:, None] - g[None, :])))
        err[n] = float(np.mean(e))
        assert p.n_probe_queries == (3 + n) * 20 * 19  # 3 contexts + each reference once (cached)
    assert err[8] < 0.5 * err[0]
