"""Top-K membership by beam enumeration of complete continuations (paper §2.3; official ``get_top_probs2``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.validation import check_int, check_real

from .scoring import token_lm

__all__ = ["top_continuations", "topk_membership"]


def top_continuations(model: Any, prompt: str, terminator: str = "\n", num_beams: int = 10, max_tokens: int = 10,
                      eps: float = 0.01) -> dict[str, float]:
    """The most probable complete continuations of ``prompt`` up to ``terminator``, by beam search over tokens.

    At every step each kept partial continuation s contributes the completed answer ``s`` with probability
    ``P(s) * p(terminator | s)``; it is extended (by its ``num_beams`` most likely non-terminator tokens) unless
    ``p(terminator | s) > 0.5``; the ``num_beams`` most probable extensions are kept. The search stops when the best
    kept partial probability is below ``eps`` or after ``max_tokens`` tokens.

    Parameters
    ----------
    model : HFModel, TinyGPT or TokenLM
    prompt : str
    terminator : str
        Must be a single token of the model.
    num_beams, max_tokens : int
    eps : float

    Returns
    -------
    dict str -> float
        Completed continuation text -> probability (sorted by decreasing probability).

    Examples
    --------
    >>> from icml25.task_superposition.testing_models import MockAnswerLM
    >>> top = top_continuations(MockAnswerLM({"12": 0.5, "7": 0.3, "1": 0.1}), "q=")
    >>> {k: round(v, 6) for k, v in top.items()}
    {'12': 0.5, '7': 0.3, '1': 0.1, '?': 0.1}
    """
    lm = token_lm(model)
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a string, got {type(prompt).__name__}")
    if not isinstance(terminator, str) or not terminator:
        raise ValueError(f"terminator must be a non-empty string, got {terminator!r}")
    num_beams = check_int(num_beams, "num_beams", low=1)
    max_tokens = check_int(max_tokens, "max_tokens", low=1)
    eps = check_real(eps, "eps", low=0.0, high=1.0)
    base = lm.encode_prompt(prompt)
    enc = getattr(lm, "encode_continuation", None)
    term = enc(prompt, terminator)[1] if enc is not None else lm.encode_prompt(terminator)[-1:]
    if len(term) != 1:
        raise ValueError(f"terminator {terminator!r} must be a single token of the model, got {len(term)} tokens")
    t_id = term[0]
    beams: list[tuple[list[int], float]] = [([], 0.0)]
    done: dict[str, float] = {}
    for _ in range(max_tokens):
        lp = lm.next_logprobs([base + ids for ids, _ in beams])
        cands: list[tuple[list[int], float]] = []
        for (ids, logp), row in zip(beams, lp):
            pt = float(np.exp(row[t_id]))
            if ids:
                text = lm.decode(ids)
                done[text] = done.get(text, 0.0) + float(np.exp(logp)) * pt
            if pt > 0.5:
                continue
            row = row.copy()
            row[t_id] = -np.inf
            top = np.argsort(-row)[:num_beams]
            cands.extend((ids + [int(t)], logp + float(row[t])) for t in top if np.isfinite(row[t]))
        cands.sort(key=lambda c: -c[1])
        beams = cands[:num_beams]
        if not beams or np.exp(beams[0][1]) < eps:
            break
    return dict(sorted(done.items(), key=lambda kv: -kv[1]))


def topk_membership(model: Any, prompt: str, answer_probs: Any, K: int | None = None, terminator: str = "\n",
                    num_beams: int = 10, max_tokens: int = 10, eps: float = 0.01) -> np.ndarray:
    """Which tasks' answers are among the model's K most probable complete outputs (paper §2.3 / §6).

    With tau the probability of the K-th most probable enumerated continuation (:func:`top_continuations`; the
    floor ``eps`` when fewer than K were found), task k is "in superposition" when ``P(y_k) >= tau - 1e-5``.

    Parameters
    ----------
    model : HFModel, TinyGPT or TokenLM
    prompt : str
    answer_probs : array, shape (K,)
        Exact ``P(y_k + terminator | prompt)`` (from :func:`~icml25.task_superposition.answer_probabilities`).
    K : int, optional
        Default ``len(answer_probs)``.

    Returns
    -------
    ndarray of bool, shape (K,)

    Examples
    --------
    >>> from icml25.task_superposition.testing_models import MockAnswerLM
    >>> topk_membership(MockAnswerLM({"12": 0.5, "7": 0.3, "1": 0.15}), "q=", [0.5, 0.15]).tolist()
    [True, False]
    """
    from icml25.core.validation import check_array

    p = check_array(answer_probs, "answer_probs", ndim=1, low=0.0, high=1.0 + 1e-6)
    K = p.shape[0] if K is None else check_int(K, "K", low=1)
    top = list(top_continuations(model, prompt, terminator, num_beams, max_tokens, eps).values())
    tau = top[K - 1] if len(top) >= K else eps
    return p >= tau - 1e-5
