"""The data of the De-mark reproduction, both shipped (``data/SOURCE.md``): tinyshakespeare for the word-level text
model of the simulated deployment (90 % train, 10 % held out for prompts) and the MMW book-report prompts of the
paper's deployment for the real model."""

from __future__ import annotations

import json
from typing import Any

from icml25.core.data import shipped_path

from .text_lm import WordTokenizer


def text_data(vocab: int) -> dict[str, Any]:
    """tinyshakespeare split 90 / 10 and encoded by a :class:`WordTokenizer` of ``vocab`` words (incl. specials):
    ``{"tok", "train", "held"}``."""
    text = shipped_path("demark", "tinyshakespeare.txt").read_text(encoding="utf-8")
    n = int(0.9 * len(text))
    tok = WordTokenizer(text[:n], vocab)
    train = tok.encode(text[:n])
    held = tok.encode(text[n:])
    return {"tok": tok, "train": train, "held": held}


def english_words(n: int = 4000) -> list[str]:
    """Up to ``n`` English words (and punctuation) of tinyshakespeare's first 90 %, by decreasing frequency: the
    frequency-ordered word list the reproduction passes as ``corpus_words`` to
    :func:`icml25.demark.real_model.vocabulary_words` (the paper uses Brown-corpus ranks 200..4000)."""
    from icml25.core.validation import check_int

    from .text_lm import SPECIALS

    n = check_int(n, "n", low=16)
    text = shipped_path("demark", "tinyshakespeare.txt").read_text(encoding="utf-8")
    return WordTokenizer(text[: int(0.9 * len(text))], n + len(SPECIALS)).itos[len(SPECIALS):]


def prompts(held: list[int], n: int, words: int) -> list[list[int]]:
    """``n`` prompts of ``words`` ids each, spread evenly over the held-out ids."""
    stride = max(len(held) // (n + 1), words + 1)
    return [held[i * stride: i * stride + words] for i in range(n)]


def mmw_book_report_prompts() -> list[str]:
    """The MMW book-report prompts (the paper's deployment), in their shipped order."""
    return json.loads(shipped_path("demark", "mmw_prompts.json").read_text())["mmw_book_report"]
