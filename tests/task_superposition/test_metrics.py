"""Superposition statistics against scipy and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import entropy

from icml25.task_superposition import (
    build_prompt,
    calibration_error,
    kl_to_mixture,
    oracle_mixer,
    superposition_stats,
    synthetic_family,
)


def test_kl_matches_scipy_entropy():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=10) * 0.8  # 20 % "other" mass
    lam = rng.dirichlet(np.ones(4))
    raw = kl_to_mixture(p, lam)
    norm = kl_to_mixture(p, lam, normalize=True)
    # scipy.stats.entropy(lam, q) normalises q, so it is the normalised KL; the raw one adds -log(sum p)
    assert norm == pytest.approx([entropy(lam, q) for q in p], abs=1e-10)
    assert raw == pytest.approx(norm - np.log(p.sum(axis=1)), abs=1e-10)


def test_stats_on_a_hand_computed_example():
    p = np.array([[0.7, 0.2, 0.0], [0.1, 0.1, 0.5], [0.3, 0.3, 0.3]])
    s = superposition_stats(p, [0.5, 0.25, 0.25])
    assert s["mean"] == pytest.approx([1.1 / 3, 0.2, 0.8 / 3])
    assert s["sorted_mean"] == pytest.approx([1.5 / 3, 0.6 / 3, 0.4 / 3])
    assert s["other"] == pytest.approx((0.1 + 0.3 + 0.1) / 3)
    assert s["frac_multi"] == pytest.approx(1.0)  # every row has >= 2 tasks at >= 0.1
    assert s["mean_in_play"] == pytest.approx((2 + 3 + 3) / 3)


def test_oracle_mixer_is_exactly_calibrated():
    fam = synthetic_family("F-AB")
    rng = np.random.default_rng(0)
    for counts in [(8, 0, 0), (4, 2, 2), (3, 3, 2), (1, 0, 7)]:
        items = [build_prompt(fam, counts, rng) for _ in range(5)]
        p = np.stack([oracle_mixer(it.example_tasks, 3) for it in items])
        lam = np.stack([it.lam_hat for it in items])
        assert kl_to_mixture(p, lam).max() == pytest.approx(0.0, abs=1e-12)
        s = superposition_stats(p, lam)
        assert s["kl_population"] == pytest.approx(0.0, abs=1e-12)
        assert calibration_error(p.mean(0, keepdims=True), lam.mean(0, keepdims=True)) == pytest.approx(0.0)


def test_bad_shapes_are_rejected():
    with pytest.raises(ValueError, match="lam_hat"):
        superposition_stats([[0.5, 0.5]], [0.2, 0.3, 0.5])
    with pytest.raises(ValueError, match="lam_hat rows must sum to 1"):
        kl_to_mixture([[0.5, 0.5]], [0.2, 0.3])
