"""MH exactness on an enumerable space, state selection rules, baselines."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from icml25.mcmc_extrapolation import (
    Ehrlich,
    EnergyModel,
    MarkovPriorGibbsProposal,
    MaskInfillProposal,
    MetropolisHastings,
    episodes_from_chains,
    hill_climb,
    mh_best_at_budget,
    select_states,
    transitions,
)


def _exact_target(f, beta):
    X = np.array(list(itertools.product(range(f.num_states), repeat=f.dim)))
    logp = f.log_prior(X) + beta * np.where(f.is_feasible(X), f(X), 0.0)
    p = np.exp(logp - logp.max())
    return X, p / p.sum()


@pytest.mark.parametrize("n_sites", [1, 2])
def test_mh_samples_the_exact_target(n_sites: int) -> None:
    P = np.array([[0.6, 0.4, 0.0], [0.1, 0.4, 0.5], [0.3, 0.3, 0.4]])
    f = Ehrlich.from_parts(P, motifs=[[2, 0]], spacings=[[0, 1]], dim=4)
    X, target = _exact_target(f, beta=3.0)
    mh = MetropolisHastings(f, MarkovPriorGibbsProposal(P, f.initial_dist, n_sites), beta=3.0)
    ch = mh.run(f.sample_prior(2000, seed=1), 80, seed=2)
    s = ch.states[:, 20:].reshape(-1, 4).astype(int) @ (3 ** np.arange(3, -1, -1))
    emp = np.bincount(s, minlength=81) / len(s)
    assert 0.5 * np.abs(emp - target).sum() < 0.03
    assert 0 < ch.acceptance_rate < 1


def test_mask_infill_proposal_with_hastings_correction_is_exact() -> None:
    """A uniform infill (not prior-reversible) plus the prior correction targets prior·exp(βf) exactly."""
    P = np.array([[0.6, 0.4, 0.0], [0.1, 0.4, 0.5], [0.3, 0.3, 0.4]])
    f = Ehrlich.from_parts(P, motifs=[[2, 0]], spacings=[[0, 1]], dim=4)
    X, target = _exact_target(f, beta=1.0)

    def uniform_infill(x, pos, rng):
        y = x.copy()
        rows = np.arange(len(x))[:, None]
        y[rows, pos] = rng.integers(0, 3, size=pos.shape)
        return y, np.zeros(len(x)), np.zeros(len(x))  # symmetric proposal

    energy = EnergyModel([(1.0, f)])
    prop = MaskInfillProposal(uniform_infill, n_positions=1, log_prior_fn=f.log_prior)
    mh = MetropolisHastings(energy, prop, beta=1.0)
    ch = mh.run(f.sample_prior(2000, seed=3), 120, seed=4)
    s = ch.states[:, 40:].reshape(-1, 4).astype(int) @ (3 ** np.arange(3, -1, -1))
    emp = np.bincount(s, minlength=81) / len(s)
    assert 0.5 * np.abs(emp - target).sum() < 0.04


def test_infeasible_starts_are_refused() -> None:
    f = Ehrlich.from_parts(np.array([[0.5, 0.5], [1.0, 0.0]]), motifs=[[0, 1]], spacings=[[0, 1]], dim=3)
    mh = MetropolisHastings(f, MarkovPriorGibbsProposal(f.transition_matrix, f.initial_dist), beta=1)
    with pytest.raises(ValueError, match="infeasible"):
        mh.run(np.array([[1, 1, 0]]), 3)


CHAIN = np.array([0.1, 0.1, 0.3, 0.2, 0.3, 0.5, 0.4, 0.9, 0.9])


@pytest.mark.parametrize("strategy,kwargs,expected", [
    ("improve", {}, [0, 2, 5, 7]),
    ("improve", {"delta": 0.25}, [0, 5, 7]),
    ("improve", {"k_max": 3}, [0, 5, 7]),           # 4 records sub-sampled evenly to 3
    ("improve_topk", {"k_max": 3}, [0, 5, 7]),      # the two largest gains: 0.3 -> 0.5? no: 0.5 -> 0.9 and 0.1 -> 0.3
    ("uniform", {"k_max": 5}, [0, 2, 4, 6, 8]),
    ("endpoints", {}, [0, 7]),
])
def test_selection_rules(strategy: str, kwargs: dict, expected: list[int]) -> None:
    got = select_states(CHAIN, strategy, **kwargs)
    if strategy == "improve_topk":
        gains = {(0, 2): 0.2, (2, 5): 0.2, (5, 7): 0.4}
        assert got[0] == 0 and len(got) == 3 and (got[-2], got[-1]) in gains
        return
    assert got == expected


def test_random_selection_and_episodes() -> None:
    idx = select_states(CHAIN, "random", k_max=4, seed=0)
    assert idx[0] == 0 and len(idx) == 4 and idx == sorted(set(idx))
    states = np.arange(2 * 9 * 3).reshape(2, 9, 3) % 5
    scores = np.stack([CHAIN, np.zeros(9)])
    eps = episodes_from_chains(states, scores, "improve")
    assert len(eps) == 1  # the flat chain has no improvement
    prev, nxt = transitions(eps)
    np.testing.assert_array_equal(prev, states[0, [0, 2, 5]])
    np.testing.assert_array_equal(nxt, states[0, [2, 5, 7]])
    with pytest.raises(ValueError, match="empty"):
        transitions([])


def test_baselines_monotone() -> None:
    f = Ehrlich(8, 12, 1, 3, seed=0)
    X = f.sample_prior(10, seed=0)
    mh = MetropolisHastings(f, MarkovPriorGibbsProposal(f.transition_matrix, f.initial_dist), beta=50)
    ch = mh.run(X, 40, seed=0)
    a, b = mh_best_at_budget(ch, 10), mh_best_at_budget(ch, 40)
    assert np.all(b >= a) and np.all(a >= f(X))
    hc = hill_climb(f, X, 8, 30, seed=0)
    assert np.all(hc >= f(X))


def test_energy_model_checks_terms() -> None:
    f = Ehrlich(4, 6, 1, 2, seed=0)
    x = f.sample_prior(3, seed=0)
    np.testing.assert_allclose(EnergyModel([(2.0, f), (-1.0, f.log_prior)])(x), 2 * f(x) - f.log_prior(x))
    with pytest.raises(ValueError, match="weight"):
        EnergyModel([(float("nan"), f)])
    with pytest.raises(TypeError, match="callable"):
        EnergyModel([(1.0, "f")])
    with pytest.raises(ValueError, match="at least one"):
        EnergyModel([])
