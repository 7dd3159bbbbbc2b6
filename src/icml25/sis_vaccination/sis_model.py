"""Discrete-time SIS epidemic on a graph, synchronous updates, vectorised over replicas (spec §2.1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_int

from ._validation import check_graph, check_probability

__all__ = ["SISModel", "ExtinctionTimes"]


@dataclass(frozen=True)
class ExtinctionTimes:
    """Extinction times of a batch of SIS replicas, censored at ``cap``.

    Attributes
    ----------
    times : ndarray of int, shape (reps,)
        τ = min{t : Y(t) = 0} per replica, or ``cap`` when the epidemic was still alive at ``cap``.
    censored : ndarray of bool, shape (reps,)
        True where the replica did not go extinct by ``cap``.
    cap : int
        The censoring time.
    """

    times: np.ndarray
    censored: np.ndarray
    cap: int

    @property
    def capped_mean(self) -> float:
        """Mean of min(τ, cap) (a lower bound on E[τ] when some replicas are censored)."""
        return float(np.mean(self.times))

    @property
    def median(self) -> float:
        """Median of min(τ, cap)."""
        return float(np.median(self.times))

    @property
    def fraction_censored(self) -> float:
        """Fraction of replicas still infected at ``cap``."""
        return float(np.mean(self.censored))


class SISModel:
    """The discrete-time SIS model of the 'Learn to Vaccinate' (ICML 2025) paper.

    Every step, synchronously: an infected vertex recovers with probability ``p_rec``; a susceptible,
    unvaccinated vertex v with m_v(t) infected neighbours becomes infected with probability
    1 − (1 − p_inf)^{m_v(t)} (each infected neighbour transmits independently). Vaccinated vertices can never be
    (re-)infected but recover normally. One uniform draw per vertex and step decides both events, so two models
    with the same seed share their random numbers (common random numbers across vaccination strategies).

    Parameters
    ----------
    graph : networkx.Graph
        Undirected contact graph without self-loops; vertex order is ``list(graph.nodes)``.
    p_inf : float in (0, 1)
        Per-edge, per-step transmission probability.
    p_rec : float in (0, 1)
        Per-step recovery probability.
    seed : int, numpy Generator or None
        Random source.

    Attributes
    ----------
    nodes : list
        Vertex labels in column order of the state arrays.
    state : ndarray of bool, shape (n,)
        Current infection state Y(t) (1 = infected). Starts all-infected.
    vaccinated : ndarray of bool, shape (n,)
        Vaccination mask.

    Examples
    --------
    >>> import networkx as nx
    >>> model = SISModel(nx.path_graph(5), p_inf=0.3, p_rec=0.2, seed=0)
    >>> model.run(10).shape
    (11, 5)
    """

    def __init__(self, graph: nx.Graph, p_inf: float, p_rec: float, seed: Any = None) -> None:
        check_graph(graph)
        self.p_inf = check_probability(p_inf, "p_inf")
        self.p_rec = check_probability(p_rec, "p_rec")
        self.nodes = list(graph.nodes)
        self._index = {v: i for i, v in enumerate(self.nodes)}
        n = len(self.nodes)
        self.adjacency = scipy.sparse.csr_matrix(
            nx.to_scipy_sparse_array(graph, nodelist=self.nodes, dtype=np.float64, weight=None, format="csr"))
        self._log_escape = np.log1p(-self.p_inf)
        self.rng = check_random_state(seed)
        self.vaccinated = np.zeros(n, dtype=bool)
        self.state = np.ones(n, dtype=bool)

    @property
    def n(self) -> int:
        """Number of vertices."""
        return len(self.nodes)

    def _indices(self, nodes: Any, name: str) -> np.ndarray:
        idx = []
        for v in nodes:
            if v not in self._index:
                raise ValueError(f"{name} must hold vertices of the graph, got unknown vertex {v!r}")
            idx.append(self._index[v])
        return np.asarray(idx, dtype=np.int64)

    def vaccinate(self, nodes: Any) -> SISModel:
        """Vaccinate ``nodes`` (iterable of vertex labels): their infection probability becomes 0. Returns self."""
        self.vaccinated[self._indices(nodes, "nodes")] = True
        return self

    def reset(self, initial_infected: Any = None, k_random: int | None = None) -> SISModel:
        """Set the state: all vertices infected (default), the vertices ``initial_infected``, or ``k_random``
        uniformly chosen unvaccinated vertices. Returns self."""
        if initial_infected is not None and k_random is not None:
            raise ValueError("give at most one of initial_infected and k_random")
        state = np.zeros(self.n, dtype=bool)
        if k_random is not None:
            pool = np.flatnonzero(~self.vaccinated)
            k_random = check_int(k_random, "k_random", low=0, high=pool.size)  # at most the unvaccinated vertices
            state[self.rng.choice(pool, size=k_random, replace=False)] = True
        elif initial_infected is not None:
            state[self._indices(initial_infected, "initial_infected")] = True
        else:
            state[:] = True
        self.state = state
        return self

    def _advance(self, Y: np.ndarray) -> np.ndarray:
        """One synchronous SIS step for a (n, reps) bool state matrix."""
        m = self.adjacency @ Y.astype(np.float64)  # infected-neighbour counts m_v(t)
        p_infect = -np.expm1(m * self._log_escape)  # 1 − (1 − p_inf)^m
        u = self.rng.random(Y.shape)
        stay = u >= self.p_rec
        catch = (u < p_infect) & ~self.vaccinated[:, None]
        return np.where(Y, stay, catch)

    def step(self) -> np.ndarray:
        """Advance one step and return the new state (copy), shape (n,)."""
        self.state = self._advance(self.state[:, None])[:, 0]
        return self.state.copy()

    def run(self, T: int) -> np.ndarray:
        """Run ``T`` steps from the current state; return Y(0..T) as a (T+1, n) bool array."""
        T = _check_steps(T, "T")
        out = np.empty((T + 1, self.n), dtype=bool)
        out[0] = self.state
        Y = self.state[:, None]
        for t in range(1, T + 1):
            Y = self._advance(Y)
            out[t] = Y[:, 0]
        self.state = out[-1].copy()
        return out

    def run_trajectories(self, T: int, reps: int = 1, reseed: bool = False) -> list[np.ndarray]:
        """Run ``reps`` replicas for ``T`` steps each, all starting from the current state.

        With ``reseed=True`` a replica that becomes all-healthy is restarted from as many uniformly chosen
        unvaccinated vertices as the current state has infected ones; the restart is not an SIS transition, so
        the replica's history is split there. Returns a list of (length, n) bool trajectories whose consecutive
        rows are genuine SIS transitions (reps·T transitions in all; the jumps into restart states are dropped).
        """
        T = _check_steps(T, "T")
        reps = _check_steps(reps, "reps", minimum=1)
        k0 = int(self.state.sum())
        if reseed and k0 == 0:
            raise ValueError("reseed=True needs an initial state with at least one infected vertex")
        pool = np.flatnonzero(~self.vaccinated)
        hist = np.empty((T + 1, self.n, reps), dtype=bool)
        Y = np.repeat(self.state[:, None], reps, axis=1)
        hist[0] = Y
        seg_start = [0] * reps  # first row of each replica's open segment
        seg_prefix: list[np.ndarray | None] = [None] * reps  # restart state preceding that row, if any
        segments: list[np.ndarray] = []

        def close(r: int, end: int) -> None:
            body = hist[seg_start[r]:end + 1, :, r]
            seg = body if seg_prefix[r] is None else np.vstack([seg_prefix[r][None, :], body])
            if seg.shape[0] >= 2:
                segments.append(np.array(seg, dtype=bool))

        for t in range(1, T + 1):
            Y = self._advance(Y)
            hist[t] = Y
            if reseed and t < T:
                for r in np.flatnonzero(~Y.any(axis=0)):
                    close(r, t)  # the step into extinction is a genuine transition
                    restart = np.zeros(self.n, dtype=bool)
                    restart[self.rng.choice(pool, size=k0, replace=False)] = True
                    Y[:, r] = restart
                    seg_prefix[r] = restart
                    seg_start[r] = t + 1
        for r in range(reps):
            close(r, T)
        self.state = Y[:, 0].copy()
        return segments

    def simulate_many(self, reps: int, cap: int, initial_infected: Any = None) -> ExtinctionTimes:
        """Extinction times of ``reps`` independent replicas, each started from all-infected (or from
        ``initial_infected``), censored at ``cap`` steps.

        Parameters
        ----------
        reps : int
            Number of replicas, simulated together (one sparse mat-mat product per step).
        cap : int
            Censoring time T_cap.
        initial_infected : iterable of vertices, optional
            Initial infected set (default: every vertex).

        Returns
        -------
        ExtinctionTimes
        """
        reps = _check_steps(reps, "reps", minimum=1)
        cap = _check_steps(cap, "cap")
        init = np.ones(self.n, dtype=bool)
        if initial_infected is not None:
            init[:] = False
            init[self._indices(initial_infected, "initial_infected")] = True
        Y = np.repeat(init[:, None], reps, axis=1)
        times = np.full(reps, cap, dtype=np.int64)
        alive = Y.any(axis=0)
        times[~alive] = 0
        t = 0
        while t < cap and alive.any():
            t += 1
            Y = self._advance(Y)
            now_alive = Y.any(axis=0)
            newly = alive & ~now_alive
            times[newly] = t
            alive = now_alive
        return ExtinctionTimes(times=times, censored=alive.copy(), cap=cap)

    def extinction_time(self, cap: int) -> int:
        """Run one replica from the current state until extinction or ``cap``; return min(τ, cap)."""
        cap = _check_steps(cap, "cap")
        t = 0
        Y = self.state[:, None]
        while t < cap and Y.any():
            Y = self._advance(Y)
            t += 1
        self.state = Y[:, 0].copy()
        return t


def _check_steps(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, (float, np.floating)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    return check_int(value, name, low=minimum)
