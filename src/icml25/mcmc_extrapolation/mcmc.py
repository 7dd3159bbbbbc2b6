"""Phase 1: Metropolis–Hastings over sequences, vectorised over chains (spec §2.1).

The target is ``p(x) ∝ prior(x) · exp(energy(x))``. A proposal returns the proposed sequences and the log Hastings
correction relative to the prior, ``log[q(x|x') prior(x')] − log[q(x'|x) prior(x)]`` (zero for a proposal that is
reversible with respect to the prior, such as :class:`MarkovPriorGibbsProposal`), so the acceptance probability is
``min(1, exp(energy(x') − energy(x) + correction))``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int, check_real

__all__ = ["EnergyModel", "MarkovPriorGibbsProposal", "MaskInfillProposal", "MetropolisHastings", "Chains"]


class EnergyModel:
    """A weighted sum of score functions, ``energy(x) = Σ_j α_j s_j(x)`` (the log target up to the prior).

    Parameters
    ----------
    terms : sequence of (weight, score_fn)
        ``score_fn`` maps an (n, L) int array to (n,) floats (``-inf`` marks an inadmissible sequence).
    """

    def __init__(self, terms: Sequence[tuple[float, Callable[[np.ndarray], np.ndarray]]]) -> None:
        if isinstance(terms, tuple) and len(terms) == 2 and callable(terms[1]):
            terms = [terms]
        terms = list(terms)
        if not terms:
            raise ValueError("terms must hold at least one (weight, score_fn) pair")
        for w, fn in terms:
            check_real(w, "weight")
            if not callable(fn):
                raise TypeError(f"every term needs a callable score function, got {type(fn).__name__}")
        self.terms = [(float(w), fn) for w, fn in terms]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """(n,) energies of the (n, L) sequences."""
        out = np.zeros(len(x))
        for w, fn in self.terms:
            s = np.asarray(fn(x), dtype=float)
            if s.shape != (len(x),):
                raise ValueError(f"a score function returned shape {s.shape}, expected ({len(x)},)")
            with np.errstate(invalid="ignore"):
                out = out + np.where(np.isneginf(s), -np.inf, w * s)
        return out


class MarkovPriorGibbsProposal:
    """Resample ``n_sites`` distinct positions, in random order, from a Markov-chain prior's conditionals.

    The analogue of mask-and-infill with a language model (spec §2.5): position ``i`` is redrawn from
    ``P(x_i | x_{i-1}, x_{i+1}) ∝ P[x_{i-1}, x_i] P[x_i, x_{i+1}]`` (first position: ``π(x_0) P[x_0, x_1]``). Each
    single-site update is reversible for the prior and the order is uniform, so the correction is 0 and proposals of
    feasible sequences are feasible.

    Parameters
    ----------
    transition_matrix : (v, v) row-stochastic array
    initial_dist : (v,) probability vector
    n_sites : int
    """

    def __init__(self, transition_matrix: Any, initial_dist: Any, n_sites: int = 2) -> None:
        from icml25.core.validation import check_prob_vector, check_stochastic_matrix

        self.P = check_stochastic_matrix(transition_matrix, "transition_matrix")
        if self.P.ndim != 2 or self.P.shape[0] != self.P.shape[1]:
            raise ValueError(f"transition_matrix must be square (v, v), got shape {self.P.shape}")
        self.pi = check_prob_vector(initial_dist, "initial_dist", ndim=1)
        if self.pi.shape != (len(self.P),):
            raise ValueError(f"initial_dist must have {len(self.P)} entries, got {self.pi.shape}")
        self.n_sites = check_int(n_sites, "n_sites", low=1)

    def propose(self, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(x', correction)`` for the (n, L) states ``x``."""
        n, L = x.shape
        m = min(self.n_sites, L)
        order = np.argsort(rng.uniform(size=(n, L)), axis=1)[:, :m]
        y = x.copy()
        rows = np.arange(n)
        for s in range(m):
            i = order[:, s]
            w = np.ones((n, len(self.P)))
            left = i > 0
            w[left] *= self.P[y[rows[left], i[left] - 1]]
            w[~left] *= self.pi[None, :]
            right = i < L - 1
            w[right] *= self.P[:, y[rows[right], i[right] + 1]].T
            cum = np.cumsum(w, axis=1)
            u = rng.uniform(size=n)[:, None] * cum[:, -1:]
            y[rows, i] = np.minimum((cum < u).sum(1), len(self.P) - 1)
        return y, np.zeros(n)


class MaskInfillProposal:
    """Mask-and-infill with any infill model: ``infill_fn(x, positions, rng) -> (x', log_q_fwd, log_q_rev)``.

    ``positions`` is an (n, n_positions) int array of the masked sites (a uniformly random subset, so the choice of
    sites is symmetric); ``log_q_fwd`` the log-probability of the sampled infill and ``log_q_rev`` that of restoring
    the original tokens when the same sites of ``x'`` are masked. Without ``log_prior_fn`` the correction is
    ``log_q_rev − log_q_fwd`` and MH targets ``exp(beta · energy(x))`` exactly (when the two log-probabilities are
    exact, as :class:`~icml25.mcmc_extrapolation.text_models.MLMInfill`'s are). ``log_prior_fn`` (optional) adds a
    reference prior: the correction becomes ``log[q(x|x') prior(x')] − log[q(x'|x) prior(x)]`` and the target
    ``prior(x) · exp(beta · energy(x))``.
    """

    def __init__(self, infill_fn: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray]], n_positions: int = 1,
                 log_prior_fn: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        if not callable(infill_fn):
            raise TypeError(f"infill_fn must be callable, got {type(infill_fn).__name__}")
        self.infill_fn, self.log_prior_fn = infill_fn, log_prior_fn
        self.n_positions = check_int(n_positions, "n_positions", low=1)

    def propose(self, x: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(x', correction)`` for the (n, L) states ``x``."""
        n, L = x.shape
        pos = np.sort(np.argsort(rng.uniform(size=(n, L)), axis=1)[:, : min(self.n_positions, L)], axis=1)
        y, fwd, rev = self.infill_fn(x, pos, rng)
        corr = np.asarray(rev, dtype=float) - np.asarray(fwd, dtype=float)
        if self.log_prior_fn is not None:
            corr = corr + (np.asarray(self.log_prior_fn(y), dtype=float) - np.asarray(self.log_prior_fn(x), dtype=float))
        return np.asarray(y), corr


@dataclass
class Chains:
    """MCMC output: ``states`` (n, T+1, L) uint8/int, ``scores`` (n, T+1), ``accepted`` (n, T) bool."""

    states: np.ndarray
    scores: np.ndarray
    accepted: np.ndarray

    @property
    def acceptance_rate(self) -> float:
        """Fraction of accepted proposals."""
        return float(self.accepted.mean()) if self.accepted.size else 0.0

    def best_so_far(self) -> np.ndarray:
        """(n, T+1) running maximum of the score along each chain."""
        return np.maximum.accumulate(self.scores, axis=1)


class MetropolisHastings:
    """Metropolis–Hastings for ``p(x) ∝ prior(x) exp(beta · energy(x))``, many chains at once.

    Parameters
    ----------
    energy : callable
        (n, L) ints -> (n,) floats (``-inf`` for inadmissible sequences, which are never accepted).
    proposal : object with ``propose(x, rng) -> (x', correction)``
    beta : float
        Inverse temperature (spec calibration: 100 for Ehrlich).
    score : callable, optional
        What to record per state (default ``energy``), e.g. the oracle value.

    Examples
    --------
    >>> from icml25.mcmc_extrapolation import Ehrlich
    >>> f = Ehrlich(8, 12, 1, 3, seed=0)
    >>> mh = MetropolisHastings(f, MarkovPriorGibbsProposal(f.transition_matrix, f.initial_dist), beta=50)
    >>> ch = mh.run(f.sample_prior(4, seed=0), steps=30, seed=0)
    >>> ch.states.shape, bool((ch.best_so_far()[:, -1] >= ch.scores[:, 0]).all())
    ((4, 31, 12), True)
    """

    def __init__(self, energy: Callable[[np.ndarray], np.ndarray], proposal: Any, beta: float = 1.0,
                 score: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        if not callable(energy):
            raise TypeError(f"energy must be callable, got {type(energy).__name__}")
        if not hasattr(proposal, "propose"):
            raise TypeError("proposal must have a propose(x, rng) method")
        self.energy, self.proposal = energy, proposal
        self.beta = check_real(beta, "beta", low=0.0)
        self.score = score or energy

    def run(self, x0: Any, steps: int, seed: Any = None, show_progress: bool = False) -> Chains:
        """Run ``steps`` MH steps from each row of ``x0`` ((n, L) ints); returns :class:`Chains`."""
        X = check_array(x0, "x0", ndim=2, dtype=np.int64)
        steps = check_int(steps, "steps", low=1)
        rng = np.random.default_rng(seed)
        n, L = X.shape
        en = np.asarray(self.energy(X), dtype=float)
        if np.any(np.isneginf(en)) or np.any(np.isnan(en)):
            raise ValueError("x0 holds sequences of energy -inf or NaN (infeasible starts); start from feasible ones")
        dtype = np.uint8 if X.max() < 256 else np.int64
        states = np.empty((n, steps + 1, L), dtype=dtype)
        scores = np.empty((n, steps + 1))
        accepted = np.zeros((n, steps), dtype=bool)
        states[:, 0] = X
        s_cur = en if self.score is self.energy else np.asarray(self.score(X), dtype=float)
        scores[:, 0] = s_cur
        it = range(steps)
        if show_progress:
            from icml25.core.progress import progress

            it = progress(it, "MH steps")
        for t in it:
            Y, corr = self.proposal.propose(X, rng)
            en_new = np.asarray(self.energy(Y), dtype=float)
            with np.errstate(invalid="ignore", over="ignore"):
                log_a = np.where(np.isneginf(en_new), -np.inf, self.beta * (en_new - en) + corr)
            acc = np.log(rng.uniform(size=n)) < log_a
            X = np.where(acc[:, None], Y, X)
            en = np.where(acc, en_new, en)
            if self.score is self.energy:
                s_cur = en
            else:
                s_cur = np.where(acc, np.asarray(self.score(Y), dtype=float), s_cur)
            states[:, t + 1], scores[:, t + 1], accepted[:, t] = X, s_cur, acc
        return Chains(states=states, scores=scores, accepted=accepted)
