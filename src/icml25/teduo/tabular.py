"""TEDUO step 2 (§4.2): offline tabular Q-learning per goal on the abstract MDP, and the GCBC-tabular ablation.

Q_g(s, a) <- mean over the observed transitions from (s, a) of [r + gamma (1 - done) max_a' Q_g(s', a')], swept to
convergence: value iteration on the empirical (maximum-likelihood) MDP; with deterministic dynamics this is
Q-learning with learning rate 1. Unobserved (s, a) keep Q = 0 (pessimism); greedy ties are broken uniformly at random.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int, check_probability, check_real

from .babyai import ACTIONS

__all__ = ["TabularQ", "TabularPolicy", "gcbc_table"]


def _check_transitions(s: Any, a: Any, r: Any, s_next: Any, n_states: int, n_actions: int) -> tuple[np.ndarray, ...]:
    s = check_array(s, "s", ndim=1).astype(np.int64)
    a = check_array(a, "a", ndim=1).astype(np.int64)
    r = check_array(r, "r", ndim=1).astype(np.float64)
    s_next = check_array(s_next, "s_next", ndim=1).astype(np.int64)
    if not len(s) == len(a) == len(r) == len(s_next):
        raise ValueError(f"s, a, r, s_next must have the same length, got {len(s)}, {len(a)}, {len(r)}, "
                         f"{len(s_next)}")
    if len(s) == 0:
        raise ValueError("the transition arrays are empty; the goal's MDP has no data")
    for name, v, hi in (("s", s, n_states), ("s_next", s_next, n_states), ("a", a, n_actions)):
        if v.min() < 0 or v.max() >= hi:
            raise ValueError(f"{name} must hold ids in [0, {hi}), got range [{v.min()}, {v.max()}]")
    return s, a, r, s_next


class TabularQ:
    """Offline tabular Q-learning (value iteration on the empirical MDP), TEDUO step 2.

    Parameters
    ----------
    gamma : float
        Discount (0.9; not stated in the paper's available text).
    max_sweeps : int
        Maximum number of sweeps over the data.
    tol : float
        Stop when the largest Q change of a sweep is below ``tol``.

    Attributes
    ----------
    Q_ : array (n_states, n_actions)
    seen_ : bool array (n_states, n_actions)
        Pairs observed in the data.
    n_sweeps_ : int

    Examples
    --------
    >>> q = TabularQ(gamma=0.5).fit([0, 1], [0, 0], [0, 1], [1, 1], n_states=2, n_actions=1)
    >>> q.Q_[:, 0].tolist()
    [0.5, 1.0]
    """

    def __init__(self, gamma: float = 0.9, max_sweeps: int = 100, tol: float = 1e-6):
        self.gamma = check_probability(gamma, "gamma")
        self.max_sweeps = check_int(max_sweeps, "max_sweeps", low=1)
        self.tol = check_real(tol, "tol", low=0.0)

    def fit(self, s: Any, a: Any, r: Any, s_next: Any, n_states: int, n_actions: int = len(ACTIONS),
            done: Any = None) -> TabularQ:
        """Fit on transitions (ids): ``s, a, r, s_next`` of shape (m,); ``done`` defaults to ``r > 0``."""
        check_int(n_states, "n_states", low=1)
        check_int(n_actions, "n_actions", low=1)
        s, a, r, s_next = _check_transitions(s, a, r, s_next, n_states, n_actions)
        d = (r > 0) if done is None else check_array(done, "done", ndim=1).astype(bool)
        sa = s * n_actions + a
        count = np.bincount(sa, minlength=n_states * n_actions).astype(np.float64)
        seen = count > 0
        Q = np.zeros(n_states * n_actions)
        cont = self.gamma * (~d)
        self.n_sweeps_ = 0
        for _ in range(self.max_sweeps):
            V = Q.reshape(n_states, n_actions).max(axis=1)
            target = r + cont * V[s_next]  # Eq. (Q-update): r + gamma (1 - done) max_a' Q(s', a')
            new = np.zeros_like(Q)
            new[seen] = np.bincount(sa, weights=target, minlength=len(Q))[seen] / count[seen]
            delta = np.abs(new - Q).max()
            Q = new
            self.n_sweeps_ += 1
            if delta < self.tol:
                break
        self.Q_ = Q.reshape(n_states, n_actions)
        self.seen_ = seen.reshape(n_states, n_actions)
        return self


class TabularPolicy:
    """Greedy (or count-sampling) policy over a table indexed by abstract state ids; unknown states act at random.

    Parameters
    ----------
    table : array (n_states, n_actions)
        Q-values (``mode="greedy"``: argmax, ties uniformly at random; all-zero rows are unknown) or action counts
        (``mode="sample"``: sample proportionally; all-zero rows are unknown).
    index : dict
        Abstract state value -> row.
    mode : str
    """

    def __init__(self, table: Any, index: dict[Any, int], mode: str = "greedy"):
        self.table = check_array(table, "table", ndim=2)
        if mode not in ("greedy", "sample"):
            raise ValueError(f"mode must be 'greedy' or 'sample', got {mode!r}")
        self.index = index
        self.mode = mode

    def known(self, abstract_state: Any) -> bool:
        """Whether the state has a non-zero row."""
        j = self.index.get(abstract_state)
        return j is not None and bool(np.any(self.table[j] != 0))

    def act(self, abstract_state: Any, rng: np.random.Generator) -> int:
        """Action index for ``abstract_state``."""
        n = self.table.shape[1]
        if not self.known(abstract_state):
            return int(rng.integers(n))
        row = self.table[self.index[abstract_state]]
        if self.mode == "sample":
            return int(rng.choice(n, p=row / row.sum()))
        best = np.flatnonzero(row == row.max())
        return int(best[rng.integers(len(best))])


def gcbc_table(s: Any, a: Any, r: Any, episode: Any, t: Any, n_states: int, n_actions: int = len(ACTIONS),
               window: int = 10) -> np.ndarray:
    """GCBC-tabular counts: the dataset actions taken at most ``window`` steps before the first labelled goal
    state of each episode (imitation of the non-expert behaviour that led to the goal).

    Parameters
    ----------
    s, a : int arrays (m,)
        Abstract state ids and actions of one goal's transitions.
    r : bool array (m,)
        Goal labels of the next states.
    episode, t : int arrays (m,)
        Episode id and time step of each transition.

    Returns
    -------
    array (n_states, n_actions) of counts.
    """
    check_int(window, "window", low=1)
    check_int(n_states, "n_states", low=1)
    check_int(n_actions, "n_actions", low=1)
    s, a, r, _ = _check_transitions(s, a, r, s, n_states, n_actions)
    episode = np.asarray(episode)
    t = np.asarray(t)
    counts = np.zeros((n_states, n_actions))
    hit_t: dict[int, int] = {}
    for e, tt in zip(episode[r > 0], t[r > 0]):
        hit_t[int(e)] = min(hit_t.get(int(e), 1 << 30), int(tt))
    for i in range(len(s)):
        h = hit_t.get(int(episode[i]))
        if h is not None and h - window < t[i] <= h:
            counts[s[i], a[i]] += 1
    return counts
