"""TabularCMDP and the test environments against independent references: empirical transition frequencies,
the spec's closed forms for Env R, and the Garnet construction's invariants."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.risk_cmdp import TabularCMDP, env_garnet, env_risky_safe


def test_env_r_matches_the_spec() -> None:
    env = env_risky_safe()
    assert (env.S, env.A, env.H, env.s1) == (4, 2, 5, 0) and env.homogeneous
    # safe -> steady surely; risky -> good or bad with probability 1/2 (spec §5)
    assert np.all(env.P[:, :, 0, 3] == 1.0) and np.all(env.P[:, :, 1, 1] == 0.5) and np.all(env.P[:, :, 1, 2] == 0.5)
    # both actions have the same mean utility, so E[G] does not depend on the policy: E[g(next)] = 0.5
    g_next = env.P[0] @ env.g[0, :, 0]
    assert np.allclose(g_next, 0.5)


def test_step_frequencies_match_P_and_episodes_end_after_H() -> None:
    env = env_garnet(2)
    counts = np.zeros(env.S)
    n = 4000
    for k in range(n):
        s, _ = env.reset(seed=k) if k == 0 else env.reset()
        s2, rew, done, trunc, info = env.step(1)
        counts[s2] += 1
        assert rew == env.r[0, s, 1] and info["utility"] == env.g[0, s, 1] and not trunc and not done
    # the first transition from s1 with action 1 follows P[0, s1, 1] (binomial standard error ~ 0.008)
    assert np.max(np.abs(counts / n - env.P[0, env.s1, 1])) < 0.03
    env.reset()
    for h in range(env.H):
        _, _, done, _, _ = env.step(0)
        assert done == (h == env.H - 1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_same_seed_same_trajectory() -> None:
    def trajectory(seed: int) -> list[int]:
        env = env_garnet(0)
        env.reset(seed=seed)
        return [env.step(a % env.A)[0] for a in range(env.H)]

    assert trajectory(7) == trajectory(7)


@pytest.mark.parametrize("seed", [0, 1, 4])
def test_garnet_invariants(seed: int) -> None:
    env = env_garnet(seed, S=6, A=2, n_successors=3)
    P = env.P[0]
    assert np.allclose(P.sum(-1), 1.0)
    assert np.all((P > 0).sum(-1) == 3)  # exactly n_successors successors per (s, a)
    assert np.allclose(env.g * 10, np.round(env.g * 10))  # utilities on the 0.1 grid
    assert env.r.min() >= 0 and env.r.max() <= 1
    again = env_garnet(seed, S=6, A=2, n_successors=3)
    assert np.array_equal(env.P, again.P) and np.array_equal(env.g, again.g)


def test_time_inhomogeneous_model_is_kept() -> None:
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=(4, 3, 2))
    env = TabularCMDP(P, np.zeros((4, 3, 2)), np.zeros((4, 3, 2)), H=4)
    assert not env.homogeneous and np.array_equal(env.P, P)


def test_from_gymnasium_frozen_lake_matches_its_model() -> None:
    gym = pytest.importorskip("gymnasium")
    genv = gym.make("FrozenLake-v1", map_name="4x4", is_slippery=True)
    env = TabularCMDP.from_gymnasium(genv, H=6, utility_fn=lambda s, a: 0.0)
    P_dict = genv.unwrapped.P
    s, a = 5 - 1, 2
    expected = np.zeros(env.S)
    for prob, s2, _, _ in P_dict[s][a]:
        expected[s2] += prob
    assert np.allclose(env.P[0, s, a], expected)
    assert env.s1 == 0 and env.r.max() == pytest.approx(1.0)
