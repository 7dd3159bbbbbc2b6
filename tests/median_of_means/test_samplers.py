"""Samplers against independent references: scipy.stats (Lomax, Student t), closed forms, properties."""

from __future__ import annotations

import numpy as np
from scipy import stats

from icml25.median_of_means import (
    classical_mom_bound,
    contaminate,
    lomax_abs_moment,
    student_t,
    symmetric_lomax,
)


def test_symmetric_lomax_magnitudes_follow_scipy_lomax() -> None:
    x = symmetric_lomax(2.5, 20000, scale=1.5, random_state=0)
    # |X| is Lomax(c=alpha, scale): a Kolmogorov-Smirnov test against scipy's distribution must not reject
    assert stats.kstest(np.abs(x), stats.lomax(c=2.5, scale=1.5).cdf).pvalue > 0.01
    # symmetric: the signs are a fair coin, independent of the magnitude
    assert abs(np.mean(x > 0) - 0.5) < 0.02
    assert abs(np.mean(np.abs(x[x > 0])) - np.mean(np.abs(x[x < 0]))) < 0.1


def test_lomax_abs_moment_matches_scipy_numerical_moment() -> None:
    for alpha, p in ((3.0, 1.0), (2.5, 1.7), (1.8, 1.5)):
        ref = stats.lomax(c=alpha).expect(lambda t, p=p: t**p)
        assert np.isclose(lomax_abs_moment(alpha, p), ref, rtol=1e-5)


def test_student_t_is_seeded_and_matches_scipy() -> None:
    a, b = student_t(4.0, 5000, random_state=3), student_t(4.0, 5000, random_state=3)
    assert np.array_equal(a, b)
    assert stats.kstest(a, stats.t(df=4.0).cdf).pvalue > 0.01


def test_classical_bound_formula_and_monotonicity() -> None:
    v, p, n, d = 2.0, 1.6, 5000, 0.01
    expected = (8 * v) ** (1 / p) * (8 * np.log(1 / d) / n) ** ((p - 1) / p)
    assert np.isclose(classical_mom_bound(v, p, n, d), expected)
    # more data, or less confidence, gives a smaller bound; the rate in n is n^{-(p-1)/p}
    assert classical_mom_bound(v, p, 4 * n, d) < classical_mom_bound(v, p, n, d)
    assert classical_mom_bound(v, p, n, 0.1) < classical_mom_bound(v, p, n, d)
    ratio = classical_mom_bound(v, p, 16 * n, d) / classical_mom_bound(v, p, n, d)
    assert np.isclose(ratio, 16 ** (-(p - 1) / p))


def test_contaminate_moves_exactly_the_masked_rows() -> None:
    X = np.arange(40.0).reshape(20, 2)
    Y, mask = contaminate(X, 0.25, [100.0, -100.0], random_state=0)
    assert mask.sum() == 5
    assert np.all(Y[mask] == [100.0, -100.0])
    assert np.array_equal(Y[~mask], X[~mask])
    assert not np.shares_memory(X, Y)
