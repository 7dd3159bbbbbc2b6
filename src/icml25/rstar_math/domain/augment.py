"""Entity-renaming augmentation of StepArith SFT data (a CPU-reproduction lever, not in the paper).

A policy trained from scratch on a few hundred trajectories over a closed vocabulary of 20 names and 20 items
memorises which names belong to which problem: on an unseen problem it copies the numbers but writes names of
training problems (a NameError). Renaming the entities of each trajectory consistently (one random permutation of
the names and one of the items, applied to the question and the response alike) keeps every trajectory correct
and executable while making the names carry no information beyond the question, so the model has to copy them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from .steparith import ITEMS, NAMES

__all__ = ["rename_entities", "augment_renamed"]

_WORD = re.compile(r"[^ \t\r\n]+")


def rename_entities(texts: Sequence[str], rng: np.random.Generator) -> list[str]:
    """Apply one random permutation of :data:`NAMES` and one of :data:`ITEMS` to every text in ``texts``.

    The same mapping is used for all texts (pass a question and its response together); words are replaced
    whole, everything else (numbers, tags, spacing) is unchanged.
    """
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a sequence of strings")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    mapping = dict(zip(NAMES, (NAMES[i] for i in rng.permutation(len(NAMES)))))
    mapping.update(zip(ITEMS, (ITEMS[i] for i in rng.permutation(len(ITEMS)))))
    return [_WORD.sub(lambda m: mapping.get(m.group(0), m.group(0)), t) for t in texts]


def augment_renamed(examples: Sequence[tuple[str, str]], copies: int, seed: int = 0) -> list[tuple[str, str]]:
    """``examples`` (prompt, response) followed by ``copies`` renamed versions of each (see
    :func:`rename_entities`); ``copies=0`` returns the examples unchanged."""
    from icml25.core.validation import check_int

    copies = check_int(copies, "copies", low=0)
    seed = check_int(seed, "seed", low=0)
    out = [(p, r) for p, r in examples]
    rng = np.random.default_rng(seed)
    for _ in range(copies):
        for p, r in examples:
            p2, r2 = rename_entities([p, r], rng)
            out.append((p2, r2))
    return out
