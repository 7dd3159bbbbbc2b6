"""Removal and spoofing on the simulated deployment: the removal distribution equals the clean one tilted by
f = delta 1[G] - delta_hat 1[G_hat] and is within the Hoeffding KL bound of spec §2.10; the attack works through an
oracle that exposes nothing but its two methods (it never reads the key); the detector sees the effect."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.demark import (
    DeMark,
    LMOracle,
    RandomSelectionProber,
    Spoofer,
    WatermarkedOracle,
    sample_topk,
    topk_kl,
)


class _Sealed:
    """Only topk_logprobs, sample and vocab_size: the watermark object is unreachable from the attack."""

    def __init__(self, oracle):
        self.vocab_size = oracle.vocab_size
        self.topk_logprobs = lambda batch, k: oracle.topk_logprobs(batch, k)
        self.sample = lambda batch, n: oracle.sample(batch, n)


def test_removal_matches_tilted_clean_distribution_within_kl_bound(deployment) -> None:
    d = deployment
    prober = RandomSelectionProber(_Sealed(d["oracle"]), d["template"])
    dm = DeMark(prober, h_hat=2, delta_hat=1.9, top_k=12, random_state=0)
    steps = []
    prompt = d["tok"].encode("what say you to this , my lord")
    dm.remove(prompt, max_new_tokens=8, steps=steps)
    assert len(steps) == 8
    correct = 0
    for s in steps:
        p = np.exp(d["served"].next_logprobs([s.context])[0])[s.candidates]
        p /= p.sum()
        g = d["wm"].green_mask(s.context)[s.candidates]
        f = 2.0 * g - 1.9 * s.green_hat
        q = np.exp(s.used_logits - s.used_logits.max())
        q /= q.sum()
        tilted = p * np.exp(f) / (p * np.exp(f)).sum()
        np.testing.assert_allclose(q, tilted, rtol=1e-6)  # p'' is exactly p tilted by f on the top-k
        kl = topk_kl(p, q)
        assert kl <= (f.max() - f.min()) ** 2 / 8 + 1e-12  # Hoeffding's lemma (spec §2.10)
        correct += bool((g == s.green_hat).all())
        if (g == s.green_hat).all():
            assert kl <= (2.0 - 1.9) ** 2 / 8 + 1e-12
    assert correct >= 6


def test_removal_lowers_detection(deployment) -> None:
    d = deployment
    prompts = [d["tok"].encode(t) for t in ("the king is dead , and", "o romeo , romeo , wherefore")]
    wm_gen = sample_topk(d["oracle"], prompts, 25, 20, random_state=0)
    prober = RandomSelectionProber(_Sealed(d["oracle"]), d["template"])
    removed = [DeMark(prober, 2, 2.0, top_k=20, random_state=1).remove(p, 25) for p in prompts]
    clean = sample_topk(LMOracle(d["served"]), prompts, 25, 20, random_state=0)
    z = {k: np.mean([d["wm"].detect(p + g, prompt_len=len(p)).z for p, g in zip(prompts, gens)])
         for k, gens in (("wm", wm_gen), ("demark", removed), ("clean", clean))}
    assert z["wm"] > 3.0 and z["demark"] < z["wm"] - 2.0


def test_spoofing_makes_surrogate_text_detectable(deployment) -> None:
    d = deployment
    from icml25.core.data import shipped_path
    from icml25.demark import NGramLM
    from icml25.demark.text_lm import SPECIALS

    text = shipped_path("demark", "tinyshakespeare.txt").read_text(encoding="utf-8")[300_000:500_000]
    surrogate = NGramLM(d["tok"].encode(text), d["tok"].vocab_size, order=2, n_special=len(SPECIALS))
    prober = RandomSelectionProber(_Sealed(d["oracle"]), d["template"])
    prompt = d["tok"].encode("now is the winter of our")
    out = Spoofer(prober, surrogate, 2, 2.0, top_k=12, random_state=0).generate(prompt, 30)
    plain = sample_topk(surrogate, [prompt], 30, 12, random_state=0)[0]
    assert d["wm"].detect(prompt + out, prompt_len=len(prompt)).z > 3.0
    assert d["wm"].detect(prompt + plain, prompt_len=len(prompt)).z < 2.0


def test_vocabulary_mismatch_is_refused(deployment) -> None:
    from icml25.demark import InstructionFollowingLM, KGWWatermark

    d = deployment
    with pytest.raises(ValueError, match="vocab"):
        WatermarkedOracle(d["served"], KGWWatermark(d["tok"].vocab_size + 1))
    other = InstructionFollowingLM(d["template"], vocab_size=d["tok"].vocab_size + 5)
    with pytest.raises(ValueError, match="vocab"):
        Spoofer(RandomSelectionProber(d["oracle"], d["template"]), other, 2, 2.0)
