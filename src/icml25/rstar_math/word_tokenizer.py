"""Word-level tokenizer of the StepArith domain (spec §5): closed vocabulary, numbers 0-999 as single tokens.

Text is split into whitespace-separated words, with ``\\n`` as a token of its own; decoding joins words with single
spaces, so ``encode(decode(ids)) == ids`` and every canonical StepArith text round-trips exactly. It has the
``encode``/``decode``/``vocab_size``/``eot_id``/``pad_id`` surface that :class:`icml25.llm.TinyGPT` needs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .step_format import SFT_PROMPT, TAGS
from .steparith import ITEMS, NAMES

__all__ = ["WordTokenizer", "steparith_vocabulary"]

PAD, EOT, UNK, SEP = "<|pad|>", "<|eot|>", "<|unk|>", "<sep>"
_SPLIT = re.compile(r"\n|[^ \t\r\n]+")

_TEMPLATE_WORDS = ("has more than fewer times as many shared equally among and together put their the total from "
                   "before How does have ? . = + - * // ( ) print # Now final answer \\boxed{ } <|user|>: "
                   "<|assistant|>: Let's think step by step solve problem with code. % /").split()


def steparith_vocabulary() -> list[str]:
    """The closed StepArith vocabulary (≈ 600 words): template words, names, items, numbers, tags, t-variables."""
    words = list(_TEMPLATE_WORDS) + list(NAMES) + list(ITEMS) + [str(i) for i in range(1000)]
    words += [f"t{i}" for i in range(1, 10)] + [t + ":" for t in ("<|user|>", "<|assistant|>")] + list(TAGS)
    words += _SPLIT.findall(SFT_PROMPT.replace("{question}", "")) + ["\n", SEP]
    return list(dict.fromkeys(w for w in words if w not in (PAD, EOT, UNK)))


class WordTokenizer:
    """Whitespace word tokenizer over a closed vocabulary.

    Ids ``0``/``1``/``2`` are ``<|pad|>``/``<|eot|>``/``<|unk|>``; then ``words`` in order.

    Parameters
    ----------
    words : iterable of str, optional
        The vocabulary (default :func:`steparith_vocabulary`).
    """

    def __init__(self, words: Iterable[str] | None = None) -> None:
        words = list(steparith_vocabulary() if words is None else words)
        for w in words:
            if not isinstance(w, str) or not w or (w != "\n" and _SPLIT.fullmatch(w) is None):
                raise ValueError(f"vocabulary words must be non-empty strings without spaces, got {w!r}")
        self.itos = [PAD, EOT, UNK] + [w for w in dict.fromkeys(words) if w not in (PAD, EOT, UNK)]
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @property
    def vocab_size(self) -> int:
        """Number of ids."""
        return len(self.itos)

    pad_id = property(lambda self: 0, doc="Id of the padding token.")
    eot_id = property(lambda self: 1, doc="Id of the end-of-text token.")
    unk_id = property(lambda self: 2, doc="Id of unknown words.")

    @staticmethod
    def words(text: str) -> list[str]:
        """Split ``text`` into words (``\\n`` is a word)."""
        return _SPLIT.findall(text)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (unknown words -> unk id)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        stoi = self.stoi
        return [stoi.get(w, 2) for w in _SPLIT.findall(text)]

    def decode(self, ids: Iterable[int], skip_special: bool = False) -> str:
        """Words of ``ids`` joined by single spaces (padding dropped)."""
        out = []
        n = len(self.itos)
        for i in ids:
            i = int(i)
            if not 0 <= i < n:
                raise ValueError(f"token id {i} is outside the vocabulary [0, {n})")
            if i == 0 or (skip_special and i < 3):
                continue
            out.append(self.itos[i])
        return " ".join(out)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description."""
        return {"type": "word", "words": self.itos[3:]}

    def save(self, path: str | Path) -> None:
        """Write the vocabulary as JSON."""
        Path(path).write_text(json.dumps(self.to_dict()))

    @classmethod
    def load(cls, path: str | Path) -> WordTokenizer:
        """Read a tokenizer written by :meth:`save`."""
        d = json.loads(Path(path).read_text())
        if d.get("type") != "word":
            raise ValueError(f"{path} is not a word tokenizer file")
        return cls(d["words"])

    def __repr__(self) -> str:
        return f"WordTokenizer(vocab_size={self.vocab_size})"
