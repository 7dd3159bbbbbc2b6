"""Answerers: anything that reads an MCQ prompt and returns per-letter logits (and hidden features).

- :class:`LMAnswerer` sits on the shared :class:`icml25.llm.LanguageModel` interface (TinyGPT, HFModel,
  OpenAIServer...): it reads ``next_token_logits`` at the position after ``"Answer:"`` and keeps the columns of the
  letter tokens; hidden features come from ``hidden_states`` when the backend has it.
- :class:`TopLogprobsAnswerer` / :class:`OpenAICompatibleAnswerer` read the top-k log-probabilities an API returns
  for the next token; letters missing from the list get a floor log-probability (spec §8).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from icml25.core.validation import check_array, check_int, check_positive, check_real

from .mcq import DEFAULT_TEMPLATE, LETTERS, MCQ, render_prompt

__all__ = ["AnswerOutput", "Answerer", "LMAnswerer", "TopLogprobsAnswerer", "OpenAICompatibleAnswerer",
           "letter_logits_from_top_logprobs"]


@dataclass
class AnswerOutput:
    """What an answerer returns for a batch of questions.

    Attributes
    ----------
    letter_logits : ndarray, shape (n, m_max)
        Logit of each option letter; ``-inf`` in slots beyond a question's option count.
    hidden : ndarray, shape (n, d) or None
        Hidden representation at the answer position (None when the backend has none).
    """

    letter_logits: np.ndarray
    hidden: np.ndarray | None = None

    def __post_init__(self) -> None:
        z = check_array(self.letter_logits, "letter_logits", ndim=2, finite=False)
        if np.isnan(z).any() or np.isposinf(z).any():
            raise ValueError("letter_logits must be finite or -inf (padding), found NaN or +inf")
        if not np.isfinite(z).any(axis=1).all():
            raise ValueError("letter_logits must have at least one finite entry per row")
        self.letter_logits = z
        if self.hidden is not None:
            self.hidden = check_array(self.hidden, "hidden", ndim=2)
            if self.hidden.shape[0] != z.shape[0]:
                raise ValueError(f"hidden must have one row per question ({z.shape[0]}), got {self.hidden.shape[0]}")

    @property
    def answers(self) -> np.ndarray:
        """Argmax option index of each question, shape (n,)."""
        return np.argmax(self.letter_logits, axis=1)

    def probabilities(self) -> np.ndarray:
        """Softmax over the valid letters of each question (0 in padded slots), shape (n, m_max)."""
        z = self.letter_logits - self.letter_logits.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)


@runtime_checkable
class Answerer(Protocol):
    """Protocol: ``answer(mcqs) -> AnswerOutput``."""

    def answer(self, mcqs: Sequence[MCQ]) -> AnswerOutput:
        """Letter logits (and hidden features when available) for each question."""
        ...


def _check_mcqs(mcqs: Any) -> list[MCQ]:
    if isinstance(mcqs, MCQ):
        return [mcqs]
    if not isinstance(mcqs, (list, tuple)) or not mcqs:
        raise TypeError(f"mcqs must be a non-empty list of MCQ, got {type(mcqs).__name__}")
    for i, q in enumerate(mcqs):
        if not isinstance(q, MCQ):
            raise TypeError(f"mcqs[{i}] must be an MCQ, got {type(q).__name__}")
    return list(mcqs)


class LMAnswerer:
    """Answer MCQs with any :class:`icml25.llm.LanguageModel` by reading the letter tokens' next-token logits.

    Parameters
    ----------
    lm : LanguageModel
        A backend with ``next_token_logits(prompts) -> (B, V)`` and a ``tokenizer`` with ``encode``; when it has
        ``hidden_states(prompts) -> (B, d)`` that is returned as features.
    template, option_format, separator : str
        Prompt rendering (see :func:`~icml25.croq.mcq.render_prompt`).
    letter_prefix : str
        Text before the letter in the answer token (``" "`` for most BPE tokenizers after ``"Answer:"``); the id
        used is the last token of ``encode(letter_prefix + letter)``.
    batch_size : int
        Prompts per backend call.
    """

    def __init__(self, lm: Any, template: str = DEFAULT_TEMPLATE, option_format: str = "{letter}. {text}",
                 separator: str = "\n", letter_prefix: str = "", batch_size: int = 256) -> None:
        if not hasattr(lm, "next_token_logits") or not hasattr(lm, "tokenizer"):
            raise TypeError(f"lm must implement next_token_logits and have a tokenizer, got {type(lm).__name__}")
        for name, val in (("template", template), ("option_format", option_format), ("separator", separator),
                          ("letter_prefix", letter_prefix)):
            if not isinstance(val, str):
                raise TypeError(f"{name} must be a string, got {type(val).__name__}")
        batch_size = check_int(batch_size, "batch_size", low=1)
        self.lm = lm
        self.template = template
        self.option_format = option_format
        self.separator = separator
        self.letter_prefix = letter_prefix
        self.batch_size = int(batch_size)
        ids = [lm.tokenizer.encode(letter_prefix + L)[-1] for L in LETTERS]
        if len(set(ids)) != len(ids):
            raise ValueError(f"the letter tokens are not distinct for letter_prefix={letter_prefix!r}: {ids}")
        self.letter_ids = np.asarray(ids, dtype=int)

    def prompts(self, mcqs: Sequence[MCQ]) -> list[str]:
        """Rendered prompts of ``mcqs``."""
        return [render_prompt(q, self.template, self.option_format, self.separator) for q in mcqs]

    def answer(self, mcqs: Sequence[MCQ]) -> AnswerOutput:
        """Letter logits ``(n, max options)`` (``-inf`` beyond each question's count) and hidden states."""
        qs = _check_mcqs(mcqs)
        prompts = self.prompts(qs)
        m = max(q.n_options for q in qs)
        k = np.array([q.n_options for q in qs])
        logits, hidden = [], []
        has_hidden = hasattr(self.lm, "hidden_states")
        for s in range(0, len(prompts), self.batch_size):
            chunk = prompts[s:s + self.batch_size]
            logits.append(np.asarray(self.lm.next_token_logits(chunk), dtype=float)[:, self.letter_ids[:m]])
            if has_hidden:
                hidden.append(np.asarray(self.lm.hidden_states(chunk), dtype=float))
        z = np.concatenate(logits)
        z[np.arange(m)[None, :] >= k[:, None]] = -np.inf
        return AnswerOutput(z, np.concatenate(hidden) if has_hidden else None)


def letter_logits_from_top_logprobs(top: dict[str, float], n_options: int, floor: float | None = None) -> np.ndarray:
    """Letter log-probabilities from a top-k next-token list, with a floor for missing letters.

    Parameters
    ----------
    top : dict of str -> float
        Token text -> log-probability (tokens are matched after stripping whitespace; several tokens mapping to
        the same letter are combined by log-sum-exp).
    n_options : int
        Number of letters (A, B, ...).
    floor : float, optional
        Log-probability of letters absent from ``top``; default: the smallest listed log-probability minus
        ``log(2)`` (below everything the API returned).

    Returns
    -------
    ndarray, shape (n_options,)
    """
    if not isinstance(top, dict):
        raise TypeError(f"top must be a dict of token -> log-probability, got {type(top).__name__}")
    n_options = check_int(n_options, "n_options", low=2, high=len(LETTERS))
    if floor is not None:
        floor = check_real(floor, "floor")
    vals = [float(v) for v in top.values() if v is not None and math.isfinite(float(v))]
    if floor is None:
        floor = (min(vals) if vals else 0.0) - math.log(2.0)
    out = np.full(n_options, -np.inf)
    for tok, lp in top.items():
        t = str(tok).strip()
        if len(t) == 1 and t in LETTERS[:n_options] and lp is not None:
            j = LETTERS.index(t)
            out[j] = np.logaddexp(out[j], float(lp))
    out[~np.isfinite(out)] = floor
    return out


class TopLogprobsAnswerer:
    """Answer MCQs from a function returning the top-k next-token log-probabilities of each prompt.

    Parameters
    ----------
    top_logprobs_fn : callable
        ``fn(prompts: list[str]) -> list[dict[str, float]]``.
    template, option_format, separator : str
        Prompt rendering.
    floor : float, optional
        Log-probability given to letters missing from the top list.
    """

    def __init__(self, top_logprobs_fn: Callable[[list[str]], list[dict[str, float]]],
                 template: str = DEFAULT_TEMPLATE, option_format: str = "{letter}. {text}", separator: str = "\n",
                 floor: float | None = None) -> None:
        if not callable(top_logprobs_fn):
            raise TypeError("top_logprobs_fn must be callable: prompts -> list of {token: logprob}")
        if floor is not None:
            floor = check_real(floor, "floor")
        self.fn = top_logprobs_fn
        self.template, self.option_format, self.separator, self.floor = template, option_format, separator, floor

    def answer(self, mcqs: Sequence[MCQ]) -> AnswerOutput:
        """Letter log-probabilities ``(n, max options)``; no hidden features (CP-OPT then uses logits only)."""
        qs = _check_mcqs(mcqs)
        prompts = [render_prompt(q, self.template, self.option_format, self.separator) for q in qs]
        tops = self.fn(prompts)
        if len(tops) != len(qs):
            raise ValueError(f"top_logprobs_fn returned {len(tops)} results for {len(qs)} prompts")
        m = max(q.n_options for q in qs)
        z = np.full((len(qs), m), -np.inf)
        for i, (q, top) in enumerate(zip(qs, tops)):
            z[i, :q.n_options] = letter_logits_from_top_logprobs(top, q.n_options, self.floor)
        return AnswerOutput(z, None)


class OpenAICompatibleAnswerer(TopLogprobsAnswerer):
    """Answer MCQs with an OpenAI-compatible completions endpoint (vLLM, llama.cpp server, ...).

    Sends ``POST {base_url}/completions`` with ``max_tokens=1, temperature=0, logprobs=top_logprobs`` and reads
    ``choices[i].logprobs.top_logprobs[0]``.

    Parameters
    ----------
    base_url : str
        E.g. ``"http://localhost:8000/v1"``.
    model : str
        Served model name.
    top_logprobs : int
        Number of top tokens requested (servers cap it, often at 20).
    floor : float, optional
        Log-probability of letters missing from the list.
    api_key : str, optional
        Bearer token.
    timeout : float
        Seconds per request.
    """

    def __init__(self, base_url: str, model: str, top_logprobs: int = 20, floor: float | None = None,
                 api_key: str | None = None, timeout: float = 120.0, **render: Any) -> None:
        for name, val in (("base_url", base_url), ("model", model)):
            if not isinstance(val, str) or not val.strip():
                raise (TypeError if not isinstance(val, str) else ValueError)(
                    f"{name} must be a non-empty string, got {val!r}")
        top_logprobs = check_int(top_logprobs, "top_logprobs", low=1)
        timeout = check_positive(timeout, "timeout")
        self.base_url, self.model, self.top_logprobs = base_url.rstrip("/"), model, top_logprobs
        self.api_key, self.timeout = api_key, timeout
        super().__init__(self._query, floor=floor, **render)

    def _query(self, prompts: list[str]) -> list[dict[str, float]]:
        from icml25.core.optional import require

        httpx = require("httpx", extra="llm")
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {"model": self.model, "prompt": prompts, "max_tokens": 1, "temperature": 0.0,
                "logprobs": self.top_logprobs}
        r = httpx.post(f"{self.base_url}/completions", json=body, headers=headers, timeout=self.timeout)
        r.raise_for_status()
        choices = sorted(r.json()["choices"], key=lambda c: c.get("index", 0))
        return [dict((c.get("logprobs") or {}).get("top_logprobs", [{}])[0] or {}) for c in choices]
