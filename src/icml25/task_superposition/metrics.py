"""Superposition statistics of answer-probability matrices (paper §2.3 / official ``statistics.txt``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_real

__all__ = ["superposition_stats", "kl_to_mixture", "calibration_error", "oracle_mixer", "wilson_interval"]

_FLOOR = 1e-12  # probability floor inside the logarithms (a zero answer probability gives a large, finite KL)


def _check_p_lam(p: Any, lam_hat: Any) -> tuple[np.ndarray, np.ndarray]:
    p = check_array(p, "p", ndim=2, low=0.0, high=1.0 + 1e-6)
    lam = check_array(lam_hat, "lam_hat", ndim=(1, 2), low=0.0, high=1.0)
    if lam.ndim == 1 and lam.shape[0] == p.shape[1]:
        lam = np.broadcast_to(lam, p.shape)
    if lam.shape != p.shape:
        raise ValueError(f"lam_hat must have shape (K,) or p's shape {p.shape}, got {lam.shape}")
    if not np.allclose(lam.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError(f"lam_hat rows must sum to 1 (in-context task distribution), got sums "
                         f"{np.unique(lam.sum(axis=1).round(6))[:3].tolist()}")
    return np.minimum(p, 1.0), np.asarray(lam)


def kl_to_mixture(p: Any, lam_hat: Any, normalize: bool = False) -> np.ndarray:
    """Per-prompt ``KL(lam_hat || p) = sum_k lam_k (log lam_k - log p_k)`` (paper §2.3).

    Parameters
    ----------
    p : array, shape (n, K)
        Answer probabilities.
    lam_hat : array, shape (K,) or (n, K)
        In-context task distribution.
    normalize : bool
        False: the official version with the raw p (penalises "other" mass); True: with ``p / sum(p)``.

    Returns
    -------
    ndarray, shape (n,)

    Examples
    --------
    >>> kl_to_mixture([[0.5, 0.5], [0.25, 0.25]], [0.5, 0.5]).round(4).tolist()
    [0.0, 0.6931]
    >>> kl_to_mixture([[0.25, 0.25]], [0.5, 0.5], normalize=True).round(4).tolist()
    [0.0]
    """
    p, lam = _check_p_lam(p, lam_hat)
    if normalize:
        p = p / np.maximum(p.sum(axis=1, keepdims=True), _FLOOR)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(lam > 0, lam * (np.log(np.maximum(lam, _FLOOR)) - np.log(np.maximum(p, _FLOOR))), 0.0)
    return terms.sum(axis=1)


def calibration_error(mean_p: Any, lam: Any) -> float:
    """Population calibration error: mean over points and tasks of ``|mean P(y_k) - lambda_k|`` (spec §6).

    Parameters
    ----------
    mean_p : array, shape (G, K)
        Mean answer probability of each task at each of G mixture points.
    lam : array, shape (G, K)
        The points' proportions.

    Examples
    --------
    >>> round(calibration_error([[0.9, 0.1], [0.5, 0.4]], [[1.0, 0.0], [0.5, 0.5]]), 6)
    0.075
    """
    mp = check_array(mean_p, "mean_p", ndim=2, low=0.0, high=1.0 + 1e-6)
    lm = check_array(lam, "lam", ndim=2, low=0.0, high=1.0)
    if mp.shape != lm.shape:
        raise ValueError(f"mean_p and lam must have the same shape, got {mp.shape} and {lm.shape}")
    return float(np.mean(np.abs(mp - lm)))


def superposition_stats(p: Any, lam_hat: Any, threshold: float = 0.1) -> dict[str, Any]:
    """Statistics of the per-prompt answer distributions (paper §2.3, Fig. 2; official ``statistics.txt``).

    Parameters
    ----------
    p : array, shape (n, K)
        ``p[i, k] = P(y_k | prompt i)`` (from :func:`~icml25.task_superposition.answer_probabilities`).
    lam_hat : array, shape (K,) or (n, K)
        In-context task distribution of each prompt.
    threshold : float
        A task counts as "in play" in a prompt when its probability is at least this (default 0.1).

    Returns
    -------
    dict
        ``mean``, ``var``, ``median`` (K,): per-task statistics over prompts; ``sorted_mean`` (K,): mean of each
        prompt's probabilities sorted in decreasing order; ``other``: mean of ``1 - sum_k p_k``; ``kl_raw``,
        ``kl_norm``: mean per-prompt KL (official raw p / normalised p); ``kl_population``: KL(mean lam_hat ||
        normalised mean p); ``frac_multi``: fraction of prompts with >= 2 tasks at or above ``threshold``;
        ``mean_in_play``: mean number of such tasks; ``median_second``: median of each prompt's second-largest
        probability.

    Examples
    --------
    >>> s = superposition_stats([[0.6, 0.3], [0.2, 0.7]], [0.5, 0.5])
    >>> s["mean"].round(3).tolist(), round(s["other"], 3), s["frac_multi"], s["sorted_mean"].round(3).tolist()
    ([0.4, 0.5], 0.1, 1.0, [0.65, 0.25])
    """
    p, lam = _check_p_lam(p, lam_hat)
    threshold = check_real(threshold, "threshold", low=0.0, high=1.0, low_open=True)
    srt = -np.sort(-p, axis=1)
    in_play = (p >= threshold).sum(axis=1)
    mean_p = p.mean(axis=0)
    pop = kl_to_mixture(mean_p[None], lam.mean(axis=0), normalize=True)[0] if mean_p.sum() > 0 else float("inf")
    return {
        "n": int(p.shape[0]),
        "mean": mean_p, "var": p.var(axis=0), "median": np.median(p, axis=0),
        "sorted_mean": srt.mean(axis=0),
        "other": float(np.mean(1.0 - p.sum(axis=1))),
        "kl_raw": float(np.mean(kl_to_mixture(p, lam))),
        "kl_norm": float(np.mean(kl_to_mixture(p, lam, normalize=True))),
        "kl_population": float(pop),
        "frac_multi": float(np.mean(in_play >= 2)),
        "mean_in_play": float(np.mean(in_play)),
        "median_second": float(np.median(srt[:, 1])) if p.shape[1] > 1 else 0.0,
    }


def oracle_mixer(example_tasks: Any, K: int) -> np.ndarray:
    """The reference calibrated predictor of the paper's construction (§4, Theorem 1): count the examples of each
    task and output the proportions lambda_hat as the answer distribution.

    Parameters
    ----------
    example_tasks : array of int, shape (m,)
        Task index of every in-context example (``PromptItem.example_tasks``).
    K : int
        Number of tasks.

    Returns
    -------
    ndarray, shape (K,)

    Examples
    --------
    >>> oracle_mixer([0, 1, 1, 2], 3).tolist()
    [0.25, 0.5, 0.25]
    """
    from icml25.core.validation import check_int

    K = check_int(K, "K", low=1)
    t = check_array(example_tasks, "example_tasks", ndim=1, dtype=int, low=0, high=K - 1, min_size=0)
    if t.size == 0:
        return np.full(K, 1.0 / K)
    return np.bincount(t, minlength=K) / t.size


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion ``successes / n`` (95% for ``z = 1.96``); usable at 0 or n successes,
    where the normal approximation and the bootstrap collapse to a point.

    Examples
    --------
    >>> [round(v, 3) for v in wilson_interval(8, 16)]
    [0.28, 0.72]
    >>> [round(v, 3) for v in wilson_interval(16, 16)]
    [0.806, 1.0]
    """
    from icml25.core.validation import check_int

    n = check_int(n, "n", low=1)
    successes = check_int(successes, "successes", low=0, high=n)
    z = check_real(z, "z", low=0.0, low_open=True)
    p = successes / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return float(max(0.0, mid - half)), float(min(1.0, mid + half))
