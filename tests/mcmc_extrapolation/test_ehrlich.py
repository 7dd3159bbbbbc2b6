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


def _allowed(k: int, q: int) -> bool:
    return k % -(-k // q) == 0


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_optimal_solution_is_the_brute_force_optimum_for_every_allowed_quantization(k: int) -> None:
    """For every (k, q) the constructor accepts, the brute-force maximum over all v^L sequences is 1 and
    optimal_solution() attains it; the (k, q) whose full motif would score below 1 are refused."""
    for q in range(1, k + 1):
        if not _allowed(k, q):
            with pytest.raises(ValueError, match="quantization must make"):
                Ehrlich(num_states=3, dim=k + 2, num_motifs=1, motif_length=k, quantization=q)
            continue
        for c, dim in ((1, k + 2), (2, 2 * k + 1)):
            if dim > 8:
                continue
            for seed in range(3):
                f = Ehrlich(num_states=3, dim=dim, num_motifs=c, motif_length=k, quantization=q, seed=seed)
                X = np.array(list(itertools.product(range(3), repeat=dim)))
                assert f(X).max() == 1.0, (k, q, c, seed)
                opt = f.optimal_solution()
                assert f(opt[None])[0] == 1.0 and f.is_feasible(opt[None])[0], (k, q, c, seed)


def test_refused_quantizations_name_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match=r"use one of \[1, 3\], got 2"):
        Ehrlich(num_states=4, dim=6, num_motifs=1, motif_length=3, quantization=2)
    with pytest.raises(ValueError, match="quantization must make"):
        Ehrlich.from_parts(P4, motifs=[[1, 2, 3, 0, 1]], spacings=[[0, 1, 2, 3, 4]], dim=8, quantization=3)


def test_optimal_solution_refuses_from_parts_instances_without_one() -> None:
    f = Ehrlich.from_parts(P4, motifs=[[1, 2], [3, 0]], spacings=[[0, 3], [0, 3]], dim=7)
    with pytest.raises(ValueError, match="need 8 positions"):
        f.optimal_solution()
    g = Ehrlich.from_parts(P4, motifs=[[0, 2]], spacings=[[0, 1]], dim=4)  # 0 -> 2 is banned
    with pytest.raises(ValueError, match="infeasible"):
        g.optimal_solution()


def test_same_values_as_holo_bench() -> None:
    """Side by side with the authors' own Ehrlich (``pytorch-holo``): our function built with ``from_parts`` from
    holo's transition matrix, motifs and spacings (holo stores the gaps between motif elements; ``from_parts`` takes
    cumulative offsets) gives holo's values on random and optimal sequences."""
    closed_form = pytest.importorskip("holo.test_functions.closed_form",
                                      reason="pytorch-holo (and its botorch dependency) is not installed")
    import torch

    for v, L, c, k, seed in ((6, 12, 2, 3, 0), (12, 16, 1, 4, 1), (20, 32, 2, 4, 2), (8, 24, 3, 4, 3)):
        h = closed_form.Ehrlich(num_states=v, dim=L, num_motifs=c, motif_length=k, random_seed=seed)
        P = h.transition_matrix.double().numpy()
        offsets = [np.concatenate([[0], np.cumsum(g.numpy())]) for g in h.spacings]
        ours = Ehrlich.from_parts(P / P.sum(axis=1, keepdims=True), motifs=[m.numpy() for m in h.motifs],
                                  spacings=offsets, dim=L)
        rng = np.random.default_rng(seed)
        X = np.concatenate([ours.sample_prior(150, seed=rng), rng.integers(0, v, size=(50, L)),
                            h.optimal_solution().numpy()[None]])
        theirs = h.evaluate_true(torch.as_tensor(X)).double().numpy()
        mine = ours(X)
        np.testing.assert_array_equal(np.isfinite(mine), np.isfinite(theirs))  # the same infeasible rows
        ok = np.isfinite(mine)
        np.testing.assert_allclose(mine[ok], theirs[ok], rtol=1e-6)  # holo computes in float32
        assert ours(X[-1:])[0] == 1.0
