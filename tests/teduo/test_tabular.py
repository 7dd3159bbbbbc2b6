"""Tabular Q-learning against value iteration on small known MDPs; GCBC's window; the greedy policy's ties."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.teduo import TabularPolicy, TabularQ, gcbc_table


def _value_iteration(P: np.ndarray, R: np.ndarray, D: np.ndarray, gamma: float, iters: int = 2000) -> np.ndarray:
    """Q* of an explicit MDP: P[s, a, s'], R[s, a, s'], D[s, a, s'] (terminal) — the independent reference."""
    Q = np.zeros(P.shape[:2])
    for _ in range(iters):
        V = Q.max(axis=1)
        Q = np.einsum("ijk,ijk->ij", P, R + gamma * (1 - D) * V[None, None, :])
    return Q


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_q_equals_value_iteration_on_empirical_mdp(seed: int) -> None:
    rng = np.random.default_rng(seed)
    nS, nA, m = 6, 3, 400
    s = rng.integers(nS, size=m)
    a = rng.integers(nA, size=m)
    s2 = rng.integers(nS, size=m)
    r = (s2 == 5).astype(float)  # state 5 is the goal
    q = TabularQ(gamma=0.8, max_sweeps=2000, tol=1e-12).fit(s, a, r, s2, nS, nA)
    P = np.zeros((nS, nA, nS))
    np.add.at(P, (s, a, s2), 1.0)
    seen = P.sum(-1, keepdims=True) > 0
    P = np.where(seen, P / np.maximum(P.sum(-1, keepdims=True), 1), 0)
    R = np.zeros((nS, nA, nS))
    R[:, :, 5] = 1
    ref = _value_iteration(P, R, R, 0.8)
    np.testing.assert_allclose(q.Q_, ref, atol=1e-8)


def test_deterministic_chain_closed_form() -> None:
    """A chain 0 -> 1 -> ... -> 4 (goal): Q(k, forward) = gamma^(3-k); the unseen action keeps 0 (pessimism)."""
    s = np.arange(4)
    q = TabularQ(gamma=0.9).fit(s, np.zeros(4, int), (s + 1 == 4).astype(float), s + 1, 5, 2)
    np.testing.assert_allclose(q.Q_[:4, 0], 0.9 ** (3 - s))
    assert not q.seen_[:, 1].any() and np.all(q.Q_[:, 1] == 0)


def test_empty_transitions_rejected() -> None:
    with pytest.raises(ValueError, match="s"):
        TabularQ().fit([], [], [], [], 3, 2)


def test_greedy_ties_uniform_and_unknown_random() -> None:
    pol = TabularPolicy(np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]), {"a": 0, "b": 1})
    rng = np.random.default_rng(0)
    acts = [pol.act("a", rng) for _ in range(400)]
    assert set(acts) == {0, 1} and abs(np.mean(acts) - 0.5) < 0.1
    assert len({pol.act("b", rng) for _ in range(100)}) == 3 and not pol.known("zzz")


def test_gcbc_window() -> None:
    # one episode, goal first labelled at t = 5: only actions at t in (5 - 3, 5] are counted with window 3
    t = np.arange(8)
    counts = gcbc_table(t, np.ones(8, int), (t >= 5).astype(int), np.zeros(8, int), t, n_states=8, n_actions=2,
                        window=3)
    assert counts[:, 1].nonzero()[0].tolist() == [3, 4, 5]
