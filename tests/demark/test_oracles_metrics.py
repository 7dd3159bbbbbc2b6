"""Oracles (top-k, sampling, prefix sharing and incremental KV cache of the transformers adapter against plain
forwards), the simulators and the evaluation metrics against independent computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import entropy

from icml25.demark import (
    InstructionFollowingLM,
    KGWWatermark,
    LMOracle,
    NGramLM,
    ProbeTemplate,
    SimulatedProbeOracle,
    WatermarkedOracle,
    median_p,
    perplexity,
    topk_kl,
    tpr_at_fpr,
)

torch = pytest.importorskip("torch")
T = ProbeTemplate(pre=(0,), mid=(1,), post=(2,) * 10)


@pytest.fixture(scope="module")
def gpt2():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=97, n_layer=2, n_embd=32, n_head=2,
                                                                 n_positions=128)).eval()


def _plain(model, seq):
    with torch.no_grad():
        return torch.log_softmax(model(torch.tensor([seq])).logits[0, -1].double(), -1).numpy()


def test_hf_prefix_sharing_and_incremental_cache_equal_plain_forward(gpt2) -> None:
    from icml25.demark import HFNextTokenLM

    lm = HFNextTokenLM(gpt2, batch_size=4, incremental=2)
    base = list(range(3, 20))
    batch = [base + [30 + i, 40 + i, 50] for i in range(6)]  # 6 rows > incremental: the shared-prefix path
    got = lm.next_logprobs(batch)
    for r, s in enumerate(batch):
        np.testing.assert_allclose(got[r], _plain(gpt2, s), atol=1e-4)
    seq = [5, 6, 7]
    for t in range(5):  # one row at a time: the incremental path extends its KV cache
        seq = seq + [11 + t]
        np.testing.assert_allclose(lm.next_logprobs([seq])[0], _plain(gpt2, seq), atol=1e-4)


def test_topk_and_sampling_follow_the_distribution() -> None:
    lm = InstructionFollowingLM(T, vocab_size=8, sigma_b=0.0, sigma_e=0.0, eps_mass=0.2)
    o = LMOracle(lm, random_state=0)
    probe = T.build([5], 6, 7)
    ids, lps = o.topk_logprobs([probe], 3)
    assert set(ids[0, :2].tolist()) == {6, 7} and np.all(np.diff(lps[0]) <= 1e-12)
    draws = o.sample([probe], 4000)[0]
    p = np.exp(lm.next_logprobs([probe])[0])
    freq = np.bincount(draws, minlength=8) / 4000
    assert np.abs(freq - p).max() < 0.03
    assert o.n_queries == 2


def test_watermarked_oracle_tilts_by_delta() -> None:
    lm = InstructionFollowingLM(T, vocab_size=30, sigma_b=0.0, sigma_e=0.0)
    wm = KGWWatermark(30, delta=1.7, h=2, key=1)
    seq = [3, 4, 5]
    lp = np.exp(lm.next_logprobs([seq])[0])
    q = lp * np.exp(1.7 * wm.green_mask(seq))
    ids, lps = WatermarkedOracle(lm, wm).topk_logprobs([seq], 30)
    np.testing.assert_allclose(np.exp(lps[0]), (q / q.sum())[ids[0]])


def test_instruction_follower_bias_is_fixed_per_token_and_noise_per_query() -> None:
    lm = InstructionFollowingLM(T, vocab_size=50, sigma_b=0.5, sigma_e=0.0, eps_mass=0.0, seed=3)
    p = np.exp(lm.next_logprobs([T.build([9], 10, 11), T.build([12], 10, 11)]))
    assert p[0, 10] == pytest.approx(1 / (1 + np.exp(-(lm.bias[10] - lm.bias[11]))))
    assert p[0, 10] == pytest.approx(p[1, 10])  # same pair, other context: same bias
    noisy = InstructionFollowingLM(T, vocab_size=50, sigma_b=0.0, sigma_e=0.5, eps_mass=0.0, seed=3)
    a, b = np.exp(noisy.next_logprobs([T.build([9], 10, 11), T.build([12], 10, 11)]))[:, 10]
    assert a != b and np.exp(noisy.next_logprobs([T.build([9], 10, 11)]))[0, 10] == a  # deterministic per query


def test_simulated_oracle_hashes_template_tokens_for_short_contexts() -> None:
    o = SimulatedProbeOracle(200, delta=2.0, h=3, sigma_b=0.0, sigma_e=0.0, seed=0)
    cand = list(range(20, 60))
    g2 = o.true_green([7, 8], cand)
    assert (g2 == o.true_green([7, 8], cand)).all()  # deterministic
    assert (g2 != o.true_green([9, 7, 8], cand)).any()  # a full-width context hashes different ids


def test_tpr_at_fpr_brute_force() -> None:
    rng = np.random.default_rng(0)
    null, wm = rng.random(200), rng.random(50) ** 4
    got = tpr_at_fpr(wm, null, (0.01, 0.1))
    for f, tpr in got.items():
        thr = max(t for t in np.append(null, 1.0) if np.mean(null < t) <= f)  # largest admissible threshold
        assert tpr == pytest.approx(np.mean(wm < thr))
        assert np.mean(null < thr) <= f
    assert tpr_at_fpr([0.001, 0.5], fprs=(0.01,)) == {0.01: 0.5}
    assert median_p([0.3, 0.1, 0.2]) == 0.2


def test_topk_kl_and_perplexity() -> None:
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.5, 0.25, 0.25])
    assert topk_kl(p * 3, q) == pytest.approx(entropy(p, q))
    lm = NGramLM([4, 5, 4, 5, 4, 6, 4, 5], vocab_size=8, order=2)
    lp = [lm.next_logprobs([[4]])[0][5], lm.next_logprobs([[4, 5]])[0][4]]
    assert perplexity(lm, [[4]], [[5, 4]]) == pytest.approx(np.exp(-np.mean(lp)))


def test_ngram_model_is_a_distribution_and_prefers_seen_continuations() -> None:
    ids = [4, 5, 6, 4, 5, 7, 4, 5, 6]
    lm = NGramLM(ids, vocab_size=10, order=3, n_special=2)
    p = np.exp(lm.next_logprobs([[4, 5], [9]]))
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert p[0, 6] > p[0, 7] > p[0, 8] and p[0, :2].sum() < 1e-200
