"""The one language-model interface every LLM-based paper uses.

A backend implements :class:`LanguageModel`: batched sampling (:meth:`generate`), scoring of continuations
(:meth:`logprobs`) and next-token logits (:meth:`next_token_logits`), plus a ``tokenizer``. Backends:
:class:`~icml25.llm.tiny.TinyGPT` (trained here on CPU), :class:`~icml25.llm.hf.HFModel` (transformers, local
weights) and :class:`~icml25.llm.openai_server.OpenAIServer` (vLLM or any OpenAI-compatible server).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from icml25.core.validation import check_int, check_probability, check_real

__all__ = ["Generation", "LanguageModel", "Tokenizer", "truncate_at_stop", "validate_prompts", "check_sampling_args"]


@runtime_checkable
class Tokenizer(Protocol):
    """Minimal tokenizer protocol: text <-> list of token ids."""

    vocab_size: int

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``."""
        ...

    def decode(self, ids: list[int]) -> str:
        """Text of token ids."""
        ...


@dataclass
class Generation:
    """One sampled continuation.

    Attributes
    ----------
    text : str
        The continuation (without the prompt), cut before the first stop string unless ``include_stop``.
    token_logprobs : list of float
        Log-probability of each generated token under the sampling distribution's model (before temperature).
    finish_reason : str
        ``"stop"`` (a stop string or end-of-text was produced) or ``"length"`` (max_tokens reached).
    stop : str or None
        The stop string that ended the generation, if any.
    token_ids : list of int or None
        The generated token ids, where the backend reports them (``HFModel.expand``); not part of equality.
    """

    text: str
    token_logprobs: list[float] = field(default_factory=list)
    finish_reason: str = "length"
    stop: str | None = None
    token_ids: list[int] | None = field(default=None, compare=False, repr=False)

    @property
    def logprob(self) -> float:
        """Sum of the token log-probabilities."""
        return float(sum(self.token_logprobs))


@runtime_checkable
class LanguageModel(Protocol):
    """The interface of every backend.

    Methods are batched over prompts. ``generate`` returns, for each prompt, a list of ``n`` :class:`Generation`.
    """

    tokenizer: Any

    def generate(self, prompts: list[str], n: int = 1, temperature: float = 1.0, top_p: float = 1.0,
                 max_tokens: int = 64, stop: list[str] | None = None,
                 seed: int | None = None) -> list[list[Generation]]:
        """Sample ``n`` continuations of each prompt (``temperature=0`` is greedy)."""
        ...

    def logprobs(self, prompts: list[str], continuations: list[str]) -> list[np.ndarray]:
        """Per-token log-probabilities of ``continuations[i]`` given ``prompts[i]`` (array per pair)."""
        ...

    def next_token_logits(self, prompts: list[str]) -> np.ndarray:
        """Logits of the next token after each prompt, shape ``(len(prompts), vocab_size)``."""
        ...


def validate_prompts(prompts: Any, name: str = "prompts") -> list[str]:
    """Check that ``prompts`` is a non-empty list of strings (a single string is wrapped)."""
    if isinstance(prompts, str):
        return [prompts]
    if not isinstance(prompts, (list, tuple)):
        raise TypeError(f"{name} must be a non-empty list of strings, got {type(prompts).__name__}")
    if not prompts:
        raise ValueError(f"{name} is an empty list; pass at least one string")
    for i, p in enumerate(prompts):
        if not isinstance(p, str):
            raise TypeError(f"{name}[{i}] must be a string, got {type(p).__name__}")
    return list(prompts)


def truncate_at_stop(text: str, stop: list[str] | None) -> tuple[str, str | None]:
    """Cut ``text`` before the earliest occurrence of any stop string; return ``(text, stop_found)``."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None and (not isinstance(stop, (list, tuple)) or not all(isinstance(s, str) for s in stop)):
        raise TypeError(f"stop must be a string or a list of strings, got {stop!r}")
    if not stop:
        return text, None
    best, found = len(text), None
    for s in stop:
        if not s:
            continue
        i = text.find(s)
        if 0 <= i < best:
            best, found = i, s
    return text[:best], found


def check_sampling_args(n: Any, temperature: Any, top_p: Any, max_tokens: Any, stop: Any) -> list[str]:
    """Validate the common ``generate`` arguments; return ``stop`` as a list (empty strings dropped).

    ``n`` and ``max_tokens`` must be integers (not integral floats: they size loops), ``temperature`` a finite real
    ``>= 0`` (0 = greedy), ``top_p`` a probability in ``(0, 1]``.
    """
    for name, value, low in (("n", n, 1), ("max_tokens", max_tokens, 0)):
        if isinstance(value, (float, np.floating)):
            raise TypeError(f"{name} must be an integer, got {value!r}")
        check_int(value, name, low=low)
    check_real(temperature, "temperature", low=0.0)
    check_probability(top_p, "top_p", open_low=True)
    if stop is None:
        return []
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, (list, tuple)) or not all(isinstance(s, str) for s in stop):
        raise TypeError(f"stop must be a string or a list of strings, got {stop!r}")
    return [s for s in stop if s]
