"""Ehrlich functions against hand computation and brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from icml25.mcmc_extrapolation import Ehrlich

P4 = np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0], [0.0, 0.0, 0.5, 0.5], [0.5, 0.0, 0.0, 0.5]])


def _brute_h(x, motif, offsets, q):
    k = len(motif)
    unit = -(-k // q)
    best = 0
    for start in range(len(x) - offsets[-1]):
        best = max(best, sum(x[start + o] == a for o, a in zip(offsets, motif)))
    return (best // unit) / (k / unit)


def test_hand_built_instance_values() -> None:
    f = Ehrlich.from_parts(P4, motifs=[[1, 2, 3]], spacings=[[0, 2, 3]], dim=8)
    cases = {  # sequence -> value, computed by hand: motif 1 _ 2 3 (offsets 0, 2, 3)
        (1, 1, 2, 3, 3, 3, 3, 3): 1.0,     # 1 at 0, 2 at 2, 3 at 3
        (0, 0, 0, 0, 0, 0, 0, 0): 0.0,
        (1, 1, 1, 1, 1, 1, 1, 1): 1 / 3,   # only the first motif element ever matches
        (2, 2, 2, 2, 2, 3, 3, 3): 2 / 3,   # start 3: x3=2? no; start 2: x2=2 ≠ 1, x4=2 ✓, x5=3 ✓
        (1, 2, 3, 0, 0, 0, 0, 0): 1 / 3,
    }
    X = np.array(list(cases))
    np.testing.assert_allclose(f(X), list(cases.values()))
    assert f(np.array([[0, 2, 2, 2, 2, 2, 2, 2]]))[0] == -np.inf  # 0 -> 2 is a banned transition


def test_quantization_rounds_down() -> None:
    f = Ehrlich.from_parts(P4, motifs=[[1, 2, 3, 0]], spacings=[[0, 1, 2, 3]], dim=8, quantization=2)
    x = np.array([[1, 2, 2, 2, 2, 2, 2, 2], [1, 2, 3, 3, 3, 3, 3, 3]])
    np.testing.assert_allclose(f(x), [0.5, 0.5])  # 2 of 4 and 3 of 4 matches both round down to 1/2


@pytest.mark.parametrize("seed", range(6))
def test_random_instances_against_brute_force(seed: int) -> None:
    f = Ehrlich(num_states=6, dim=10, num_motifs=2, motif_length=3, seed=seed)
    opt = f.optimal_solution()
    assert f(opt[None])[0] == 1.0 and f.is_feasible(opt[None])[0]
    X = f.sample_prior(50, seed=seed)
    X[:5] = np.random.default_rng(seed).integers(0, 6, size=(5, 10))  # some arbitrary, possibly infeasible ones
    vals = f(X)
    for x, v in zip(X, vals):
        feasible = all(f.transition_matrix[a, b] > 0 for a, b in zip(x[:-1], x[1:]))
        if not feasible:
            assert v == -np.inf
            continue
        expect = np.prod([_brute_h(x, f.motifs[j], f.spacings[j], f.quantization) for j in range(2)])
        assert v == pytest.approx(expect)


def test_transition_matrix_is_ergodic_stochastic_with_stationary_initial() -> None:
    f = Ehrlich(num_states=10, dim=20, num_motifs=2, motif_length=4, seed=3)
    P = f.transition_matrix
    np.testing.assert_allclose(P.sum(1), 1.0)
    assert np.all(np.diag(P) > 0) and np.all(np.linalg.matrix_power(P, 81) > 0)
    np.testing.assert_allclose(f.initial_dist @ P, f.initial_dist, atol=1e-10)
    assert (P == 0).any(), "the band mask bans some transitions"


def test_prior_samples_follow_the_chain() -> None:
    f = Ehrlich(num_states=4, dim=3, num_motifs=1, motif_length=2, seed=1)
    X = f.sample_prior(40000, seed=0)
    assert f.is_feasible(X).all()
    codes = X @ np.array([16, 4, 1])
    emp = np.bincount(codes, minlength=64) / len(X)
    exact = np.array([np.exp(f.log_prior(np.array([x]))[0]) for x in itertools.product(range(4), repeat=3)])
    assert 0.5 * np.abs(emp - exact).sum() < 0.02


def test_bad_inputs() -> None:
    f = Ehrlich(num_states=4, dim=6, num_motifs=1, motif_length=2, seed=0)
    with pytest.raises(ValueError, match="states in"):
        f(np.array([[0, 1, 2, 3, 4, 0]]))
    with pytest.raises(ValueError, match="6 columns"):
        f(np.zeros((2, 5), dtype=int))
    with pytest.raises(ValueError, match="dim must be"):
        Ehrlich(num_states=4, dim=3, num_motifs=2, motif_length=2)
    with pytest.raises(ValueError, match="spacings"):
        Ehrlich.from_parts(P4, motifs=[[1, 2]], spacings=[[0, 0]], dim=5)
