from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from icml25.median_of_means import (
    UniformMoM,
    choose_K,
    classical_mom_bound,
    lomax_abs_moment,
    make_partition,
    median_of_means,
    symmetric_lomax,
)


def test_K1_is_mean_and_Kn_is_median(global_seed) -> None:
    x = np.random.default_rng(global_seed).standard_t(2, size=101)
    assert median_of_means(x, 1, rng=global_seed) == pytest.approx(x.mean())
    assert median_of_means(x, 101, rng=global_seed) == pytest.approx(np.median(x))


@given(st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=60), st.integers(1, 3), st.integers(0, 2**16))
@settings(max_examples=60, deadline=None)
def test_equals_brute_force_definition(values, K, seed) -> None:
    x = np.array(values)
    part = make_partition(len(x), K, seed)
    means = sorted(x[b].mean() for b in part)
    assert median_of_means(x, K, partition=part) == pytest.approx(means[(K - 1) // 2])


def test_permutation_invariance_given_partition(global_seed) -> None:
    rng = np.random.default_rng(global_seed)
    x = rng.normal(size=60)
    part = make_partition(60, 7, rng)
    perm = rng.permutation(60)
    inv = np.empty(60, dtype=int)
    inv[perm] = np.arange(60)
    # relabelling the sample and the partition together leaves the estimate unchanged
    assert median_of_means(x[perm], 7, partition=inv[part]) == pytest.approx(median_of_means(x, 7, partition=part))


def test_uniform_equals_per_function_with_same_partition() -> None:
    rng = np.random.default_rng(1)
    X = rng.standard_t(2.5, size=(500, 3))
    est = UniformMoM(K=11, random_state=0).fit(X)
    funcs = [lambda X: X[:, 0], lambda X: X[:, 1] ** 2, lambda X: np.abs(X[:, 2])]
    got = est.estimate(funcs)
    want = [median_of_means(f(X), 11, partition=est.partition_) for f in funcs]
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(est.estimate(lambda X: X), median_of_means(X, 11, partition=est.partition_))


def test_gaussian_within_concentration() -> None:
    rng = np.random.default_rng(2)
    n, K = 10_000, 25
    x = rng.normal(size=n)
    assert abs(median_of_means(x, K, rng=3)) < 3 * np.sqrt(K) / np.sqrt(n)


def test_lomax_moment_closed_form_vs_monte_carlo() -> None:
    alpha, p = 4.5, 1.5
    x = symmetric_lomax(alpha, 400_000, random_state=0)
    assert abs(np.mean(x)) < 0.01
    assert np.mean(np.abs(x) ** p) == pytest.approx(lomax_abs_moment(alpha, p), rel=0.03)
    # numpy's pareto is Lomax: the two samplers agree in distribution
    y = np.random.default_rng(1).pareto(alpha, 50_000)
    assert stats.ks_2samp(np.abs(x[:50_000]), y).pvalue > 1e-3


def test_classical_bound_holds_at_level_delta() -> None:
    alpha, p, delta, n = 1.8, 1.7, 0.05, 1200
    K = choose_K(delta)
    bound = classical_mom_bound(lomax_abs_moment(alpha, p), p, n, delta)
    x = symmetric_lomax(alpha, (1000, n), random_state=5)
    m = n // K
    errs = np.abs(np.median(x[:, : K * m].reshape(1000, K, m).mean(2), axis=1))
    assert np.mean(errs > bound) <= delta


def test_choose_K() -> None:
    assert choose_K(0.05) == int(np.ceil(8 * np.log(20)))
    assert choose_K(0.01, n_functions=100) == int(np.ceil(8 * np.log(1e4)))
    assert choose_K(0.1, complexity=3.0) == int(np.ceil(8 * (3 + np.log(10))))


@pytest.mark.parametrize("call,msg", [
    (lambda: median_of_means(np.ones(5), 6), r"K \(number of blocks\) must be in \[1, n\]"),
    (lambda: median_of_means(np.ones(5), 0), "K must be >= 1"),
    (lambda: median_of_means(np.array([1.0, np.nan, 2.0]), 1), "x must be finite"),
    (lambda: UniformMoM(2).fit(np.ones((4, 2))).estimate(lambda X: np.ones(3)), "shape"),
    (lambda: UniformMoM(2).fit(np.ones((4, 2))).estimate([lambda X: np.ones((4, 2))]), "shape"),
    (lambda: choose_K(1.5), "delta"),
    (lambda: lomax_abs_moment(1.5, 2.0), "p-th moment"),
])
def test_bad_input(call, msg) -> None:
    with pytest.raises(ValueError, match=msg):
        call()
