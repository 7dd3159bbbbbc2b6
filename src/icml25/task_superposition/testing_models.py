"""Language models with known answer distributions, for tests and examples (no weights, no torch)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["MockAnswerLM"]


class MockAnswerLM:
    """A character-level :class:`~icml25.task_superposition.scoring.TokenLM` whose continuation after any prompt
    is the answer ``a`` followed by ``terminator`` with probability ``masses[a]`` (the rest of the mass goes to the
    token ``"?"``, which leads to a terminated "other" answer).

    Token ids are code points; the vocabulary is ``vocab_size`` code points. Next-token probabilities after a
    prompt's continuation prefix ``s`` are the total mass of answers extending ``s`` (a trie), so the sequence
    probability of ``a + terminator`` is exactly ``masses[a]``.

    Parameters
    ----------
    masses : mapping str -> float
        Answer masses (non-negative, sum <= 1). Answers must not contain the terminator or ``"?"``.
    terminator : str
        One character ending every answer.
    prompt_end : str
        The continuation starts after the last occurrence of this string in the sequence (default: none; the
        continuation is what follows the prompt passed to :meth:`encode_prompt`).

    Examples
    --------
    >>> lm = MockAnswerLM({"12": 0.5, "1": 0.2})
    >>> p = lm.encode_prompt("q=")
    >>> round(float(np.exp(lm.next_logprobs([p])[0][ord("1")])), 6)
    0.7
    """

    def __init__(self, masses: Mapping[str, float], terminator: str = "\n", vocab_size: int = 256):
        from icml25.core.validation import check_int

        if not isinstance(terminator, str) or len(terminator) != 1:
            raise ValueError(f"terminator must be one character, got {terminator!r}")
        vocab_size = check_int(vocab_size, "vocab_size", low=128)
        if not isinstance(masses, Mapping) or not masses:
            raise ValueError(f"masses must be a non-empty mapping answer -> probability, got {masses!r:.60}")
        total = 0.0
        for a, v in masses.items():
            if not isinstance(a, str) or not a or terminator in a or "?" in a:
                raise ValueError(f"masses keys must be non-empty strings without the terminator or '?', got {a!r}")
            if not (isinstance(v, (int, float)) and 0 <= v <= 1):
                raise ValueError(f"masses values must be probabilities, got {v!r}")
            total += float(v)
        if total > 1 + 1e-12:
            raise ValueError(f"masses must sum to at most 1, got {total}")
        self.masses = {a + terminator: float(v) for a, v in masses.items()}
        self.masses["?" + terminator] = max(0.0, 1.0 - total)
        self.terminator, self.vocab_size = terminator, int(vocab_size)
        self._prompt_len: dict[tuple[int, ...], int] = {}

    def encode_prompt(self, text: str) -> list[int]:
        ids = [0, *(ord(ch) for ch in text)]  # 0 marks the start; the prompt length is remembered below
        self._prompt_len[tuple(ids)] = len(ids)
        return ids

    def encode_continuation(self, prompt: str, cont: str) -> tuple[list[int], list[int], bool]:
        return self.encode_prompt(prompt), [ord(ch) for ch in cont], True

    def _continuation(self, seq: list[int]) -> str:
        for cut in range(len(seq), -1, -1):
            if tuple(seq[:cut]) in self._prompt_len:
                return "".join(chr(i) for i in seq[cut:])
        raise ValueError("sequence does not start with a prompt encoded by this model")

    def next_logprobs(self, seqs: list[list[int]]) -> np.ndarray:
        out = np.full((len(seqs), self.vocab_size), -np.inf)
        for r, s in enumerate(seqs):
            prefix = self._continuation(list(s))
            probs = np.zeros(self.vocab_size)
            for a, v in self.masses.items():
                if a.startswith(prefix) and len(a) > len(prefix):
                    probs[ord(a[len(prefix)])] += v
            tot = probs.sum()
            if tot <= 0:  # after a completed answer: the terminator again (never scored)
                probs[ord(self.terminator)] = 1.0
                tot = 1.0
            with np.errstate(divide="ignore"):
                out[r] = np.log(probs / tot)
        return out

    def decode(self, ids: list[int]) -> str:
        return "".join(chr(i) for i in ids)
