"""Finite-horizon tabular CMDPs with a gymnasium-style interface, and the test environments of spec §5."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_array, check_int

__all__ = ["TabularCMDP", "env_risky_safe", "env_garnet"]


class TabularCMDP:
    """Episodic tabular MDP with a reward ``r`` and a utility ``g`` per step (spec §2.1).

    Parameters
    ----------
    P : array, shape (S, A, S) or (H, S, A, S)
        Transition probabilities ``P_h(s' | s, a)``; rows must sum to one.
    r, g : array, shape (S, A) or (H, S, A)
        Rewards and utilities in [0, 1].
    H : int
        Horizon.
    s1 : int
        Fixed initial state.

    The gymnasium-style ``reset``/``step`` return the state; ``step`` returns
    ``(state, reward, terminated, truncated, info)`` with the utility in ``info["utility"]``.
    """

    def __init__(self, P: Any, r: Any, g: Any, H: int, s1: int = 0, random_state: Any = None) -> None:
        H = check_int(H, "H", low=1)
        P = check_array(P, "P", ndim=(3, 4), low=0.0)
        r = check_array(r, "r", ndim=(2, 3), low=0.0, high=1.0)
        g = check_array(g, "g", ndim=(2, 3), low=0.0, high=1.0)
        if P.ndim == 3:
            P = np.broadcast_to(P, (H,) + P.shape)
        if r.ndim == 2:
            r = np.broadcast_to(r, (H,) + r.shape)
        if g.ndim == 2:
            g = np.broadcast_to(g, (H,) + g.shape)
        if P.ndim != 4 or P.shape[0] != H or P.shape[1] != P.shape[3]:
            raise ValueError(f"P must have shape (S, A, S) or (H, S, A, S), got {P.shape}")
        S, A = P.shape[1], P.shape[2]
        for name, x in (("r", r), ("g", g)):
            if x.shape != (H, S, A):
                raise ValueError(f"{name} must have shape ({S}, {A}) or ({H}, {S}, {A}), got {x.shape}")
        if np.max(np.abs(P.sum(-1) - 1)) > 1e-8:
            raise ValueError("P: every row P[h, s, a, :] must be a probability vector (non-negative, summing to 1)")
        s1 = check_int(s1, "s1", low=0, high=S - 1)
        self.P, self.r, self.g, self.H, self.s1 = P, r, g, int(H), int(s1)
        self.S, self.A = S, A
        self.homogeneous = bool(np.all(P == P[0]))
        self._rng = check_random_state(random_state)
        self._h = 0
        self._s = self.s1

    def reset(self, seed: int | None = None) -> tuple[int, dict]:
        """Start an episode at ``s1``."""
        if seed is not None:
            self._rng = check_random_state(seed)
        self._h, self._s = 0, self.s1
        return self._s, {"h": 0}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict]:
        """Take ``action`` at the current state; the episode ends after ``H`` steps."""
        if self._h >= self.H:
            raise RuntimeError("episode is over; call reset()")
        action = check_int(action, "action", low=0, high=self.A - 1)
        h, s = self._h, self._s
        rew, util = float(self.r[h, s, action]), float(self.g[h, s, action])
        self._s = int(self._rng.choice(self.S, p=self.P[h, s, action]))
        self._h += 1
        return self._s, rew, self._h >= self.H, False, {"utility": util, "h": self._h}

    @classmethod
    def from_gymnasium(cls, env: Any, H: int, utility_fn: Any, reward_scale: float | None = None) -> TabularCMDP:
        """Build from a discrete gymnasium env exposing ``env.unwrapped.P[s][a] = [(prob, s', reward, done)]``
        (FrozenLake, Taxi, CliffWalking); ``utility_fn(s, a) -> [0, 1]`` gives the utility. Rewards are
        expected rewards divided by ``reward_scale`` (default: the largest absolute reward)."""
        P_dict = getattr(env.unwrapped, "P", None)
        if P_dict is None:
            raise ValueError("the environment has no tabular model env.unwrapped.P; only discrete toy-text envs "
                             "are supported")
        S, A = env.observation_space.n, env.action_space.n
        P, r, g = np.zeros((S, A, S)), np.zeros((S, A)), np.zeros((S, A))
        for s in range(S):
            for a in range(A):
                for prob, s2, rew, _done in P_dict[s][a]:
                    P[s, a, s2] += prob  # terminal states of toy-text envs are absorbing
                    r[s, a] += prob * rew
                g[s, a] = utility_fn(s, a)
        scale = reward_scale or max(np.abs(r).max(), 1e-12)
        start = int(np.argmax(getattr(env.unwrapped, "initial_state_distrib", np.eye(S)[0])))
        return cls(P, np.clip(r / scale, 0, 1), g, H, start)


def env_risky_safe() -> TabularCMDP:
    """Env R of spec §5: hub/good/bad/steady states, safe vs risky action, H = 5 (same mean utility)."""
    S, A = 4, 2
    P = np.zeros((S, A, S))
    P[:, 0, 3] = 1.0  # safe -> steady
    P[:, 1, 1] = P[:, 1, 2] = 0.5  # risky -> good or bad
    r = np.tile([0.3, 1.0], (S, 1))
    g = np.repeat(np.array([0.5, 1.0, 0.0, 0.5])[:, None], A, axis=1)
    return TabularCMDP(P, r, g, H=5, s1=0)


def env_garnet(seed: int, S: int = 5, A: int = 3, H: int = 5, n_successors: int = 3) -> TabularCMDP:
    """Env G of spec §5: Garnet MDP, each (s, a) with ``n_successors`` random successors (Dirichlet(1) weights),
    ``r ~ U[0, 1]``, ``g`` uniform on ``{0, 0.1, ..., 1}``.

    Examples
    --------
    >>> env = env_garnet(0)
    >>> env.S, env.A, env.H
    (5, 3, 5)
    """
    seed = check_int(seed, "seed", low=0)
    S, A, H = check_int(S, "S", low=1), check_int(A, "A", low=1), check_int(H, "H", low=1)
    n_successors = check_int(n_successors, "n_successors", low=1, high=S)
    rng = np.random.default_rng(seed)
    P = np.zeros((S, A, S))
    for s in range(S):
        for a in range(A):
            succ = rng.choice(S, size=n_successors, replace=False)
            P[s, a, succ] = rng.dirichlet(np.ones(n_successors))
    r = rng.random((S, A))
    g = rng.integers(0, 11, size=(S, A)) / 10.0
    return TabularCMDP(P, r, g, H=H, s1=0)
