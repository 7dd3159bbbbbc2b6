"""pass@k estimator vs brute-force enumeration and exact big-integer arithmetic; bootstrap; validation."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25.inference_scaling import (
    bootstrap_ci,
    coverage_curve,
    load_llmonkeys_pythia_math,
    log_spaced_ks,
    pass_at_k,
    subsample_counts,
)


def brute_force_pass_at_k(n: int, c: int, k: int) -> float:
    """Fraction of k-subsets of n attempts (c of them correct) that contain a correct attempt."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_matches_enumeration_of_all_subsets(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, [c], k)[0] == pytest.approx(brute_force_pass_at_k(n, c, k), abs=1e-12)


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def test_exact_for_n_10000_against_big_integers() -> None:
    rng = np.random.default_rng(0)
    c = rng.integers(0, 60, size=10)
    for k in (1, 7, 100, 1000, 9999, 10_000):
        ours = pass_at_k(10_000, c, k)
        ref = [float(exact_pass_at_k(10_000, int(ci), k)) for ci in c]
        assert np.allclose(ours, ref, rtol=0, atol=1e-9)


def test_real_data_pass_at_100_recomputed_exactly() -> None:
    """The shipped counts' pass@100 equals exact rational arithmetic to 1e-9 (the CSVs carry no stored pass@k)."""
    d = load_llmonkeys_pythia_math()["Pythia 1B"]
    ours = pass_at_k(d["n"], d["c"], 100)
    ref = np.array([float(exact_pass_at_k(int(n), int(c), 100)) for n, c in zip(d["n"], d["c"])])
    assert np.max(np.abs(ours - ref)) <= 1e-9


def test_pass_at_10000_matches_source_sanity_values() -> None:
    data = load_llmonkeys_pythia_math()
    got = {m: round(float(coverage_curve(d["n"], d["c"], [10_000])[0]), 3) for m, d in data.items()}
    assert got["Pythia 70M"] == pytest.approx(0.266, abs=1e-3)
    assert got["Pythia 12B"] == pytest.approx(0.875, abs=1e-3)


def test_plug_in_estimator_is_biased_low_but_unbiased_is_not() -> None:
    rng = np.random.default_rng(1)
    p, n, k = 0.05, 40, 20
    c = rng.binomial(n, p, size=20_000)
    truth = 1 - (1 - p) ** k
    unbiased = pass_at_k(n, c, k).mean()
    plug_in = np.mean(1 - (1 - c / n) ** k)
    assert abs(unbiased - truth) < 0.01
    assert plug_in < truth - 0.02


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.data())
def test_monotone_in_k_and_c(n: int, data: st.DataObject) -> None:
    c = data.draw(st.integers(0, n))
    ks = np.arange(1, n + 1)
    v = pass_at_k(n, [c], ks)[0]
    assert np.all(np.diff(v) >= -1e-12) and np.all((v >= 0) & (v <= 1 + 1e-12))
    if c < n:
        assert np.all(pass_at_k(n, [c + 1], ks)[0] >= v - 1e-12)


@pytest.mark.parametrize("n,c,k,match", [
    (5, [6], 1, "exceed"), (5, [-1], 1, "non-negative"), (5, [1.5], 1, "integer"), (5, [], 1, "empty"),
    (5, [1], 6, "k must be <="), (5, [1], 0, ">= 1"), ([5, 5], [1], 1, "same length"), (0, [0], 1, "n must be"),
])
def test_bad_input_raises_value_error(n, c, k, match) -> None:
    with pytest.raises(ValueError, match=match):
        pass_at_k(n, c, k)


def test_non_numeric_counts_raise_type_error() -> None:
    with pytest.raises(TypeError, match="numeric"):
        pass_at_k(5, ["a"], 1)


def test_bootstrap_interval_brackets_estimate_and_narrows_with_problems() -> None:
    rng = np.random.default_rng(2)
    c_small = rng.binomial(100, rng.beta(2, 1, 50))
    c_big = rng.binomial(100, rng.beta(2, 1, 2000))
    est, lo, hi = bootstrap_ci(100, c_small, [1, 10], n_boot=400, random_state=0)
    assert np.all(lo <= est) and np.all(est <= hi)
    _, lo2, hi2 = bootstrap_ci(100, c_big, [1, 10], n_boot=400, random_state=0)
    assert np.all(hi2 - lo2 < hi - lo)
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(100, c_small, [1], level=1.5)


def test_subsample_counts_is_hypergeometric() -> None:
    n, c = np.full(4000, 100), np.full(4000, 30)
    n_s, c_s = subsample_counts(n, c, 10, random_state=0)
    assert np.all(n_s == 10) and np.all(c_s <= 10)
    assert c_s.mean() == pytest.approx(3.0, abs=0.05)
    var = 10 * 0.3 * 0.7 * (100 - 10) / (100 - 1)  # hypergeometric variance
    assert c_s.var() == pytest.approx(var, rel=0.08)
    with pytest.raises(ValueError, match="n_sub"):
        subsample_counts(n, c, 101)


def test_log_spaced_ks_are_unique_integers() -> None:
    ks = log_spaced_ks(10_000, 41)
    assert ks[0] == 1 and ks[-1] == 10_000 and np.all(np.diff(ks) > 0)
