"""Evaluation of watermark removal and spoofing: TPR at fixed FPR, median p-value, exact top-k KL, perplexity."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.validation import check_array

from .oracles import NextTokenLM, check_id_batch

__all__ = ["tpr_at_fpr", "median_p", "topk_kl", "perplexity"]


def tpr_at_fpr(p_values_wm: Any, p_values_clean: Any = None, fprs: Any = (0.1, 0.01, 0.001)) -> dict[float, float]:
    """True-positive rate of the one-sided detector at each false-positive rate.

    With ``p_values_clean`` the threshold at FPR f is the empirical f-quantile of the clean p-values (the largest
    threshold whose clean rejection rate is <= f); without it, the nominal threshold ``p < f``.

    Parameters
    ----------
    p_values_wm : array (n,)
        p-values of the texts under test.
    p_values_clean : array (n0,), optional
        p-values of unwatermarked texts (the null).
    fprs : sequence of float in (0, 1)

    Returns
    -------
    dict ``{fpr: tpr}``

    Examples
    --------
    >>> tpr_at_fpr([0.001, 0.2, 0.004, 0.5], fprs=(0.01,))
    {0.01: 0.5}
    """
    p = check_array(p_values_wm, "p_values_wm", ndim=1, low=0.0, high=1.0)
    f = check_array(fprs, "fprs", ndim=1, low=0.0, high=1.0)
    if np.any(f <= 0) or np.any(f >= 1):
        raise ValueError(f"fprs must be in (0, 1), got {f.tolist()}")
    out = {}
    if p_values_clean is None:
        for fv in f:
            out[float(fv)] = float(np.mean(p < fv))
        return out
    q = np.sort(check_array(p_values_clean, "p_values_clean", ndim=1, low=0.0, high=1.0))
    for fv in f:
        k = int(np.floor(fv * len(q)))  # reject p < q[k]: at most k clean texts (<= f n0) rejected
        thr = q[k] if k < len(q) else 1.0
        out[float(fv)] = float(np.mean(p < thr))
    return out


def median_p(p_values: Any) -> float:
    """Median p-value (higher = less detectable). Example: ``median_p([0.1, 0.3, 0.2]) == 0.2``."""
    return float(np.median(check_array(p_values, "p_values", ndim=1, low=0.0, high=1.0)))


def topk_kl(p: Any, q: Any) -> float:
    """Exact ``KL(p || q)`` in nats of two distributions on the same support (each renormalised).

    Parameters
    ----------
    p, q : array (k,)
        Non-negative weights (e.g. probabilities restricted to the top-k).

    Examples
    --------
    >>> round(topk_kl([0.5, 0.5], [0.9, 0.1]), 4)
    0.5108
    """
    p = check_array(p, "p", ndim=1, low=0.0)
    q = check_array(q, "q", ndim=1, low=0.0)
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape, got {p.shape} and {q.shape}")
    if p.sum() <= 0 or q.sum() <= 0:
        raise ValueError("p and q must each have positive total mass")
    p, q = p / p.sum(), q / q.sum()
    m = p > 0
    if np.any(q[m] == 0):
        return float("inf")
    return float(np.sum(p[m] * np.log(p[m] / q[m])))


def perplexity(lm: NextTokenLM, prompts: Any, continuations: Any) -> float:
    """Perplexity ``exp(-mean log p)`` of the continuation tokens under ``lm`` (all continuations pooled).

    Parameters
    ----------
    lm : NextTokenLM
    prompts, continuations : list of id lists (same length; continuations non-empty)
    """
    if not isinstance(lm, NextTokenLM):
        raise TypeError(f"lm must be a NextTokenLM, got {type(lm).__name__}")
    prompts = check_id_batch(prompts, lm.vocab_size, "prompts")
    conts = check_id_batch(continuations, lm.vocab_size, "continuations")
    if len(prompts) != len(conts):
        raise ValueError(f"prompts and continuations must have the same length, got {len(prompts)} and {len(conts)}")
    seqs, targets = [], []
    for pr, co in zip(prompts, conts):
        for t in range(len(co)):
            seqs.append(pr + co[:t])
            targets.append(co[t])
    nll = []
    for s in range(0, len(seqs), 256):
        lp = lm.next_logprobs(seqs[s: s + 256])
        nll.extend((-lp[np.arange(len(lp)), targets[s: s + 256]]).tolist())
    return float(np.exp(np.mean(nll)))
