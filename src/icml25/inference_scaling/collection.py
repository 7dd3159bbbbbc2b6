"""Collect per-problem success counts from a real language model and a verifier.

:func:`collect_counts` draws ``n_attempts`` samples per problem from any :class:`icml25.llm.LanguageModel`
(``TinyGPT``, ``HFModel``, ``OpenAIServer`` for vLLM or another OpenAI-compatible server) or from a plain
function, checks each with ``verify_fn`` (the oracle verifier of the paper's model) and returns the counts that
:func:`~icml25.inference_scaling.fit_counts` and :func:`~icml25.inference_scaling.coverage_curve` consume.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.progress import progress
from icml25.core.validation import check_int, check_positive, check_probability

__all__ = ["AttemptCounts", "collect_counts"]


@dataclass
class AttemptCounts:
    """Result of :func:`collect_counts`.

    Attributes
    ----------
    n : ndarray of int64, shape (n_problems,)
        Attempts per problem.
    c : ndarray of int64, shape (n_problems,)
        Verified successes per problem.
    outcomes : ndarray of bool, shape (n_problems, n_attempts) or None
        Per-attempt verdicts in sampling order (when ``return_outcomes``).
    n_calls : int
        Number of calls made to the generator.
    """

    n: np.ndarray
    c: np.ndarray
    outcomes: np.ndarray | None
    n_calls: int


def _default_prompt(problem: Any) -> str:
    if isinstance(problem, str):
        return problem
    if isinstance(problem, dict) and isinstance(problem.get("prompt"), str):
        return problem["prompt"]
    raise TypeError(f"problems must be strings or dicts with a 'prompt' string (or pass prompt_fn), got "
                    f"{type(problem).__name__}")


def _as_text(sample: Any) -> str:
    text = getattr(sample, "text", sample)
    if not isinstance(text, str):
        raise TypeError(f"generate_fn must return strings or Generation objects, got {type(sample).__name__}")
    return text


def collect_counts(problems: Sequence[Any], generate_fn: Any, verify_fn: Callable[[Any, str], Any],
                   n_attempts: int, batch_size: int = 64, prompts_per_call: int = 16,
                   prompt_fn: Callable[[Any], str] | None = None, temperature: float = 1.0, top_p: float = 1.0,
                   max_tokens: int = 256, stop: list[str] | None = None, seed: int | None = None,
                   return_outcomes: bool = False) -> AttemptCounts:
    """Sample ``n_attempts`` answers per problem and count the ones ``verify_fn`` accepts.

    Parameters
    ----------
    problems : sequence
        The problems: strings (used as prompts), dicts with a ``"prompt"`` key, or anything ``prompt_fn`` maps
        to a prompt.
    generate_fn : LanguageModel or callable
        Either an object with the :class:`icml25.llm.LanguageModel` ``generate(prompts, n=..., temperature=...,
        top_p=..., max_tokens=..., stop=..., seed=...)`` method, or a function ``generate_fn(prompts, n)``
        returning, for each prompt, a list of ``n`` strings (or ``Generation`` objects).
    verify_fn : callable ``(problem, text) -> bool``
        The verifier (an oracle in the paper's model).
    n_attempts : int
        Attempts per problem.
    batch_size : int
        Samples per prompt per call (the ``n`` of ``generate``; vLLM / OpenAI ``n=``).
    prompts_per_call : int
        Prompts batched into one call.
    prompt_fn : callable, optional
        Maps a problem to its prompt.
    temperature, top_p, max_tokens, stop :
        Sampling arguments passed to a ``LanguageModel``.
    seed : int, optional
        Base seed; call ``j`` uses ``seed + j`` so a run is reproducible with a seeded backend.
    return_outcomes : bool
        Also return the ``(n_problems, n_attempts)`` boolean matrix of verdicts.

    Returns
    -------
    AttemptCounts

    Raises
    ------
    ValueError
        Empty ``problems``, non-positive sizes, or a generator that returns the wrong number of samples.
    TypeError
        ``generate_fn`` is neither a LanguageModel nor callable, or ``verify_fn`` returns a non-boolean.

    Examples
    --------
    >>> import random
    >>> rnd = random.Random(0)
    >>> def gen(prompts, n):
    ...     return [[str(rnd.randint(0, 9)) for _ in range(n)] for _ in prompts]
    >>> res = collect_counts(["3", "7"], gen, lambda prob, text: text == prob, n_attempts=50)
    >>> res.n.tolist(), bool(res.c.max() <= 50)
    ([50, 50], True)
    """
    if isinstance(problems, (str, bytes)) or not isinstance(problems, Sequence):
        raise TypeError(f"problems must be a sequence of problems, got {type(problems).__name__}")
    if len(problems) == 0:
        raise ValueError("problems is empty: need at least one problem")
    for v, name in ((n_attempts, "n_attempts"), (batch_size, "batch_size"), (prompts_per_call, "prompts_per_call"),
                    (max_tokens, "max_tokens")):
        if isinstance(v, (float, np.floating)):
            raise TypeError(f"{name} must be a positive integer, got {v!r}")
        check_int(v, name, low=1)
    check_positive(temperature, "temperature", allow_zero=True)
    check_probability(top_p, "top_p", open_low=True)
    if not callable(verify_fn):
        raise TypeError(f"verify_fn must be callable (problem, text) -> bool, got {type(verify_fn).__name__}")
    is_lm = hasattr(generate_fn, "generate") and callable(generate_fn.generate)
    if not is_lm and not callable(generate_fn):
        raise TypeError(f"generate_fn must be a LanguageModel (with .generate) or a callable, got "
                        f"{type(generate_fn).__name__}")
    to_prompt = prompt_fn or _default_prompt
    prompts = [to_prompt(p) for p in problems]
    m = len(problems)
    outcomes = np.zeros((m, int(n_attempts)), dtype=bool)
    done = np.zeros(m, dtype=np.int64)
    calls = 0
    chunks = [list(range(i, min(i + prompts_per_call, m))) for i in range(0, m, prompts_per_call)]
    for idx in progress(chunks, "sampling attempts"):
        while done[idx[0]] < n_attempts:
            k = int(min(batch_size, n_attempts - done[idx[0]]))
            batch_prompts = [prompts[i] for i in idx]
            if is_lm:
                out = generate_fn.generate(batch_prompts, n=k, temperature=temperature, top_p=top_p,
                                           max_tokens=max_tokens, stop=stop,
                                           seed=None if seed is None else int(seed) + calls)
            else:
                out = generate_fn(batch_prompts, k)
            calls += 1
            if len(out) != len(idx):
                raise ValueError(f"generate_fn returned {len(out)} result lists for {len(idx)} prompts")
            for row, i in zip(out, idx):
                if len(row) != k:
                    raise ValueError(f"generate_fn returned {len(row)} samples for a prompt, expected n={k}")
                for j, sample in enumerate(row):
                    verdict = verify_fn(problems[i], _as_text(sample))
                    if not isinstance(verdict, (bool, np.bool_)) and verdict not in (0, 1):
                        raise TypeError(f"verify_fn must return a bool, got {verdict!r}")
                    outcomes[i, done[i] + j] = bool(verdict)
                done[i] += k
    c = outcomes.sum(axis=1).astype(np.int64)
    return AttemptCounts(n=np.full(m, int(n_attempts), dtype=np.int64), c=c,
                         outcomes=outcomes if return_outcomes else None, n_calls=calls)
