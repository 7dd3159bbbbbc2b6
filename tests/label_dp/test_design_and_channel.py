from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25.label_dp import (
    RRChannel,
    feasible_vertices,
    fisher_trace,
    grid_design,
    optimal_design,
    privacy_slack,
    randomized_response,
)


def _X(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([np.ones(n), rng.normal(size=(n, 2))])


def _brute_force_private(p: float, q: float, eps: float, delta: float) -> bool:
    """(eps, delta)-DP by definition: every event S of the output {0,1} (4 subsets), both neighbour orders."""
    out1, out0 = {1: p, 0: 1 - p}, {1: 1 - q, 0: q}  # output distributions for y=1 and y=0
    for S in ([], [0], [1], [0, 1]):
        a, b = sum(out1[s] for s in S), sum(out0[s] for s in S)
        if a > math.exp(eps) * b + delta + 1e-12 or b > math.exp(eps) * a + delta + 1e-12:
            return False
    return True


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0.05, 3), st.sampled_from([0.0, 1e-5, 0.1, 0.3]))
@settings(max_examples=300, deadline=None)
def test_four_inequalities_equal_the_dp_definition(p, q, eps, delta) -> None:
    assert bool(np.all(privacy_slack(p, q, eps, delta) >= -1e-12)) == _brute_force_private(p, q, eps, delta)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_vertices_delta0_and_grid_search(eps) -> None:
    pi = math.exp(eps) / (1 + math.exp(eps))
    got = sorted((round(c.p, 9), round(c.q, 9)) for c in feasible_vertices(eps, informative_only=False))
    assert got == sorted([(0.0, 1.0), (1.0, 0.0), (round(pi, 9),) * 2, (round(1 - pi, 9),) * 2])
    X, beta = _X(800), np.array([-1.0, 1.0, -0.5])
    best = optimal_design(X, eps, 0.0, beta)
    assert best.p == pytest.approx(pi) and best.q == pytest.approx(pi)
    g = grid_design(X, eps, 0.0, beta, grid=201)
    # no lattice point beats the vertex, and the best one lies next to it (lattice step 0.005)
    assert fisher_trace(X, beta, best.p, best.q) >= fisher_trace(X, beta, g.p, g.q)
    assert abs(g.p - pi) <= 0.015 and abs(g.q - pi) <= 0.015


@pytest.mark.parametrize("eps,delta,b0", [(1.0, 0.1, 0.0), (0.1, 0.3, 0.0), (0.5, 0.5, -4.0)])
def test_vertex_rule_equals_grid_search_with_delta(eps, delta, b0) -> None:
    X, beta = _X(800), np.array([b0, 1.0, -0.5])
    v = optimal_design(X, eps, delta, beta)
    g = grid_design(X, eps, delta, beta, grid=201)
    assert fisher_trace(X, beta, v.p, v.q) >= fisher_trace(X, beta, g.p, g.q) - 1e-12


def test_spec_table_of_traces() -> None:
    X = _X(20000, 1)
    for eps, delta, b0, want_sym, want_asym in [(1.0, 0.1, 0, 0.117, 0.028), (0.1, 0.3, 0, 0.048, 0.091)]:
        beta = np.array([b0, 1.0, -0.5])
        s = RRChannel.symmetric(eps, delta)
        assert fisher_trace(X, beta, s.p, s.q) == pytest.approx(want_sym, abs=0.004)
        assert fisher_trace(X, beta, delta, 1.0) == pytest.approx(want_asym, abs=0.004)


@pytest.mark.parametrize("eps,delta", [(0.5, 0.0), (1.0, 0.0), (2.0, 0.0), (1.0, 0.1)])
def test_privacy_audit_is_tight(eps, delta) -> None:
    ch = optimal_design(_X(500), eps, delta, np.array([-1.0, 1.0, -0.5]))
    assert ch.is_private(eps, delta, tol=1e-12)
    assert not ch.is_private(0.99 * eps, delta, tol=0.0)
    assert ch.epsilon(delta) == pytest.approx(eps)


def test_asymmetric_vertex_is_zero_eps() -> None:
    assert RRChannel(1.0, 0.3).epsilon(0.3) == 0.0  # (0, delta)-DP: the "delta catastrophe" vertex


def test_randomized_response_rates() -> None:
    y = np.r_[np.ones(100_000, int), np.zeros(100_000, int)]
    yt = randomized_response(y, 0.8, 0.6, rng=0)
    assert yt[:100_000].mean() == pytest.approx(0.8, abs=0.005)
    assert 1 - yt[100_000:].mean() == pytest.approx(0.6, abs=0.005)
    np.testing.assert_array_equal(yt, randomized_response(y, 0.8, 0.6, rng=0))


@pytest.mark.parametrize("call,msg", [
    (lambda: randomized_response([0, 2], 0.7, 0.7), "only 0/1"),
    (lambda: feasible_vertices(0.0), "eps must be"),
    (lambda: feasible_vertices(1.0, 1.0), "delta must be <"),
    (lambda: RRChannel(1.2, 0.5), r"\[0, 1\]"),
    (lambda: optimal_design(np.ones((5, 2)), 1.0, beta=np.ones(3)), "beta must have shape"),
])
def test_bad_input(call, msg) -> None:
    with pytest.raises(ValueError, match=msg):
        call()
