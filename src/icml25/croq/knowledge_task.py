"""A synthetic knowledge task for a from-scratch MCQ reader (spec §5-§6).

A random fact table maps (entity, relation) to a value; values fall into clusters of similar values. A question
asks for the value of one (entity, relation) and lists ``k`` lettered candidate values: the answer and ``k - 1``
distractors, of which a Binomial(k - 1, 1/2) number come from the answer's own cluster (the confusable ones).
Every symbol is one character, so a character-level :class:`icml25.llm.TinyGPT` reads one token per symbol; the
prompt is ``? entity relation (letter value) x k =`` and the next token is the answer letter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml25.core.validation import check_int

from .mcq import LETTERS, MCQ

__all__ = ["KnowledgeTask", "TASK_TEMPLATE", "TASK_OPTION_FORMAT", "TASK_SEPARATOR"]

#: prompt template of the synthetic task: question marker, entity, relation, the options, answer marker
TASK_TEMPLATE = "?{question}{options}="
TASK_OPTION_FORMAT = "{letter}{text}"
TASK_SEPARATOR = ""

_ENTITY0, _RELATION0, _VALUE0 = 0x4E00, 0x03B1, 0x0410  # CJK, Greek, Cyrillic code points: one char per symbol


@dataclass(frozen=True)
class KnowledgeTask:
    """The fact table and question sampler.

    Parameters
    ----------
    n_entities : int
        Number of entities (60 in the spec).
    n_relations : int
        Number of relations (2).
    n_values : int
        Number of values (40).
    cluster_size : int
        Values per cluster (5, so 8 clusters).
    seed : int
        Seed of the fact table.
    """

    n_entities: int = 60
    n_relations: int = 2
    n_values: int = 40
    cluster_size: int = 5
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("n_entities", "n_relations", "n_values", "cluster_size"):
            check_int(getattr(self, name), name, low=1)
        check_int(self.seed, "seed", low=0)
        if self.n_values % self.cluster_size or self.n_values // self.cluster_size < 2:
            raise ValueError(f"n_values ({self.n_values}) must be a multiple (>= 2x) of cluster_size "
                             f"({self.cluster_size})")
        if self.n_values < len(LETTERS):
            raise ValueError(f"n_values must be >= {len(LETTERS)} to fill 15-option questions")

    @property
    def facts(self) -> np.ndarray:
        """Fact table ``(n_entities, n_relations)`` of value ids."""
        return np.random.default_rng(self.seed).integers(0, self.n_values, size=(self.n_entities, self.n_relations))

    def symbols(self) -> list[str]:
        """Every character the task uses (entities, relations, values, letters, markers)."""
        return ([chr(_ENTITY0 + i) for i in range(self.n_entities)]
                + [chr(_RELATION0 + i) for i in range(self.n_relations)]
                + [chr(_VALUE0 + i) for i in range(self.n_values)] + list(LETTERS) + ["?", "="])

    @staticmethod
    def value_text(v: int) -> str:
        """Character of value ``v``."""
        return chr(_VALUE0 + int(v))

    def sample(self, n: int, n_options: int | tuple[int, int], rng: np.random.Generator) -> list[MCQ]:
        """Draw ``n`` questions.

        Parameters
        ----------
        n : int
            Number of questions.
        n_options : int or (low, high)
            Fixed option count, or uniform over ``low..high`` inclusive.
        rng : numpy Generator

        Returns
        -------
        list of MCQ
            ``meta`` holds ``entity``, ``relation`` and ``value``.
        """
        n = check_int(n, "n", low=1)
        if isinstance(n_options, tuple):
            lo, hi = (check_int(v, "n_options", low=2, high=len(LETTERS)) for v in n_options)
        else:
            lo = hi = check_int(n_options, "n_options", low=2, high=len(LETTERS))
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy Generator, got {type(rng).__name__}")
        if not 2 <= lo <= hi <= len(LETTERS):
            raise ValueError(f"n_options must lie in 2..{len(LETTERS)}, got {n_options!r}")
        facts = self.facts
        cs = self.cluster_size
        out = []
        for _ in range(int(n)):
            k = int(rng.integers(lo, hi + 1))
            e, r = int(rng.integers(self.n_entities)), int(rng.integers(self.n_relations))
            ans = int(facts[e, r])
            cl = ans // cs
            same = [v for v in range(cl * cs, (cl + 1) * cs) if v != ans]
            other = [v for v in range(self.n_values) if v // cs != cl]
            n_same = min(int(rng.binomial(k - 1, 0.5)), len(same))
            d = list(rng.choice(same, n_same, replace=False)) + list(rng.choice(other, k - 1 - n_same, replace=False))
            vals = [ans, *[int(v) for v in d]]
            order = rng.permutation(k)
            opts = tuple(self.value_text(vals[int(i)]) for i in order)
            q = chr(_ENTITY0 + e) + chr(_RELATION0 + r)
            out.append(MCQ(q, opts, int(np.flatnonzero(order == 0)[0]), {"entity": e, "relation": r, "value": ans}))
        return out
