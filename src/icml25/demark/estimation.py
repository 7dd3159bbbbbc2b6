"""Estimating the watermark from probes only: prefix length h (Algorithm 3), strength delta (Algorithm 4) and the
green list at a generation step (Algorithm 5) of the 'De-mark' (ICML 2025) paper."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.progress import progress
from icml25.core.validation import check_int, check_positive, check_probability, check_real

from ._ids import check_ids
from .probing import token_scores

__all__ = ["estimate_prefix_length", "estimate_delta", "identify_green_list", "pair_scores"]


def _check_prober(prober: Any) -> None:
    if not hasattr(prober, "ratio_matrix") or not hasattr(prober, "vocab_size"):
        raise TypeError(f"prober must have ratio_matrix(context_ids, candidate_ids) and vocab_size, "
                        f"got {type(prober).__name__}")


def _check_words(words: Any, vocab_size: int, need: int) -> np.ndarray:
    arr = np.unique(np.asarray(check_ids(words, "words", vocab_size)))
    if arr.size < need:
        raise ValueError(f"words must hold at least {need} distinct token ids, got {arr.size}")
    return arr.astype(np.int64)


def estimate_prefix_length(prober: Any, words: Any, h_max: int = 10, m: int = 50, beta: float = 0.75,
                           n_contexts: int = 2, alpha1: float = 0.2, alpha2: float = 10.0,
                           random_state: int = 0) -> tuple[int, np.ndarray]:
    """Algorithm 3: the n-gram length ``h`` from the agreement of token scores across context widths.

    For ``w = h_max..1`` the context is the last ``w`` ids of a random context; ``a(w)`` is the fraction of the
    ``m`` targets whose scores at widths ``w`` and ``w+1`` have the same (non-zero) sign, averaged over
    ``n_contexts`` contexts. ``h_hat = 1 + max{w : a(w) < beta}`` (1 if none).

    Parameters
    ----------
    prober : RandomSelectionProber or SimulatedProbeOracle
    words : sequence of int
        Candidate single-token word ids (at least ``m``; random contexts are drawn from them too).
    h_max : int
        Largest width tried (>= 2).
    m : int
        Targets per context (>= 2).
    beta : float
        Agreement threshold in (0, 1).
    n_contexts : int
    alpha1, alpha2 : float
        Score thresholds (Algorithm 2).
    random_state : int

    Returns
    -------
    h_hat : int
    agreement : float array (h_max - 1,)
        ``a(w)`` for ``w = 1..h_max-1``.

    Examples
    --------
    >>> from icml25.demark import SimulatedProbeOracle
    >>> o = SimulatedProbeOracle(500, delta=2.0, h=3, seed=1)
    >>> estimate_prefix_length(o, np.arange(100, 400), h_max=5, m=30)[0]
    3
    """
    _check_prober(prober)
    h_max = check_int(h_max, "h_max", low=2)
    m = check_int(m, "m", low=2)
    beta = check_probability(beta, "beta", open_low=True, open_high=True)
    n_contexts = check_int(n_contexts, "n_contexts", low=1)
    w_ids = _check_words(words, prober.vocab_size, m)
    rng = np.random.default_rng(check_int(random_state, "random_state", low=0))
    agree = np.zeros(h_max - 1)
    jobs = [(r, w) for r in range(n_contexts) for w in range(h_max, 0, -1)]
    contexts = [rng.choice(w_ids, h_max).tolist() for _ in range(n_contexts)]
    targets = [rng.choice(w_ids, m, replace=False).tolist() for _ in range(n_contexts)]
    scores: dict[tuple[int, int], np.ndarray] = {}
    for r, w in progress(jobs, "De-mark: estimating h"):
        R = prober.ratio_matrix(contexts[r][-w:], targets[r])
        scores[(r, w)] = token_scores(R, alpha1, alpha2)
    for w in range(1, h_max):
        agree[w - 1] = np.mean([np.mean(scores[(r, w)] * scores[(r, w + 1)] > 0) for r in range(n_contexts)])
    low = [w for w in range(1, h_max) if agree[w - 1] < beta]
    return (1 + max(low) if low else 1), agree


def estimate_delta(prober: Any, words: Any, h_hat: int, m: int = 20, n_contexts: int = 100, alpha1: float = 0.2,
                   alpha2: float = 10.0, kappa: float = 0.1, random_state: int = 0,
                   max_tries: int | None = None) -> tuple[float, np.ndarray]:
    """Algorithm 4: the unbiased estimator of the watermark strength ``delta``.

    For each random context of length ``h_hat`` and ``m`` random targets: ``A = {i: s_i > kappa m}``,
    ``B = {j: s_j < -kappa m}``; every ``R_ij`` with ``i in A, j in B`` is collected; ``delta_hat`` is their mean.

    Parameters
    ----------
    prober : RandomSelectionProber or SimulatedProbeOracle
    words : sequence of int
        Single-token word ids (at least ``m``).
    h_hat : int
        Estimated prefix length (>= 1).
    m, n_contexts : int
    alpha1, alpha2, kappa : float
    random_state : int
    max_tries : int, optional
        Contexts drawn at most (default ``3 n_contexts``); contexts with nothing collected are redrawn.

    Returns
    -------
    delta_hat : float
        NaN when nothing was collected in ``max_tries`` contexts.
    samples : float array
        The collected ``R_ij``.

    Examples
    --------
    >>> from icml25.demark import SimulatedProbeOracle
    >>> o = SimulatedProbeOracle(500, delta=2.0, h=1, seed=0)
    >>> d, _ = estimate_delta(o, np.arange(100, 400), h_hat=1, n_contexts=20)
    >>> abs(d - 2.0) < 0.15
    True
    """
    _check_prober(prober)
    h_hat = check_int(h_hat, "h_hat", low=1)
    m = check_int(m, "m", low=2)
    n_contexts = check_int(n_contexts, "n_contexts", low=1)
    kappa = check_real(kappa, "kappa", low=0.0, high=1.0)
    alpha1 = check_real(alpha1, "alpha1", low=0.0)
    alpha2 = check_real(alpha2, "alpha2", low=alpha1, low_open=True)
    max_tries = 3 * n_contexts if max_tries is None else check_int(max_tries, "max_tries", low=n_contexts)
    w_ids = _check_words(words, prober.vocab_size, m)
    rng = np.random.default_rng(check_int(random_state, "random_state", low=0))
    samples: list[float] = []
    done = tries = 0
    with_bar = progress(range(max_tries), "De-mark: estimating delta")
    for _ in with_bar:
        if done >= n_contexts:
            break
        tries += 1
        c = rng.choice(w_ids, h_hat).tolist()
        R = prober.ratio_matrix(c, rng.choice(w_ids, m, replace=False).tolist())
        s = token_scores(R, alpha1, alpha2)
        A, B = np.flatnonzero(s > kappa * m), np.flatnonzero(s < -kappa * m)
        got = R[np.ix_(A, B)].ravel()
        got = got[np.isfinite(got)]
        if got.size:
            samples.extend(got.tolist())
            done += 1
    arr = np.asarray(samples)
    return (float(arr.mean()) if arr.size else float("nan")), arr


def pair_scores(R: Any, delta_hat: float) -> np.ndarray:
    """Normalised pair scores of Algorithm 5: ``P_ij = sgn(R_ij) min(|R_ij|/delta_hat, delta_hat/|R_ij|)``.

    NaN or zero entries give 0. Returns a float array ``(m, m)`` with entries in [-1, 1].

    Examples
    --------
    >>> pair_scores(np.array([[0.0, 4.0], [-4.0, 0.0]]), 2.0).tolist()
    [[0.0, 0.5], [-0.5, 0.0]]
    """
    delta_hat = check_positive(delta_hat, "delta_hat")
    R = np.asarray(R, dtype=float)
    if R.ndim != 2 or R.shape[0] != R.shape[1]:
        raise ValueError(f"R must be a square (m, m) matrix, got shape {R.shape}")
    a = np.abs(np.nan_to_num(R, nan=0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        P = np.sign(np.nan_to_num(R, nan=0.0)) * np.minimum(a / delta_hat, np.where(a > 0, delta_hat / a, 0.0))
    return np.nan_to_num(P, nan=0.0)


def identify_green_list(prober: Any, context_ids: Any, candidate_ids: Any, delta_hat: float,
                        R: Any = None) -> np.ndarray:
    """Algorithm 5: which candidates are green after ``context_ids`` (the last ``h_hat`` ids of the text).

    ``S_j = sum_k P_jk`` (confidence), ``sigma_i = sum_j |S_j| P_ij``, green iff ``sigma_i > 0``.

    Parameters
    ----------
    prober : RandomSelectionProber or SimulatedProbeOracle
    context_ids : sequence of int
    candidate_ids : sequence of int (m,)
    delta_hat : float
    R : array (m, m), optional
        A ratio matrix already measured for these candidates (probed when None).

    Returns
    -------
    bool array (m,)

    Examples
    --------
    >>> from icml25.demark import SimulatedProbeOracle
    >>> o = SimulatedProbeOracle(300, delta=2.0, h=1, seed=0)
    >>> cand = list(range(20, 40))
    >>> bool((identify_green_list(o, [7], cand, 2.0) == o.true_green([7], cand)).all())
    True
    """
    _check_prober(prober)
    if R is None:
        R = prober.ratio_matrix(context_ids, candidate_ids)
    P = pair_scores(R, delta_hat)
    S = P.sum(axis=1)
    sigma = P @ np.abs(S)
    return sigma > 0
