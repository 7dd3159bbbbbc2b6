"""SISLearn: learn the contact graph from SIS infection states by inclusion–exclusion (spec §2.2, Alg. 1)."""

from __future__ import annotations

import warnings
from typing import Any

import networkx as nx
import numpy as np

from icml25.core.threads import thread_limits
from icml25.core.validation import check_int, check_option, check_positive, check_real

from ._params import ParamsMixin
from ._transitions import as_transitions
from ._validation import check_probability

__all__ = ["SISLearn", "LearningWarning"]


class LearningWarning(UserWarning):
    """The data cannot support graph learning well (dead epidemic, oversized superset)."""


class SISLearn(ParamsMixin):
    """The SISLearn graph learner from the 'Learn to Vaccinate' (ICML 2025) paper.

    For each target vertex u and candidate i, over transitions with Y_u(t) = 0:

    - direct influence μ_{i→u} = P(Y_u(t+1)=1 | Y_u(t)=0, Y_i(t)=1); the superset
      S_u = {i : μ̂_{i→u} ≥ p_inf − ε_μ} contains N(u) w.h.p. because a neighbour alone infects w.p. p_inf;
    - inclusion–exclusion ν_{i→u} = Σ_y P(Y_{S∖i}=y | Y_u=0)·[P(Y_u'=1 | Y_u=0, Y_i=1, y) − P(Y_u'=1 | Y_u=0,
      Y_i=0, y)], which is ≥ p_inf(1−p_inf)^{Δ−1} for a neighbour and 0 otherwise (``pruning="exact"``);
    - or the practical rule of the official code (``pruning="heuristic"``): ν̂_i = μ̂¹_i − μ̂⁰_i without
      conditioning, keep i iff μ̂¹_i ≥ p_inf − ε_μ and ν̂_i ≥ mean(ν̂) + z·std(ν̂) over u's candidates.
      With z = 2 this rule can only select neighbours that are fewer than 20 % of the candidates (a fraction
      f of equal outliers passes mean + 2·std only when f < 1/5), so it suits sparse graphs.

    Vertices are processed in order 0..n−1; edges found from earlier vertices are known neighbours (kept in the
    conditioning set, not re-tested); an edge is added when either endpoint selects the other.

    Parameters
    ----------
    p_inf : float in (0, 1)
        Known per-edge transmission probability.
    max_degree : int
        Upper bound Δ on the maximum degree.
    eps_mu : float
        Superset tolerance ε_μ.
    eps_nu : float or None
        Pruning tolerance ε_ν for the exact rule; must satisfy 2ε_ν < p_inf(1−p_inf)^{Δ−1}. None picks
        0.4·p_inf(1−p_inf)^{Δ−1}.
    pruning : {"heuristic", "exact"}
        Pruning rule (see above).
    max_exact_superset : int
        Largest |S_u| for which the exact rule enumerates its 2^{|S_u|} conditioning cells; above it the vertex
        falls back to the heuristic rule with a :class:`LearningWarning`.
    superset : {"mu", "all"}
        "mu" builds S_u from μ̂; "all" forces S_u = V ∖ {u} (only sensible for tiny graphs).
    z : float
        Number of standard deviations of the heuristic rule.

    Attributes
    ----------
    adjacency_ : ndarray of bool, shape (n, n)
        Learned symmetric adjacency.
    graph_ : networkx.Graph
        Learned graph on vertices 0..n−1.
    mu_ : ndarray, shape (n, n)
        μ̂_{i→u} at ``[u, i]`` (0 where no transition has Y_u=0, Y_i=1).
    nu_ : ndarray, shape (n, n)
        ν̂_{i→u} at ``[u, i]`` for the candidates tested, NaN elsewhere.
    superset_sizes_ : ndarray of int, shape (n,)
        |S_u| per vertex.
    n_transitions_ : int
        Transitions seen so far.

    References
    ----------
    Elahi, Mürmann, Thiran, "Learn to Vaccinate", ICML 2025, Algorithm 1.

    Examples
    --------
    >>> import networkx as nx
    >>> from icml25.sis_vaccination import SISModel
    >>> model = SISModel(nx.cycle_graph(6), p_inf=0.4, p_rec=0.3, seed=0).reset(k_random=2)
    >>> Y = model.run_trajectories(500, reps=8, reseed=True)  # small epidemics die: reseed them
    >>> sorted(SISLearn(p_inf=0.4, max_degree=2, pruning="exact").fit(Y).graph_.edges())
    [(0, 1), (0, 5), (1, 2), (2, 3), (3, 4), (4, 5)]
    """

    def __init__(self, p_inf: float, max_degree: int, eps_mu: float = 0.05, eps_nu: float | None = None,
                 pruning: str = "heuristic", max_exact_superset: int = 12, superset: str = "mu",
                 z: float = 2.0) -> None:
        self.p_inf = p_inf
        self.max_degree = max_degree
        self.eps_mu = eps_mu
        self.eps_nu = eps_nu
        self.pruning = pruning
        self.max_exact_superset = max_exact_superset
        self.superset = superset
        self.z = z
        self._validate()

    # ------------------------------------------------------------------ parameters
    def _validate(self) -> float:
        """Check the parameters; return the pruning tolerance ε_ν in use."""
        p = check_probability(self.p_inf, "p_inf")
        if isinstance(self.max_degree, (float, np.floating)):
            raise TypeError(f"max_degree must be a positive integer, got {self.max_degree!r}")
        check_int(self.max_degree, "max_degree", low=1)
        check_real(self.eps_mu, "eps_mu", low=0.0, high=p, high_open=True)
        bound = self.nu_bound
        eps_nu = 0.4 * bound if self.eps_nu is None else check_real(self.eps_nu, "eps_nu", low=0.0)
        if not 2.0 * eps_nu < bound:
            raise ValueError(f"eps_nu must satisfy 0 <= 2*eps_nu < p_inf(1-p_inf)^(max_degree-1) = {bound:.4g}, "
                             f"got eps_nu={eps_nu}")
        check_option(self.pruning, "pruning", ("heuristic", "exact"))
        check_option(self.superset, "superset", ("mu", "all"))
        check_int(self.max_exact_superset, "max_exact_superset", low=1, high=24)
        check_positive(self.z, "z")
        return eps_nu

    @property
    def nu_bound(self) -> float:
        """p_inf(1−p_inf)^{Δ−1}: the smallest inclusion–exclusion value of a true neighbour."""
        return float(self.p_inf) * (1.0 - float(self.p_inf)) ** (int(self.max_degree) - 1)

    # ------------------------------------------------------------------ data
    def fit(self, Y: Any) -> SISLearn:
        """Learn the graph from infection states.

        Parameters
        ----------
        Y : array_like of shape (T, n) or list of such arrays
            0/1 infection states; each array is one trajectory (transitions never cross arrays).

        Returns
        -------
        self
        """
        for attr in ("_n", "_prev_chunks", "_last_row"):
            if hasattr(self, attr):
                delattr(self, attr)
        return self.partial_fit(Y)

    def partial_fit(self, Y: Any, new_trajectory: bool = False) -> SISLearn:
        """Add the transitions of ``Y`` (a chunk of a stream) to the sufficient statistics and re-learn.

        Pairwise counts are kept for μ̂ and the heuristic rule; with ``pruning="exact"`` the transitions are
        kept as well (the exact rule needs joint counts over supersets that depend on all data).

        Parameters
        ----------
        Y : array_like of shape (T, n) or list of such arrays
            An array continues the previous array chunk (the transition from its last row to this chunk's
            first row is counted) unless ``new_trajectory``; each list element is a complete trajectory.
        new_trajectory : bool
            Start a new trajectory instead of continuing the previous chunk.
        """
        self._validate()
        n_expected = getattr(self, "_n", None)
        last = getattr(self, "_last_row", None)
        if not isinstance(Y, (list, tuple)) and last is not None and not new_trajectory:
            arr = np.asarray(Y)
            if arr.ndim != 2 or arr.shape[1] != n_expected:
                raise ValueError(f"Y must have {n_expected} columns (one per vertex) to continue the stream, "
                                 f"got shape {arr.shape}")
            if not (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
                raise TypeError(f"Y must hold 0/1 or bool values, got dtype {arr.dtype}")
            Y = np.concatenate([last[None, :].astype(arr.dtype), arr], axis=0)
        prev, nxt = as_transitions(Y, n_expected)
        self._last_row = None if isinstance(Y, (list, tuple)) else nxt[-1].copy()
        n = prev.shape[1]
        if n_expected is None:
            self._n = n
            self._pair_inf = np.zeros((n, n))  # [u, i]: #{Y_u=0, Y_i=1, Y_u'=1}
            self._pair_cnt = np.zeros((n, n))  # [u, i]: #{Y_u=0, Y_i=1}
            self._sus_cnt = np.zeros(n)  # #{Y_u=0}
            self._sus_inf = np.zeros(n)  # #{Y_u=0, Y_u'=1}
            self._dead = 0
            self.n_transitions_ = 0
            self._prev_chunks: list[np.ndarray] = []
            self._next_chunks: list[np.ndarray] = []
        X = prev.astype(np.float64)  # counts are exact in float64 below 2^53
        S = 1.0 - X
        Z = S * nxt
        with thread_limits(1):
            self._pair_cnt += S.T @ X
            self._pair_inf += Z.T @ X
        self._sus_cnt += S.sum(axis=0)
        self._sus_inf += Z.sum(axis=0)
        self._dead += int((~prev.any(axis=1)).sum())
        self.n_transitions_ += prev.shape[0]
        if self.pruning == "exact":
            self._prev_chunks.append(prev)
            self._next_chunks.append(nxt)
        if self._dead:
            warnings.warn(
                f"the epidemic died out during observation ({self._dead} of {self.n_transitions_} transitions "
                "start from the all-healthy state); SISLearn needs a persisting epidemic: observe a "
                "supercritical process or reseed it (SISModel.run_trajectories(reseed=True))",
                LearningWarning, stacklevel=2)
        self._learn()
        return self

    # ------------------------------------------------------------------ learning
    def _learn(self) -> None:
        eps_nu = self._validate()
        n = self._n
        with np.errstate(invalid="ignore", divide="ignore"):
            mu1 = np.where(self._pair_cnt > 0, self._pair_inf / self._pair_cnt, 0.0)
            cnt0 = self._sus_cnt[:, None] - self._pair_cnt
            inf0 = self._sus_inf[:, None] - self._pair_inf
            mu0 = np.where(cnt0 > 0, inf0 / np.where(cnt0 > 0, cnt0, 1.0), 0.0)
        np.fill_diagonal(mu1, 0.0)
        self.mu_ = mu1
        self.nu_ = np.full((n, n), np.nan)
        self.superset_sizes_ = np.zeros(n, dtype=np.int64)
        adj = np.zeros((n, n), dtype=bool)
        if self.pruning == "exact" and self._prev_chunks:
            prev = np.concatenate(self._prev_chunks)
            nxt = np.concatenate(self._next_chunks)
        fallback = []
        for u in range(n):
            known = np.flatnonzero(adj[u])
            cand = np.array([i for i in range(n) if i != u and not adj[u, i]], dtype=np.int64)
            if self.superset == "all":
                in_super = cand
            else:
                in_super = cand[mu1[u, cand] >= self.p_inf - self.eps_mu]
            superset = np.concatenate([known, in_super]).astype(np.int64)
            self.superset_sizes_[u] = superset.size
            use_exact = self.pruning == "exact" and superset.size <= int(self.max_exact_superset)
            if self.pruning == "exact" and not use_exact:
                fallback.append(u)
            if use_exact:
                nu = _exact_nu(prev, nxt, u, superset)  # Eq. (ν): inclusion–exclusion over the superset
                tested = in_super
                nu_t = nu[known.size:]
                keep = tested[nu_t >= self.nu_bound - eps_nu]
                self.nu_[u, tested] = nu_t
            else:
                if cand.size == 0:
                    continue
                nu_c = mu1[u, cand] - mu0[u, cand]  # practical rule of the official code
                self.nu_[u, cand] = nu_c
                cut = nu_c.mean() + float(self.z) * nu_c.std()
                keep = cand[(mu1[u, cand] >= self.p_inf - self.eps_mu) & (nu_c >= cut)]
            adj[u, keep] = True
            adj[keep, u] = True
        if fallback:
            warnings.warn(
                f"exact pruning fell back to the heuristic rule for {len(fallback)} vertices whose superset "
                f"exceeds max_exact_superset={self.max_exact_superset} (largest |S_u| = "
                f"{int(self.superset_sizes_.max())})", LearningWarning, stacklevel=3)
        self.adjacency_ = adj
        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from((int(a), int(b)) for a, b in zip(*np.nonzero(np.triu(adj, 1))))
        self.graph_ = g


def _exact_nu(prev: np.ndarray, nxt: np.ndarray, u: int, superset: np.ndarray) -> np.ndarray:
    """Inclusion–exclusion ν̂_{i→u} for every i in ``superset`` (ordered like ``superset``).

    Over transitions with Y_u(t)=0 the configurations of the superset are encoded as integers; for each member
    i the other members' configuration y indexes 2^{|S|−1} cells, and ν̂_i = Σ_y P̂(y)·(P̂(1 | i=1, y) −
    P̂(1 | i=0, y)), empty cells contributing 0.
    """
    s = superset.size
    rows = ~prev[:, u]
    total = int(rows.sum())
    if s == 0 or total == 0:
        return np.zeros(s)
    states = prev[rows][:, superset].astype(np.int64)
    codes = states @ (1 << np.arange(s, dtype=np.int64))
    outcome = nxt[rows, u]
    cnt = np.bincount(codes, minlength=1 << s).astype(np.float64).reshape((2,) * s)
    inf = np.bincount(codes[outcome], minlength=1 << s).astype(np.float64).reshape((2,) * s)
    nu = np.zeros(s)
    for j in range(s):
        axis = s - 1 - j  # bit j of the code is axis s−1−j of the C-ordered reshape
        c = np.moveaxis(cnt, axis, 0)
        f = np.moveaxis(inf, axis, 0)
        c0, c1, f0, f1 = c[0], c[1], f[0], f[1]
        ok = (c0 > 0) & (c1 > 0)
        diff = np.where(ok, f1 / np.where(c1 > 0, c1, 1) - f0 / np.where(c0 > 0, c0, 1), 0.0)
        nu[j] = float(((c0 + c1) / total * diff).sum())
    return nu
