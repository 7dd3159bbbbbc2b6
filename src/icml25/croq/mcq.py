"""Multiple-choice questions: the ``MCQ`` record, prompt rendering and question revision (spec §2.1, §2.3).

``revise(mcq, keep)`` builds the CROQ question x': the options in ``keep`` in their original relative order,
re-lettered A, B, ... consecutively, with an index map back to the original options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icml25.core.validation import check_array

__all__ = ["MCQ", "LETTERS", "DEFAULT_TEMPLATE", "render_prompt", "revise", "answer_indices"]

#: option letters; 15 options go up to "O"
LETTERS = "ABCDEFGHIJKLMNO"

#: zero-shot prompt: question, lettered options, then "Answer:" (the LLM's next token is the letter)
DEFAULT_TEMPLATE = "{question}\n{options}\nAnswer:"


@dataclass(frozen=True)
class MCQ:
    """One multiple-choice question.

    Parameters
    ----------
    question : str
        Question text.
    options : tuple of str
        Option texts (2 to 15).
    answer : int or None
        Index of the correct option (None when unknown, e.g. a revised question that pruned it).
    meta : dict
        Free metadata (subject, source id, ...).
    """

    question: str
    options: tuple[str, ...]
    answer: int | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.question, str):
            raise TypeError(f"question must be a string, got {type(self.question).__name__}")
        if not self.question.strip():
            raise ValueError("question must be a non-empty string")
        opts = tuple(self.options)
        object.__setattr__(self, "options", opts)
        if not all(isinstance(o, str) for o in opts):
            raise TypeError("options must all be strings")
        if not 2 <= len(opts) <= len(LETTERS):
            raise ValueError(f"an MCQ needs between 2 and {len(LETTERS)} options (letters A-{LETTERS[-1]}), got "
                             f"{len(opts)}")
        seen: dict[str, int] = {}
        for i, o in enumerate(opts):
            key = o.strip()
            if key in seen:
                raise ValueError(f"options must be distinct (ignoring surrounding spaces): options[{seen[key]}] and "
                                 f"options[{i}] are both {o!r:.60}")
            seen[key] = i
        if self.answer is not None:
            if not isinstance(self.answer, (int, np.integer)) or isinstance(self.answer, bool):
                raise TypeError(f"answer must be an int option index or None, got {type(self.answer).__name__}")
            if not 0 <= int(self.answer) < len(opts):
                raise ValueError(f"answer {self.answer} is outside the option range 0..{len(opts) - 1}")
            object.__setattr__(self, "answer", int(self.answer))

    @property
    def n_options(self) -> int:
        """Number of options ``m``."""
        return len(self.options)


def render_prompt(mcq: MCQ, template: str = DEFAULT_TEMPLATE, option_format: str = "{letter}. {text}",
                  separator: str = "\n") -> str:
    """Render the zero-shot prompt of ``mcq``.

    Parameters
    ----------
    mcq : MCQ
    template : str
        Format string with ``{question}`` and ``{options}`` fields.
    option_format : str
        Format of one option with ``{text}`` and (usually) ``{letter}``.
    separator : str
        String joining the rendered options.

    Returns
    -------
    str
    """
    if not isinstance(mcq, MCQ):
        raise TypeError(f"mcq must be an MCQ, got {type(mcq).__name__}")
    for name, val in (("template", template), ("option_format", option_format), ("separator", separator)):
        if not isinstance(val, str):
            raise TypeError(f"{name} must be a string, got {type(val).__name__}")
    if "{options}" not in template:
        raise ValueError(f"template must contain the {{options}} field, got {template!r}")
    if "{text}" not in option_format:
        raise ValueError(f"option_format must contain {{text}} (and usually {{letter}}), got {option_format!r}")
    opts = separator.join(option_format.format(letter=LETTERS[i], text=t) for i, t in enumerate(mcq.options))
    return template.format(question=mcq.question, options=opts)


def revise(mcq: MCQ, keep: Any) -> tuple[MCQ, np.ndarray]:
    """The revised question x' of CROQ (§2.3 step 4).

    Parameters
    ----------
    mcq : MCQ
        The original question.
    keep : array-like
        Boolean mask of length ``m`` or a collection of option indices to keep (at least 2).

    Returns
    -------
    revised : MCQ
        Same question, only the kept options in original relative order (so re-lettered A, B, ...); its
        ``answer`` is the new index of the true option, or None when the true option was pruned.
    index_map : ndarray of int, shape (len(kept),)
        ``index_map[j]`` = original index of revised option ``j``.
    """
    if not isinstance(mcq, MCQ):
        raise TypeError(f"mcq must be an MCQ, got {type(mcq).__name__}")
    if isinstance(keep, (str, bytes)):
        raise TypeError(f"keep must be a boolean mask or integer indices, got {keep!r}")
    k = np.asarray(keep)
    if k.ndim != 1:
        raise ValueError(f"keep must be 1-D (a mask of length {mcq.n_options} or indices), got shape {k.shape}")
    if k.dtype.kind == "f":
        k = check_array(k, "keep", ndim=1, dtype=int)
    if k.dtype == bool:
        if k.shape != (mcq.n_options,):
            raise ValueError(f"a boolean keep mask must have length {mcq.n_options}, got shape {k.shape}")
        idx = np.flatnonzero(k)
    else:
        if k.size and not np.issubdtype(k.dtype, np.integer):
            raise TypeError(f"keep must be a boolean mask or integer indices, got dtype {k.dtype}")
        idx = np.unique(k.astype(int).ravel())  # sorted: original relative order
        if idx.size and (idx[0] < 0 or idx[-1] >= mcq.n_options):
            raise ValueError(f"keep indices must lie in 0..{mcq.n_options - 1}, got {k.tolist()}")
    if idx.size < 2:
        raise ValueError(f"keep must select at least 2 options for a revised question, got {idx.size}")
    answer = None
    if mcq.answer is not None and mcq.answer in idx:
        answer = int(np.flatnonzero(idx == mcq.answer)[0])
    revised = MCQ(mcq.question, tuple(mcq.options[i] for i in idx), answer,
                  {**mcq.meta, "revised_from": mcq.n_options})
    return revised, idx.astype(int)


def answer_indices(mcqs: Sequence[MCQ]) -> np.ndarray:
    """True option indices of ``mcqs`` as an int array ``(n,)`` (raises if any is unknown)."""
    ys = [q.answer for q in mcqs]
    if any(a is None for a in ys):
        raise ValueError("every MCQ needs a known answer index here; found answer=None")
    return np.asarray(ys, dtype=int)
