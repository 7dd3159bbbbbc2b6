"""Ehrlich functions (Stanton et al. 2024): closed-form, protein-like sequence landscapes, in numpy.

An instance has a banded random transition matrix P over ``v`` states (a sequence is feasible iff every transition
has P > 0), ``c`` motifs of length ``k`` with spacings, and value ``f(x) = Π_j h_j(x)`` where ``h_j`` is the
quantised best fraction of motif ``j`` present at its spacing anywhere in ``x`` (spec §2.5). Infeasible sequences
have value ``-inf``; the optimum 1 is attained by :meth:`Ehrlich.optimal_solution`.

The quantisation ``q`` must make ``u = ceil(k / q)`` divide ``k``: presence is ``floor(m / u) / (k / u)`` for ``m``
matches, so a full motif scores ``floor(k / u) / (k / u) < 1`` otherwise and no sequence reaches 1 (e.g. k = 3,
q = 2: at most 2/3). holo-bench's ``Ehrlich`` accepts such ``q`` and then fails its own optimum check; here the
constructor refuses them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int, check_stochastic_matrix

__all__ = ["Ehrlich"]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _is_ergodic(P: np.ndarray) -> bool:
    """Primitive (irreducible and aperiodic) iff (P > 0)^m > 0 for m = (v-1)^2 + 1 (Wielandt's bound)."""
    A = (P > 0).astype(np.int64)
    m = (len(P) - 1) ** 2 + 1
    R = np.eye(len(P), dtype=np.int64)
    while m:
        if m & 1:
            R = np.minimum(R @ A, 1)
        A = np.minimum(A @ A, 1)
        m >>= 1
    return bool(R.all())


def _check_quantization(k: int, quantization: int | None) -> int:
    """q (default k), refused unless ceil(k / q) divides k (otherwise the optimum of f is below 1)."""
    q = k if quantization is None else check_int(quantization, "quantization", low=1, high=k)
    unit = math.ceil(k / q)
    if k % unit:
        ok = [p for p in range(1, k + 1) if k % math.ceil(k / p) == 0]
        raise ValueError(f"quantization must make ceil(motif_length / quantization) divide motif_length (else a full "
                         f"motif scores {k // unit}/{k / unit:g} < 1 and the optimum 1 is unreachable); for "
                         f"motif_length={k} use one of {ok}, got {q}")
    return q


def _stationary(P: np.ndarray) -> np.ndarray:
    w, V = np.linalg.eig(P.T)
    pi = np.real(V[:, np.argmin(np.abs(w - 1))])
    pi = np.abs(pi)
    return pi / pi.sum()


class Ehrlich:
    """An Ehrlich function instance.

    Parameters
    ----------
    num_states : int
        Alphabet size v.
    dim : int
        Sequence length L (>= num_motifs * motif_length).
    num_motifs : int
        Number of motifs c.
    motif_length : int
        Motif length k.
    quantization : int, optional
        q (default k): motif presence is rounded down to multiples of 1/q.
    seed : int
        Instance seed (transition matrix, motifs, spacings).

    Examples
    --------
    >>> f = Ehrlich(num_states=8, dim=12, num_motifs=2, motif_length=3, seed=0)
    >>> float(f(f.optimal_solution()[None])[0])
    1.0
    >>> x = f.sample_prior(5, seed=1)
    >>> bool(f.is_feasible(x).all()), bool(((f(x) >= 0) & (f(x) <= 1)).all())
    (True, True)
    """

    def __init__(self, num_states: int, dim: int, num_motifs: int, motif_length: int,
                 quantization: int | None = None, seed: int = 0) -> None:
        v = check_int(num_states, "num_states", low=2)
        L = check_int(dim, "dim", low=2)
        c = check_int(num_motifs, "num_motifs", low=1)
        k = check_int(motif_length, "motif_length", low=1)
        q = _check_quantization(k, quantization)
        if c * k > L:
            raise ValueError(f"dim must be >= num_motifs * motif_length = {c * k}, got {L}")
        rng = np.random.default_rng(check_int(seed, "seed", low=0))
        b = int(math.floor(0.4 * v))
        offsets = (np.arange(v)[None, :] - np.arange(v)[:, None]) % v
        band = (offsets <= b) | (offsets >= v - b)
        for _ in range(100):
            dense = _softmax(rng.normal(size=(v, v)) / 0.5)
            mask = band[rng.permutation(v)]
            np.fill_diagonal(mask, True)
            P = dense * mask
            P /= P.sum(axis=1, keepdims=True)
            if _is_ergodic(P):
                break
        else:  # pragma: no cover - a banded matrix with a full diagonal is ergodic in practice
            raise RuntimeError("could not draw an ergodic transition matrix")
        pi = _stationary(P)
        seq = np.empty(c * k, dtype=np.int64)
        seq[0] = rng.choice(v, p=pi)
        for t in range(1, c * k):
            seq[t] = rng.choice(v, p=P[seq[t - 1]])
        motifs = seq.reshape(c, k)
        gap = (L - c * k) // c
        spacings = np.zeros((c, k), dtype=np.int64)
        for j in range(c):
            w = rng.uniform(size=k - 1)
            s = 1 + np.floor(gap * w / w.sum()).astype(np.int64) if k > 1 else np.zeros(0, dtype=np.int64)
            spacings[j, 1:] = np.cumsum(s)
        self._set(P, motifs, spacings, q, L)

    @classmethod
    def from_parts(cls, transition_matrix: Any, motifs: Any, spacings: Any, dim: int,
                   quantization: int | None = None) -> Ehrlich:
        """An instance from explicit parts: P (v, v), motifs (c, k) ints, offsets (c, k) with offsets[:, 0] == 0.

        ``spacings`` are *cumulative offsets* of the motif elements from the motif's start (``(0, o_1, ..., o_{k-1})``,
        strictly increasing). holo-bench's ``Ehrlich.spacings`` stores the *gaps* between consecutive elements
        (``k - 1`` values >= 1); convert with ``np.concatenate([[0], np.cumsum(gaps)])`` per motif.
        """
        P = check_stochastic_matrix(transition_matrix, "transition_matrix")
        m = check_array(motifs, "motifs", ndim=2, dtype=np.int64)
        s = check_array(spacings, "spacings", shape=m.shape, dtype=np.int64)
        L = check_int(dim, "dim", low=1)
        if m.min() < 0 or m.max() >= len(P):
            raise ValueError(f"motifs must hold states in [0, {len(P)}), got values in [{m.min()}, {m.max()}]")
        if np.any(s[:, 0] != 0) or np.any(np.diff(s, axis=1) < 1) or s[:, -1].max() >= L:
            raise ValueError("spacings must start at 0, increase strictly, and fit in dim")
        q = _check_quantization(m.shape[1], quantization)
        obj = cls.__new__(cls)
        obj._set(P, m, s, q, L)
        return obj

    def _set(self, P: np.ndarray, motifs: np.ndarray, spacings: np.ndarray, q: int, L: int) -> None:
        self.transition_matrix = P
        self.initial_dist = _stationary(P)
        self.motifs, self.spacings = motifs, spacings
        self.num_states, self.dim = P.shape[0], L
        self.num_motifs, self.motif_length = motifs.shape
        self.quantization = q

    # -- evaluation -----------------------------------------------------------------------------------------------
    def _check_x(self, x: Any) -> np.ndarray:
        X = check_array(x, "x", ndim=2, dtype=np.int64)
        if X.shape[1] != self.dim:
            raise ValueError(f"x must have {self.dim} columns (the sequence length), got shape {X.shape}")
        if X.min() < 0 or X.max() >= self.num_states:
            raise ValueError(f"x must hold states in [0, {self.num_states}), got values in [{X.min()}, {X.max()}]")
        return X

    def is_feasible(self, x: Any) -> np.ndarray:
        """(n,) bool: every transition of the sequence has positive probability."""
        X = self._check_x(x)
        return np.all(self.transition_matrix[X[:, :-1], X[:, 1:]] > 0, axis=1)

    def motif_presence(self, x: Any) -> np.ndarray:
        """(n, c) quantised presence h_j(x) of every motif (feasibility ignored)."""
        X = self._check_x(x)
        k, q = self.motif_length, self.quantization
        unit = math.ceil(k / q)
        out = np.empty((len(X), self.num_motifs))
        for j in range(self.num_motifs):
            o = self.spacings[j]
            starts = np.arange(self.dim - o[-1])
            windows = X[:, starts[:, None] + o[None, :]]  # (n, starts, k)
            matches = (windows == self.motifs[j][None, None, :]).sum(-1).max(-1)
            out[:, j] = np.floor(matches / unit) / (k / unit)
        return out

    def __call__(self, x: Any) -> np.ndarray:
        """(n,) values f(x) = Π_j h_j(x) in [0, 1]; ``-inf`` for infeasible sequences."""
        X = self._check_x(x)
        f = self.motif_presence(X).prod(axis=1)
        return np.where(self.is_feasible(X), f, -np.inf)

    # -- sampling -------------------------------------------------------------------------------------------------
    def sample_prior(self, n: int, seed: Any = None) -> np.ndarray:
        """(n, L) sequences from the Markov-chain prior (initial = stationary distribution); always feasible."""
        n = check_int(n, "n", low=1)
        rng = np.random.default_rng(seed)
        cum = np.cumsum(self.transition_matrix, axis=1)
        X = np.empty((n, self.dim), dtype=np.int64)
        X[:, 0] = np.searchsorted(np.cumsum(self.initial_dist), rng.uniform(size=n) * (1 - 1e-12))
        for t in range(1, self.dim):
            u = rng.uniform(size=n)[:, None] * cum[X[:, t - 1], -1:]
            X[:, t] = np.minimum((cum[X[:, t - 1]] < u).sum(1), self.num_states - 1)
        return X

    def log_prior(self, x: Any) -> np.ndarray:
        """(n,) log-probability of the sequences under the Markov-chain prior (``-inf`` if infeasible)."""
        X = self._check_x(x)
        with np.errstate(divide="ignore"):
            lp = np.log(self.initial_dist[X[:, 0]]) + np.log(self.transition_matrix[X[:, :-1], X[:, 1:]]).sum(1)
        return lp

    def optimal_solution(self) -> np.ndarray:
        """(L,) a feasible sequence of value 1: motifs one after another at their offsets, gaps filled by repeating
        the previous motif element (self-loops, always allowed by the constructor), the tail by the last element.

        Raises
        ------
        ValueError
            For an instance built with :meth:`from_parts` whose motifs do not fit one after another in ``dim`` or whose
            construction is infeasible (a banned motif transition or self-loop); instances from the constructor always
            have this optimum.
        """
        need = int(sum(int(o[-1]) + 1 for o in self.spacings))
        if need > self.dim:
            raise ValueError(f"the motifs need {need} positions one after another but dim is {self.dim}; this "
                             "from_parts instance has no optimum of this construction")
        x = np.empty(self.dim, dtype=np.int64)
        pos = 0
        for j in range(self.num_motifs):
            o = self.spacings[j]
            for r in range(self.motif_length):
                end = pos + (o[r + 1] if r + 1 < self.motif_length else o[r] + 1)
                x[pos + o[r]:end] = self.motifs[j, r]
            pos += o[-1] + 1
        x[pos:] = self.motifs[-1, -1]
        if self(x[None])[0] != 1.0:
            raise ValueError("the motifs placed one after another are infeasible under this transition matrix "
                             "(a banned motif transition or self-loop); this from_parts instance has no optimum of "
                             "this construction")
        return x
