"""TEDUO step 3 data (§4.3): D_SFT = {(goal, raw state, optimal action)} from greedy rollouts of the per-goal
policies in the *empirical* abstract MDP (offline: the next abstract state is a successor observed in D for
(s^g, a); a rollout stops when the proxy labels the goal reached, at an unobserved (s^g, a), or at the horizon).

Each kept example is a dataset state s (raw, as the policy sees it at test time), a training goal g, and the greedy
action a* = argmax_a Q_g(F(s; g), a) of a rollout that reaches the goal. The first step shows the start state
itself; a later step of the offline rollout has only an abstract state s^g_k, so it is shown through a dataset
state drawn among those with F(s; g) = s^g_k (``whole_rollouts=True``; the goal-relevant content is identical).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from icml25.core.validation import check_int

from .babyai import SymbolicState, parse_goal
from .data import OfflineDataset
from .labeling import GoalMDP
from .tabular import TabularQ

__all__ = ["SFTExample", "build_sft_dataset", "rollout_empirical"]


@dataclass(frozen=True)
class SFTExample:
    """One supervised example: goal string, raw state, optimal action index, rollout length to the goal."""

    goal: str
    state: SymbolicState
    action: int
    steps_to_goal: int


def _successors(m: GoalMDP, n_actions: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    sa = m.s * n_actions + m.a
    order = np.argsort(sa, kind="stable")
    keys, starts = np.unique(sa[order], return_index=True)
    ends = np.r_[starts[1:], len(order)]
    return {int(k): (m.s_next[order[b:e]], m.r[order[b:e]]) for k, b, e in zip(keys, starts, ends)}


def rollout_empirical(q: TabularQ, m: GoalMDP, start: int, horizon: int, rng: np.random.Generator,
                      successors: dict[int, tuple[np.ndarray, np.ndarray]] | None = None
                      ) -> tuple[list[int], bool]:
    """Greedy rollout of Q's policy from abstract state id ``start`` in the empirical MDP of ``m``.

    Returns the list of actions taken and whether the last successor is labelled as the goal.
    """
    acts, _, ok = _rollout(q, m, start, horizon, rng, successors)
    return acts, ok


def _rollout(q: TabularQ, m: GoalMDP, start: int, horizon: int, rng: np.random.Generator,
             successors: dict[int, tuple[np.ndarray, np.ndarray]] | None = None
             ) -> tuple[list[int], list[int], bool]:
    check_int(horizon, "horizon", low=1)
    check_int(start, "start", low=0, high=m.n_states - 1)
    n_actions = q.Q_.shape[1]
    succ = successors if successors is not None else _successors(m, n_actions)
    s, acts, path = int(start), [], []
    for _ in range(horizon):
        row = q.Q_[s]
        if not np.any(row != 0):
            return acts, path, False
        best = np.flatnonzero(row == row.max())
        a = int(best[rng.integers(len(best))])
        nxt = succ.get(s * n_actions + a)
        if nxt is None:
            return acts, path, False
        acts.append(a)
        path.append(s)
        j = int(rng.integers(len(nxt[0])))
        if nxt[1][j]:
            return acts, path, True
        s = int(nxt[0][j])
    return acts, path, False


def build_sft_dataset(dataset: OfflineDataset, mdps: dict[str, GoalMDP], qs: dict[str, TabularQ],
                      n_starts: int = 600, goals_per_start: int = 6, horizon: int = 40, random_state: int = 0,
                      whole_rollouts: bool = True) -> list[SFTExample]:
    """D_SFT: ``n_starts`` dataset states, each with up to ``goals_per_start`` training goals whose object it
    contains; one example per step of each successful empirical rollout (``whole_rollouts``; otherwise one per
    rollout, its first step) (TEDUO §4.3).

    Examples
    --------
    >>> from icml25.teduo import OfflineDataset, HindsightLabeler, RuleBackend, TabularQ
    >>> ds = OfflineDataset.collect(n_episodes=40, seed=0)
    >>> c, t, _, _ = ds.episodes[0]["observations"][0].objects[0]
    >>> goal = f"go to the {c} {t}"
    >>> lab = HindsightLabeler(RuleBackend(), label_fraction=0.5).fit(ds, [goal])
    >>> m = lab.mdps_[goal]
    >>> qs = {goal: TabularQ().fit(m.s, m.a, m.r, m.s_next, m.n_states)}
    >>> ex = build_sft_dataset(ds, lab.mdps_, qs, n_starts=200)
    >>> len(ex) > 0 and all(e.goal == goal for e in ex)
    True
    """
    check_int(n_starts, "n_starts", low=1)
    check_int(goals_per_start, "goals_per_start", low=1)
    check_int(horizon, "horizon", low=1)
    if not mdps:
        raise ValueError("mdps is empty; label the dataset first (HindsightLabeler.fit)")
    missing = [g for g in mdps if g not in qs]
    if missing:
        raise ValueError(f"qs has no Q-table for the goals {missing[:3]}")
    tr = dataset.transitions()
    states: Sequence[SymbolicState] = tr["states"]
    rng = np.random.default_rng(random_state)
    succ = {g: _successors(m, qs[g].Q_.shape[1]) for g, m in mdps.items()}
    goals = list(mdps)
    reached = {g: set(m.s_next[m.r].tolist()) for g, m in mdps.items()}  # abstract states labelled as the goal
    reps: dict[str, dict[int, np.ndarray]] = {}  # abstract id -> raw dataset states with that abstraction
    for g, m in mdps.items():
        raw = tr["s"][m.transition_ids]
        order = np.argsort(m.s, kind="stable")
        keys, starts = np.unique(m.s[order], return_index=True)
        reps[g] = {int(k): raw[order[b:e]] for k, b, e in zip(keys, starts, np.r_[starts[1:], len(order)])}
    out: list[SFTExample] = []
    for i in rng.choice(len(states), min(n_starts, len(states)), replace=False):
        st = states[int(i)]
        cands = []
        for g in goals:
            v = mdps[g].abstraction(st)
            j = mdps[g].index.get(v) if v is not None else None
            if j is not None and j not in reached[g]:
                cands.append((g, j))
        rng.shuffle(cands)
        for g, j in cands[:goals_per_start]:
            acts, path, ok = _rollout(qs[g], mdps[g], j, horizon, rng, succ[g])
            if not ok:
                continue
            text = parse_goal(g).text
            out.append(SFTExample(text, st, acts[0], len(acts)))
            for k in range(1, len(acts) if whole_rollouts else 1):
                pool = reps[g][path[k]]
                rep_state = states[int(pool[rng.integers(len(pool))])]
                out.append(SFTExample(text, rep_state, acts[k], len(acts) - k))
    if not out:
        raise ValueError("no rollout reached a goal; the data, labels or Q-tables are empty")
    return out
