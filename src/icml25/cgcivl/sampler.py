"""Goal-conditioned batch sampler with hindsight relabelling (spec §2.1; OGBench ``GCDataset``/``HGCDataset``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_int, check_option, check_probability, check_real

from .data import check_dataset

__all__ = ["GCDataset", "GOAL_KINDS"]

#: value-goal kinds, in the order of ``goal_kind`` codes: current state, future state of the trajectory, random
GOAL_KINDS = ("cur", "traj", "rand")


class GCDataset:
    """Offline goal-conditioned dataset: samples transitions with relabelled value and actor goals.

    Value goals (spec §2.1): with probability ``p_cur`` the current state, ``p_traj`` a future state of the same
    trajectory at offset ~ Geometric(1 - discount) (clipped to the trajectory's last index), ``p_rand`` a uniformly
    random dataset state (a *cross-trajectory* goal, flagged ``is_cross``). Reward ``r = 0`` if the goal index is
    the current index else ``-1``; mask ``m = 1 - [success]``.

    Parameters
    ----------
    observations : array, shape (N, obs_dim)
    actions : array, shape (N, action_dim)
    terminals : array, shape (N,)
        1 at the last step of each trajectory.
    discount : float in (0, 1)
    p_cur, p_traj, p_rand : float
        Value-goal mixture (sums to 1; OGBench GCIVL: 0.2, 0.5, 0.3).
    actor_goals : {"stitch", "future"}
        ``future``: a uniformly drawn future state of the trajectory (navigate datasets); ``stitch``: that with
        probability 1/2, else a random dataset state (OGBench's stitch setting).
    subgoal_steps : int
        ``k`` of the hierarchical actor: ``subgoals`` = state ``min(i + k, end)``.
    random_state : int or Generator, optional

    Examples
    --------
    >>> obs = np.arange(20, dtype=float).reshape(10, 2)
    >>> ds = GCDataset(obs, np.zeros((10, 2)), np.r_[np.zeros(4), 1, np.zeros(4), 1], random_state=0)
    >>> b = ds.sample(8)
    >>> sorted(b)[:4], b["obs"].shape
    (['actions', 'actor_goals', 'goal_idx', 'goal_kind'], (8, 2))
    """

    def __init__(self, observations: Any, actions: Any, terminals: Any, *, discount: float = 0.99,
                 p_cur: float = 0.2, p_traj: float = 0.5, p_rand: float = 0.3, actor_goals: str = "stitch",
                 subgoal_steps: int = 25, random_state: Any = None) -> None:
        self.observations, self.actions, self.terminals = check_dataset(observations, actions, terminals)
        self.discount = check_real(discount, "discount", low=0.0, high=1.0, low_open=True, high_open=True)
        p = [check_probability(v, n) for v, n in ((p_cur, "p_cur"), (p_traj, "p_traj"), (p_rand, "p_rand"))]
        if abs(sum(p) - 1.0) > 1e-6:
            raise ValueError(f"p_cur + p_traj + p_rand must sum to 1, got {sum(p)}")
        self.probs = np.array(p)
        self.actor_goals = check_option(actor_goals, "actor_goals", ("stitch", "future"))
        self.subgoal_steps = check_int(subgoal_steps, "subgoal_steps", low=1)
        self.rng = check_random_state(random_state)
        ends = np.nonzero(self.terminals)[0]
        idx = np.arange(len(self.terminals))
        self.ends = ends[np.searchsorted(ends, idx)]  # index of the trajectory's last step
        self.valid = np.nonzero(self.terminals == 0)[0]  # i with i+1 in the same trajectory
        if len(self.valid) == 0:
            raise ValueError("terminals must leave at least one transition inside a trajectory (all steps are ends)")

    def __len__(self) -> int:
        return len(self.observations)

    def sample(self, batch_size: int, rng: Any = None) -> dict[str, np.ndarray]:
        """Draw ``batch_size`` transitions with value/actor goals.

        Returns
        -------
        dict of arrays: ``obs``, ``next_obs``, ``actions``, ``value_goals``, ``actor_goals``, ``subgoals``
        (B, dim) float32; ``rewards``, ``masks`` (B,) float32; ``is_cross`` (B,) bool; ``goal_kind`` (B,) int
        (index into :data:`GOAL_KINDS`); ``idx``, ``goal_idx`` (B,) int.
        """
        B = check_int(batch_size, "batch_size", low=1)
        rng = self.rng if rng is None else check_random_state(rng)
        i = self.valid[rng.integers(len(self.valid), size=B)]
        end = self.ends[i]
        kind = rng.choice(3, size=B, p=self.probs)
        traj = np.minimum(i + rng.geometric(1.0 - self.discount, size=B), end)
        rand = rng.integers(len(self), size=B)
        goal = np.where(kind == 0, i, np.where(kind == 1, traj, rand))
        success = (goal == i).astype(np.float32)
        future = i + 1 + np.floor(rng.random(B) * (end - i)).astype(int)  # uniform over (i, end]
        if self.actor_goals == "stitch":
            future = np.where(rng.random(B) < 0.5, future, rng.integers(len(self), size=B))
        sub = np.minimum(i + self.subgoal_steps, end)
        o = self.observations
        return {"obs": o[i], "next_obs": o[i + 1], "actions": self.actions[i], "value_goals": o[goal],
                "actor_goals": o[future], "subgoals": o[sub], "rewards": success - 1.0, "masks": 1.0 - success,
                "is_cross": kind == 2, "goal_kind": kind, "idx": i, "goal_idx": goal}
