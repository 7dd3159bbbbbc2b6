"""Shared fixtures of the De-mark tests: a small simulated deployment (n-gram text model + instruction follower)."""

from __future__ import annotations

import functools

import numpy as np
import pytest


@functools.cache
def _deployment(h: int = 2, delta: float = 2.0, sigma_b: float = 0.2, seed: int = 0):
    from icml25.core.data import shipped_path
    from icml25.demark import InstructionFollowingLM, KGWWatermark, NGramLM, WatermarkedOracle, WordTokenizer
    from icml25.demark.text_lm import SPECIALS

    text = shipped_path("demark", "tinyshakespeare.txt").read_text(encoding="utf-8")[:300_000]
    tok = WordTokenizer(text, 800)
    lm = NGramLM(tok.encode(text), tok.vocab_size, order=3, n_special=len(SPECIALS))
    t = tok.probe_template()
    served = InstructionFollowingLM(t, lm, sigma_b=sigma_b, sigma_e=0.2, seed=seed)
    wm = KGWWatermark(tok.vocab_size, delta=delta, h=h, key=987 + seed)
    return {"tok": tok, "lm": lm, "template": t, "served": served, "wm": wm,
            "oracle": WatermarkedOracle(served, wm), "words": tok.word_ids(20, 400)}


@pytest.fixture
def deployment():
    """A fresh oracle over the cached text model (h = 2, delta = 2, sigma_b = sigma_e = 0.2)."""
    from icml25.demark import WatermarkedOracle

    d = dict(_deployment())
    d["oracle"] = WatermarkedOracle(d["served"], d["wm"])
    return d


@pytest.fixture
def rng():
    return np.random.default_rng(0)
