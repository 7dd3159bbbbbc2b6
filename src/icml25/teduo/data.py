"""Unlabelled offline BabyAI data (TEDUO §3 inputs): trajectories of states and actions, no rewards, no goal labels.

Episodes are stored in a Minari-style layout (``episode_<i>/observations`` with one more row than
``episode_<i>/actions``, ``terminations``/``truncations`` flags, dataset metadata) inside one ``.npz`` file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core.files import FileFormatError, read_npz
from icml25.core.progress import progress
from icml25.core.validation import check_array, check_int

from .babyai import ACTIONS, COLOURS, TYPES, SymbolicState, make_env, reset_env, state_from_env

__all__ = ["OfflineDataset", "encode_state", "decode_state", "MAX_OBJECTS"]

MAX_OBJECTS = 12  # object slots in the integer state encoding


def encode_state(s: SymbolicState) -> np.ndarray:
    """Integer vector of a state: ``[x, y, dir, carry_colour, carry_type, (colour, type, x, y) x MAX_OBJECTS]``,
    ``-1`` for empty fields; shape ``(5 + 4 * MAX_OBJECTS,)``, dtype int16."""
    if len(s.objects) > MAX_OBJECTS:
        raise ValueError(f"state has {len(s.objects)} objects, more than MAX_OBJECTS={MAX_OBJECTS}")
    v = np.full(5 + 4 * MAX_OBJECTS, -1, dtype=np.int16)
    v[:3] = (s.x, s.y, s.direction)
    if s.carrying is not None:
        v[3:5] = (COLOURS.index(s.carrying[0]), TYPES.index(s.carrying[1]))
    for k, (c, t, x, y) in enumerate(s.objects):
        v[5 + 4 * k: 9 + 4 * k] = (COLOURS.index(c), TYPES.index(t), x, y)
    return v


def decode_state(v: Any) -> SymbolicState:
    """Inverse of :func:`encode_state`."""
    v = check_array(v, "v", ndim=1, low=-1).astype(int)
    if v.shape != (5 + 4 * MAX_OBJECTS,):
        raise ValueError(f"v must have shape ({5 + 4 * MAX_OBJECTS},), got {v.shape}")
    carry = None if v[3] < 0 else (COLOURS[v[3]], TYPES[v[4]])
    objs = tuple((COLOURS[v[5 + 4 * k]], TYPES[v[6 + 4 * k]], int(v[7 + 4 * k]), int(v[8 + 4 * k]))
                 for k in range(MAX_OBJECTS) if v[5 + 4 * k] >= 0)
    return SymbolicState(int(v[0]), int(v[1]), int(v[2]), carry, objs)


@dataclass
class OfflineDataset:
    """Unlabelled trajectories ``{(s_t, a_t, s_{t+1})}`` plus a plain list of goals (TEDUO's input D, G_tr).

    Attributes
    ----------
    episodes : list of dict
        Each ``{"observations": list of SymbolicState (T+1), "actions": int array (T,), "seed": int}``.
    goals : list of str
        The goal list (not aligned with the trajectories: no labels).
    env_id : str
        The minigrid environment id.

    Examples
    --------
    >>> ds = OfflineDataset.collect(n_episodes=2, episode_length=5, seed=0)
    >>> ds.n_transitions, ds.transitions()["actions"].shape
    (10, (10,))
    """

    episodes: list[dict[str, Any]]
    goals: list[str] = field(default_factory=list)
    env_id: str = "BabyAI-PickupLoc-v0"
    _flat: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def collect(cls, n_episodes: int, episode_length: int = 57, seed: int = 0, goals: list[str] | None = None,
                env_id: str = "BabyAI-PickupLoc-v0", policy: Any = None, show_progress: bool = False
                ) -> OfflineDataset:
        """Roll out a behaviour policy (default: uniform random over left/right/forward/pickup) in seeded rooms.

        Parameters
        ----------
        n_episodes : int
            Number of episodes (room ``seed + i`` for episode ``i``).
        episode_length : int
            Steps per episode (the env's own mission and termination are ignored: no labels).
        seed : int
            Base seed (rooms and actions).
        goals : list of str, optional
            The goal list stored with the data (default: none).
        policy : callable, optional
            ``policy(state, rng) -> action index``; default uniform random.
        """
        check_int(n_episodes, "n_episodes", low=1)
        check_int(episode_length, "episode_length", low=1)
        check_int(seed, "seed", low=0)
        if not isinstance(env_id, str) or not env_id.startswith("BabyAI-"):
            raise ValueError(f"env_id must name a BabyAI single-room env such as 'BabyAI-PickupLoc-v0', got {env_id!r}")
        env = make_env(env_id)
        rng = np.random.default_rng(seed)
        episodes = []
        for i in progress(range(n_episodes), "collecting random episodes") if show_progress else range(n_episodes):
            s = reset_env(env, seed + i)
            obs, acts = [s], []
            for _ in range(episode_length):
                a = int(rng.integers(len(ACTIONS))) if policy is None else int(policy(s, rng))
                env.step(a)
                s = state_from_env(env)
                obs.append(s)
                acts.append(a)
            episodes.append({"observations": obs, "actions": np.asarray(acts, dtype=np.int64), "seed": seed + i})
        env.close()
        return cls(episodes, list(goals or []), env_id)

    @property
    def n_transitions(self) -> int:
        """Total number of transitions."""
        return sum(len(e["actions"]) for e in self.episodes)

    def transitions(self) -> dict[str, Any]:
        """Flattened transitions: ``states`` (unique SymbolicStates), ``s``/``s_next`` (indices into ``states``,
        shape (N,)), ``actions`` (N,), ``episode`` (N,), ``t`` (N,)."""
        if self._flat is None:
            if not self.episodes:
                raise ValueError("the dataset has no episodes; collect or load data first")
            index: dict[SymbolicState, int] = {}
            states: list[SymbolicState] = []

            def idx(s: SymbolicState) -> int:
                j = index.get(s)
                if j is None:
                    j = index[s] = len(states)
                    states.append(s)
                return j

            s, s2, a, ep, t = [], [], [], [], []
            for e_i, e in enumerate(self.episodes):
                obs = [idx(o) for o in e["observations"]]
                n = len(e["actions"])
                s += obs[:-1]
                s2 += obs[1:]
                a += list(e["actions"])
                ep += [e_i] * n
                t += list(range(n))
            self._flat = {"states": states, "s": np.asarray(s), "s_next": np.asarray(s2),
                          "actions": np.asarray(a, dtype=np.int64), "episode": np.asarray(ep), "t": np.asarray(t)}
        return self._flat

    def save(self, path: str | Path) -> Path:
        """Write the Minari-style ``.npz`` (``episode_<i>/observations|actions|terminations|truncations`` and
        ``metadata`` JSON: env id, goals, seeds; no rewards: the data is unlabelled)."""
        path = Path(path)
        arrays: dict[str, Any] = {}
        for i, e in enumerate(self.episodes):
            n = len(e["actions"])
            arrays[f"episode_{i}/observations"] = np.stack([encode_state(o) for o in e["observations"]])
            arrays[f"episode_{i}/actions"] = np.asarray(e["actions"], dtype=np.int64)
            arrays[f"episode_{i}/terminations"] = np.zeros(n, dtype=bool)
            arrays[f"episode_{i}/truncations"] = np.r_[np.zeros(n - 1, dtype=bool), True]
        meta = {"env_spec": self.env_id, "goals": self.goals, "seeds": [int(e["seed"]) for e in self.episodes],
                "total_episodes": len(self.episodes), "total_steps": self.n_transitions, "action_names": ACTIONS,
                "observation_encoding": "icml25.teduo.data.encode_state"}
        arrays["metadata"] = np.asarray(json.dumps(meta))
        np.savez_compressed(path, **arrays)
        return path

    @classmethod
    def load(cls, path: str | Path) -> OfflineDataset:
        """Read a file written by :meth:`save`.

        Raises ``FileNotFoundError`` for a missing file and ``ValueError`` (one line naming the file and what was
        expected) for a directory, a damaged archive, missing arrays or unreadable metadata; a malformed file is never
        partly read.
        """
        path = Path(path)
        what = "an .npz written by OfflineDataset.save (episode_<i>/observations, episode_<i>/actions, metadata)"
        if not path.exists():
            raise FileNotFoundError(f"path {str(path)!r} is not a file written by OfflineDataset.save; expected "
                                    f"an existing .npz file")
        z = read_npz(path, what, required=("metadata",))
        try:
            meta = json.loads(str(z["metadata"]))
            n_episodes, seeds = int(meta["total_episodes"]), [int(x) for x in meta["seeds"]]
            goals, env_id = [str(g) for g in meta["goals"]], str(meta["env_spec"])
            if len(seeds) != n_episodes:
                raise ValueError(f"{len(seeds)} seeds for {n_episodes} episodes")
        except (ValueError, KeyError, TypeError) as exc:
            raise FileFormatError(f"{path}: unreadable metadata ({type(exc).__name__}: {str(exc)[:60]}); "
                                  f"expected {what}") from None
        episodes = []
        for i in range(n_episodes):
            keys = (f"episode_{i}/observations", f"episode_{i}/actions")
            missing = [k for k in keys if k not in z]
            if missing:
                raise FileFormatError(f"{path}: no {missing[0]!r} array (the metadata lists {n_episodes} episodes); "
                                      f"expected {what}")
            obs, actions = z[keys[0]], z[keys[1]]
            if obs.ndim != 2 or actions.ndim != 1 or len(obs) != len(actions) + 1:
                raise FileFormatError(f"{path}: episode {i} has observations {obs.shape} and actions "
                                      f"{actions.shape}; expected one observation row more than actions")
            try:
                states = [decode_state(v) for v in obs]
            except (ValueError, TypeError, IndexError) as exc:
                raise FileFormatError(f"{path}: episode {i} holds an undecodable state ({str(exc)[:60]}); "
                                      f"expected {what}") from None
            episodes.append({"observations": states, "actions": actions, "seed": seeds[i]})
        return cls(episodes, goals, env_id)
