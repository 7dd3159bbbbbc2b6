"""Exact references for the SIS chain on a star K_{1,L}: the lumped Markov chain on (hub infected?, number of
infected leaves), its quasi-stationary prevalence and the expected extinction time with the hub vaccinated.

Used by the reproduction's simulator checks (spec §6 check 1) as closed-form references, so the simulator is
never compared with itself.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

__all__ = ["star_chain", "star_quasi_stationary_prevalence", "star_hub_vaccinated_extinction_time"]


def star_chain(leaves: int, p_inf: float, p_rec: float, hub_vaccinated: bool = False) -> tuple[np.ndarray, list]:
    """Transition matrix of the synchronous SIS chain on K_{1,L}, lumped by symmetry of the leaves.

    State (h, j): h = 1 if the hub is infected, j = number of infected leaves (2(L+1) states). In one step
    (spec §2.1) every infected vertex recovers w.p. ``p_rec``; a susceptible leaf is infected w.p. ``p_inf``·h
    and a susceptible hub w.p. 1 − (1 − p_inf)^j (never when vaccinated), all from the state at time t.

    Returns
    -------
    Q : ndarray of shape (2(L+1), 2(L+1))
        Row-stochastic transition matrix.
    states : list of (h, j)
        The state of each row.
    """
    states = [(h, j) for h in (0, 1) for j in range(leaves + 1)]
    idx = {s: i for i, s in enumerate(states)}
    Q = np.zeros((len(states), len(states)))
    for (h, j), a in idx.items():
        p_hub = 0.0 if hub_vaccinated else 1.0 - (1.0 - p_inf) ** j
        hub_next = {0: p_rec, 1: 1.0 - p_rec} if h else {0: 1.0 - p_hub, 1: p_hub}
        for stay in range(j + 1):
            p_stay = binom.pmf(stay, j, 1.0 - p_rec)
            for new in range(leaves - j + 1):
                p = p_stay * binom.pmf(new, leaves - j, p_inf * h)
                for h2, ph in hub_next.items():
                    Q[a, idx[(h2, stay + new)]] += p * ph
    return Q, states


def star_quasi_stationary_prevalence(leaves: int, p_inf: float, p_rec: float) -> float:
    """Mean fraction of infected vertices of K_{1,L} under the exact quasi-stationary distribution.

    The quasi-stationary distribution is the left Perron vector of the chain restricted to the non-extinct
    states: the long-run law of the state conditioned on survival.
    """
    Q, states = star_chain(leaves, p_inf, p_rec)
    alive = [i for i, s in enumerate(states) if s != (0, 0)]
    vals, vecs = np.linalg.eig(Q[np.ix_(alive, alive)].T)
    qsd = np.abs(np.real(vecs[:, int(np.argmax(np.real(vals)))]))
    qsd /= qsd.sum()
    infected = np.array([(states[i][0] + states[i][1]) / (leaves + 1) for i in alive])
    return float(qsd @ infected)


def star_hub_vaccinated_extinction_time(leaves: int, p_inf: float, p_rec: float) -> float:
    """Exact E[τ] from all-infected on K_{1,L} with the hub vaccinated (fundamental matrix of the chain)."""
    Q, states = star_chain(leaves, p_inf, p_rec, hub_vaccinated=True)
    alive = [i for i, s in enumerate(states) if s != (0, 0)]
    times = np.linalg.solve(np.eye(len(alive)) - Q[np.ix_(alive, alive)], np.ones(len(alive)))
    return float(times[alive.index(states.index((1, leaves)))])
