"""Step-generation and step-scoring protocols used by the search (spec §7: PolicyBackend, StepScorer)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["StepPolicy", "StepScorer", "ConstantScorer"]


@runtime_checkable
class StepPolicy(Protocol):
    """A step generator: ``n`` candidate next steps per prompt, each ending with the stop string it hit."""

    def sample_steps(self, prompts: list[str], n: int = 1, temperature: float = 1.0,
                     stop: Sequence[str] | None = None, max_tokens: int = 64,
                     seed: int | None = None) -> list[list[str]]:
        """For each prompt a list of ``n`` step texts (stop string appended; text without one is unfinished)."""
        ...


@runtime_checkable
class StepScorer(Protocol):
    """A process reward model: score of ``prefix ⊕ step`` in [-1, 1] (spec §7)."""

    def score(self, prefixes: list[str], steps: list[str]) -> np.ndarray:
        """Scores, shape ``(len(steps),)``, in [-1, 1]."""
        ...


class ConstantScorer:
    """A scorer that returns the same value for every step (the 'stub PPM' control of spec §6)."""

    def __init__(self, value: float = 0.0) -> None:
        from icml25.core.validation import check_real

        value = check_real(value, "value", low=-1.0, high=1.0)
        self.value = float(value)

    def score(self, prefixes: list[str], steps: list[str]) -> np.ndarray:
        """``value`` for every step."""
        return np.full(len(steps), self.value)
