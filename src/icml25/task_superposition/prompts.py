"""Mixture prompts: K tasks' examples in proportions lambda, then one query (paper §2, official
``parse_raw_config_for_prompt`` and prompt template ``"{examples}\\n{question}"``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_int, check_option

from .tasks import TaskFamily

__all__ = ["task_counts", "PromptItem", "build_prompt", "MixturePromptBuilder"]

_MAX_DRAWS = 10_000  # attempts to draw a query with distinct answers / an example input != the query input


def task_counts(proportions: Sequence[float], m: int) -> tuple[int, ...]:
    """Number of examples per task, by the official rounding rule.

    ``m_k = floor(lambda_k * m)``; the remainder is then handed out one at a time, in task order, to the tasks whose
    ``lambda_k * m`` is not an integer (a single pass, exactly as ``parse_raw_config_for_prompt``).

    Parameters
    ----------
    proportions : sequence of float, shape (K,)
        Task proportions lambda, non-negative, summing to 1 (within 1e-5, the official tolerance).
    m : int
        Total number of in-context examples (>= 1; a zero-shot prompt is ``build_prompt(family, [0] * K)``).

    Returns
    -------
    tuple of int
        ``(m_1, ..., m_K)`` with sum ``m``.

    Examples
    --------
    >>> task_counts([1/3, 1/3, 1/3], 60), task_counts([0.5, 0.25, 0.25], 10), task_counts([1/3, 1/3, 1/3], 10)
    ((20, 20, 20), (5, 3, 2), (4, 3, 3))
    """
    lam = check_array(proportions, "proportions", ndim=1, low=0.0)
    m = check_int(m, "m", low=1)
    if abs(float(lam.sum()) - 1.0) > 1e-5:
        raise ValueError(f"proportions must sum to 1 (within 1e-5), got sum {float(lam.sum()):.6g}")
    counts = [int(float(f) * m) for f in lam]
    missing = m - sum(counts)
    for i, f in enumerate(lam):
        if missing <= 0:
            break
        if not float(f * m).is_integer():
            counts[i] += 1
            missing -= 1
    if sum(counts) != m:  # cannot happen for proportions summing to 1 within the tolerance; kept as a guard
        raise ValueError(f"proportions {lam.tolist()} do not split m={m} examples (got counts {counts})")
    return tuple(counts)


@dataclass(frozen=True)
class PromptItem:
    """One mixture prompt.

    Attributes
    ----------
    prompt : str
        Examples joined by the family's joiner, the joiner, then the query (just the query when m = 0).
    answers : tuple of str, shape (K,)
        The K tasks' answers to the query, ``y_k = f_k(x_q)``.
    counts : tuple of int, shape (K,)
        Examples of each task in the prompt.
    lam_hat : ndarray, shape (K,)
        In-context task distribution ``m_k / sum(m)`` (uniform when m = 0).
    example_tasks : tuple of int, shape (m,)
        Task index of each example, in prompt order.
    query_input : Any
        The query input ``x_q``.
    """

    prompt: str
    answers: tuple[str, ...]
    counts: tuple[int, ...]
    lam_hat: np.ndarray
    example_tasks: tuple[int, ...]
    query_input: Any


def _draw_query(family: TaskFamily, rng: np.random.Generator) -> tuple[Any, list[str]]:
    for _ in range(_MAX_DRAWS):
        x = family.sample_input(rng)
        ans = family.answers(x)
        if not family.distinct_answers or len(set(ans)) == len(ans):
            return x, ans
    raise RuntimeError(f"family {family.name!r}: no query with {family.K} distinct answers in {_MAX_DRAWS} draws")


def build_prompt(family: TaskFamily, counts: Sequence[int], rng: np.random.Generator | int = 0,
                 order: str = "random") -> PromptItem:
    """Build one prompt with ``counts[k]`` examples of task k and a fresh query.

    Every example gets a fresh input different from the query input (examples may share inputs with each other,
    as in the official generators); the query is drawn until its K answers are distinct.

    Parameters
    ----------
    family : TaskFamily
    counts : sequence of int, shape (K,)
        Examples per task (non-negative).
    rng : numpy Generator or int
        Randomness (an int seeds a new generator).
    order : {"random", "blocked"}
        ``"random"``: the example slots of each task are a uniform random permutation (official ``order: random``);
        ``"blocked"``: all examples of task 1, then task 2, ...

    Returns
    -------
    PromptItem

    Examples
    --------
    >>> from icml25.task_superposition import synthetic_family
    >>> item = build_prompt(synthetic_family("F-AB"), (2, 1, 0), rng=0)
    >>> item.counts, item.lam_hat.round(3).tolist(), len(item.prompt.split("\\n"))
    ((2, 1, 0), [0.667, 0.333, 0.0], 4)
    """
    if not isinstance(family, TaskFamily):
        raise TypeError(f"family must be a TaskFamily, got {type(family).__name__}")
    c = check_array(counts, "counts", ndim=1, dtype=int, low=0)
    if c.shape[0] != family.K:
        raise ValueError(f"counts must have one entry per task (K={family.K}), got {c.shape[0]}")
    check_option(order, "order", ("random", "blocked"))
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(check_int(rng, "rng", low=0))
    prompt, ans, slots, xq = _draw_prompt(family, c, rng, order)
    total = int(c.sum())
    lam_hat = c / total if total else np.full(family.K, 1.0 / family.K)
    return PromptItem(prompt, tuple(ans), tuple(int(v) for v in c), lam_hat, tuple(int(k) for k in slots), xq)


def _draw_prompt(family: TaskFamily, counts: np.ndarray, rng: np.random.Generator,
                 order: str) -> tuple[str, list[str], np.ndarray, Any]:
    """The draws of :func:`build_prompt` on checked arguments: ``(prompt, the query's K answers, example slots,
    query input)``. The training loop calls it directly (one prompt per row and step, no :class:`PromptItem`)."""
    xq, ans = _draw_query(family, rng)
    fmt = family.format_input
    qtext = fmt(xq)
    slots = np.repeat(np.arange(family.K), counts)
    if order == "random":
        slots = rng.permutation(slots)
    lines = []
    for k in slots:
        for _ in range(_MAX_DRAWS):
            x = family.sample_input(rng)
            if fmt(x) != qtext:
                break
        else:
            raise RuntimeError(f"family {family.name!r}: could not draw an example input different from the query")
        lines.append(family.example(x, int(k)))
    query = family.query(xq)
    return (family.joiner.join([*lines, query]) if lines else query), ans, slots, xq


class MixturePromptBuilder:
    """Generator of mixture prompts with task proportions lambda (paper §2; official prompt pipeline).

    Parameters
    ----------
    family : TaskFamily
        The setting (K tasks).
    m : int
        Number of in-context examples (official: 60 for 3 tasks, 80 for 4).
    proportions : sequence of float, optional
        Task proportions lambda (default uniform); counts follow :func:`task_counts`.
    order : {"random", "blocked"}
        Example order (see :func:`build_prompt`).
    random_state : int
        Seed; the i-th prompt of :meth:`sample` is the same for the same seed.

    Examples
    --------
    >>> from icml25.task_superposition import official_setting
    >>> b = MixturePromptBuilder(official_setting("country"), m=6, proportions=[0.5, 0.5, 0.0], random_state=0)
    >>> items = b.sample(2)
    >>> items[0].counts, items[0].prompt.count("\\n"), items[0].prompt.endswith("->")
    ((3, 3, 0), 6, True)
    """

    def __init__(self, family: TaskFamily, m: int, proportions: Sequence[float] | None = None,
                 order: str = "random", random_state: int = 0):
        if not isinstance(family, TaskFamily):
            raise TypeError(f"family must be a TaskFamily, got {type(family).__name__}")
        self.family = family
        self.m = check_int(m, "m", low=1)
        lam = np.full(family.K, 1.0 / family.K) if proportions is None else proportions
        lam = check_array(lam, "proportions", ndim=1, low=0.0)
        if lam.shape[0] != family.K:
            raise ValueError(f"proportions must have one entry per task (K={family.K}), got {lam.shape[0]}")
        self.proportions = lam
        self.counts = task_counts(lam, self.m)
        self.order = check_option(order, "order", ("random", "blocked"))
        self.random_state = check_int(random_state, "random_state", low=0)
        self._rng = np.random.default_rng(self.random_state)

    def build(self) -> PromptItem:
        """The next prompt of this builder's stream."""
        return build_prompt(self.family, self.counts, self._rng, self.order)

    def sample(self, n: int) -> list[PromptItem]:
        """``n`` prompts drawn from a fresh stream seeded by ``random_state`` (reproducible)."""
        n = check_int(n, "n", low=1)
        rng = np.random.default_rng(self.random_state)
        return [build_prompt(self.family, self.counts, rng, self.order) for _ in range(n)]
