"""Closed-loop evaluation of goal-conditioned policies in new BabyAI rooms, and the tabular goal-conditioned agents.

Protocol (spec §6): rooms with seeds >= 10,000 (never in the data), a goal drawn uniformly among the evaluated goal
pool's goals whose object is in the room (and not already achieved), horizon 40, success = the rule judge says the
goal is reached. Policies implement ``act_batch(states, goals, rng) -> list[int]`` (indices into ACTIONS).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from icml25.core.progress import progress
from icml25.core.validation import check_int

from .babyai import ACTIONS, goal_reached, make_env, parse_goal, reset_env, state_from_env
from .tabular import TabularPolicy

_NOOP = 6  # minigrid's "done" action: changes nothing (what an invalid LM output executes)

__all__ = ["RandomPolicy", "GoalTabularAgent", "evaluate", "draw_episodes"]


class RandomPolicy:
    """Uniform random actions (the reference baseline)."""

    def act_batch(self, states: Sequence[Any], goals: Sequence[str], rng: np.random.Generator) -> list[int]:
        """One uniformly random action per state."""
        return [int(rng.integers(len(ACTIONS))) for _ in states]


class GoalTabularAgent:
    """Per-goal tabular policies (GCRL: greedy Q; GCBC: sampled counts) behind one goal-conditioned interface.

    Goals without a policy (unseen goals) act at random: per-goal policies do not generalise (TEDUO §4.2).

    Parameters
    ----------
    policies : dict of str -> (AbstractionFn, TabularPolicy)
    """

    def __init__(self, policies: dict[str, tuple[Any, TabularPolicy]]):
        if not isinstance(policies, dict):
            raise TypeError(f"policies must be a dict goal -> (abstraction, TabularPolicy), got "
                            f"{type(policies).__name__}")
        self.policies = {parse_goal(g).text: p for g, p in policies.items()}

    def act_batch(self, states: Sequence[Any], goals: Sequence[str], rng: np.random.Generator) -> list[int]:
        """Each state's action under its goal's policy (random when the goal or the state is unknown)."""
        out = []
        for s, g in zip(states, goals):
            p = self.policies.get(g)
            if p is None:
                out.append(int(rng.integers(len(ACTIONS))))
            else:
                fn, pol = p
                out.append(pol.act(fn(s), rng))
        return out


def draw_episodes(goal_pool: Sequence[str], n: int, seed: int = 10_000, env_id: str = "BabyAI-PickupLoc-v0"
                  ) -> list[tuple[int, str]]:
    """``n`` (room seed, goal) pairs: successive room seeds from ``seed``, goal uniform among the pool's goals
    whose object is present and not already achieved (rooms with none are skipped)."""
    check_int(n, "n", low=1)
    check_int(seed, "seed", low=0)
    pool = [parse_goal(g) for g in goal_pool]
    if not pool:
        raise ValueError("goal_pool must hold at least one goal")
    env = make_env(env_id)
    rng = np.random.default_rng(seed)
    out: list[tuple[int, str]] = []
    k = seed
    while len(out) < n:
        s = reset_env(env, k)
        present = {(c, t) for c, t, _, _ in s.objects}
        cands = [g.text for g in pool if (g.colour, g.type) in present and not goal_reached(s, g)]
        if cands:
            out.append((k, cands[int(rng.integers(len(cands)))]))
        k += 1
        if k - seed > 100 * n + 1000:
            raise ValueError(f"goal_pool {list(goal_pool)[:3]}... has no goal whose object appears in the rooms")
    env.close()
    return out


def evaluate(policy: Any, episodes: Sequence[tuple[int, str]], horizon: int = 40, seed: int = 0,
             batch: int = 50, env_id: str = "BabyAI-PickupLoc-v0", desc: str = "evaluating") -> dict[str, Any]:
    """Run ``policy`` closed loop on (room seed, goal) episodes, ``batch`` rooms in lockstep.

    Returns
    -------
    dict with ``success`` (mean), ``successes`` (bool array), ``episode_length`` (mean steps of successful
    episodes), ``invalid_rate`` (invalid actions / actions, when the policy counts them).
    """
    check_int(horizon, "horizon", low=1)
    check_int(batch, "batch", low=1)
    check_int(seed, "seed", low=0)
    if len(episodes) == 0:
        raise ValueError("episodes is empty; draw them with draw_episodes")
    rng = np.random.default_rng(seed)
    succ = np.zeros(len(episodes), dtype=bool)
    length = np.full(len(episodes), horizon)
    envs = [make_env(env_id) for _ in range(min(batch, len(episodes)))]
    n_invalid0 = getattr(policy, "n_invalid", 0)
    n_actions = 0
    for start in progress(range(0, len(episodes), batch), desc):
        chunk = list(episodes[start:start + batch])
        states = [reset_env(envs[i], k) for i, (k, _) in enumerate(chunk)]
        goals = [parse_goal(g).text for _, g in chunk]
        alive = list(range(len(chunk)))
        for step in range(horizon):
            acts = policy.act_batch([states[i] for i in alive], [goals[i] for i in alive], rng)
            n_actions += len(alive)
            still = []
            for i, a in zip(alive, acts):
                envs[i].step(int(a) if a is not None and 0 <= int(a) < len(ACTIONS) else _NOOP)
                states[i] = state_from_env(envs[i])
                if goal_reached(states[i], goals[i]):
                    succ[start + i] = True
                    length[start + i] = step + 1
                else:
                    still.append(i)
            alive = still
            if not alive:
                break
    for e in envs:
        e.close()
    invalid = getattr(policy, "n_invalid", 0) - n_invalid0
    return {"success": float(succ.mean()), "successes": succ,
            "episode_length": float(length[succ].mean()) if succ.any() else float("nan"),
            "invalid_rate": invalid / max(1, n_actions)}
