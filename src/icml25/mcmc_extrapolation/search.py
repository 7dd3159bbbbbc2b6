"""Baselines at a matched evaluation budget: MH best-so-far and random-mutation hill climbing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int

from .mcmc import Chains

__all__ = ["mh_best_at_budget", "hill_climb"]


def mh_best_at_budget(chains: Chains, budget: int) -> np.ndarray:
    """(n,) best score of every chain within its first ``budget`` proposals (one evaluation each)."""
    budget = check_int(budget, "budget", low=0)
    if budget >= chains.scores.shape[1]:
        raise ValueError(f"budget must be < the chains' length {chains.scores.shape[1]}, got {budget}")
    return chains.scores[:, : budget + 1].max(axis=1)


def hill_climb(f: Callable[[np.ndarray], np.ndarray], x0: Any, num_states: int, budget: int,
               seed: Any = None) -> np.ndarray:
    """Random-mutation hill climbing: mutate one random position, keep if the score does not drop.

    Returns the (n,) final scores after ``budget`` evaluations per sequence (infeasible mutants are rejected).
    """
    X = check_array(x0, "x0", ndim=2, dtype=np.int64)
    v = check_int(num_states, "num_states", low=2)
    budget = check_int(budget, "budget", low=1)
    rng = np.random.default_rng(seed)
    n, L = X.shape
    s = np.asarray(f(X), dtype=float)
    for _ in range(budget):
        Y = X.copy()
        Y[np.arange(n), rng.integers(L, size=n)] = rng.integers(v, size=n)
        sy = np.asarray(f(Y), dtype=float)
        keep = sy >= s
        X = np.where(keep[:, None], Y, X)
        s = np.where(keep, sy, s)
    return s
