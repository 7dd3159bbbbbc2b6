"""Phase 2 data: select states of MCMC chains and turn them into training episodes (spec §2.2, reconstructed).

The paper's Figure 1 says the training data are *selected states* of the chains, sub-sampled from the transitions
that improve the score; the exact rule is not public, so every rule of the spec is offered (``strategy``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int, check_option, check_real

__all__ = ["select_states", "episodes_from_chains", "transitions", "STRATEGIES"]

STRATEGIES = ("improve", "improve_topk", "uniform", "random", "endpoints")


def select_states(scores: Any, strategy: str = "improve", delta: float = 0.0, k_max: int = 8,
                  seed: Any = None) -> list[int]:
    """Indices of the states of one chain kept for its episode.

    Parameters
    ----------
    scores : (T+1,) array
        The chain's score at every step.
    strategy : {"improve", "improve_topk", "uniform", "random", "endpoints"}
        ``improve``: record-breaking states, each the first state scoring more than the last kept one plus
        ``delta``; ``improve_topk``: of those transitions, the ``k_max - 1`` with the largest gains (in order);
        ``uniform``: every ``T // (k_max - 1)``-th state; ``random``: ``k_max`` random indices (sorted, the first
        kept); ``endpoints``: the start and the best state.
    delta : float
        Minimum improvement for ``improve`` strategies.
    k_max : int
        Most states per episode (``improve`` sub-samples evenly when it finds more).

    Returns
    -------
    list of int
        Increasing indices starting at 0.
    """
    s = check_array(scores, "scores", ndim=1)
    strategy = check_option(strategy, "strategy", STRATEGIES)
    delta = check_real(delta, "delta", low=0.0)
    k_max = check_int(k_max, "k_max", low=2)
    T = len(s) - 1
    if strategy in ("improve", "improve_topk"):
        idx = [0]
        for t in range(1, T + 1):
            if s[t] > s[idx[-1]] + delta:
                idx.append(t)
        if len(idx) > k_max:
            if strategy == "improve_topk":
                gains = np.diff(s[idx])
                keep = np.sort(np.argsort(-gains, kind="stable")[: k_max - 1]) + 1
                idx = [0] + [idx[k] for k in keep]
            else:
                pick = np.unique(np.round(np.linspace(0, len(idx) - 1, k_max)).astype(int))
                idx = [idx[k] for k in pick]
        return idx
    if strategy == "uniform":
        step = max(1, T // (k_max - 1))
        return list(range(0, T + 1, step))[:k_max]
    if strategy == "random":
        rng = np.random.default_rng(seed)
        rest = rng.choice(np.arange(1, T + 1), size=min(k_max - 1, T), replace=False) if T else []
        return [0] + sorted(int(r) for r in rest)
    best = int(np.argmax(s))
    return [0, best] if best > 0 else [0]


def episodes_from_chains(states: Any, scores: Any, strategy: str = "improve", delta: float = 0.0, k_max: int = 8,
                         seed: Any = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Episodes ``(states (K, L), scores (K,))`` of every chain; episodes with fewer than 2 states are dropped.

    ``states`` is (n, T+1, L) and ``scores`` (n, T+1), as in :class:`~icml25.mcmc_extrapolation.Chains`.
    """
    S = check_array(states, "states", ndim=3, dtype=None)
    sc = check_array(scores, "scores", ndim=2)
    if sc.shape != S.shape[:2]:
        raise ValueError(f"scores must have shape {S.shape[:2]} (chains, steps), got {sc.shape}")
    rng = np.random.default_rng(seed)
    out = []
    for c in range(len(S)):
        idx = select_states(sc[c], strategy, delta, k_max, seed=rng)
        if len(idx) >= 2:
            out.append((np.asarray(S[c, idx], dtype=np.int64), sc[c, idx].copy()))
    return out


def transitions(episodes: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Consecutive pairs of every episode: ``(previous (N, L), next (N, L))`` (history of one state)."""
    if not episodes:
        raise ValueError("episodes is empty: no chain produced two selected states (run longer chains or more)")
    prev = np.concatenate([e[0][:-1] for e in episodes])
    nxt = np.concatenate([e[0][1:] for e in episodes])
    return prev, nxt
