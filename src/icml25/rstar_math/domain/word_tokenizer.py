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

from icml25.llm.tokenizers import WordTokenizer as _LLMWordTokenizer

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


class WordTokenizer(_LLMWordTokenizer):
    """Whitespace word tokenizer over a closed vocabulary (:class:`icml25.llm.tokenizers.WordTokenizer`, so
    ``load_model("tiny:<dir>")`` loads the policies saved here) whose default vocabulary is StepArith's.

    Ids ``0``/``1``/``2`` are ``<|pad|>``/``<|eot|>``/``<|unk|>``; then ``words`` in order.

    Parameters
    ----------
    words : iterable of str, optional
        The vocabulary (default :func:`steparith_vocabulary`).
    """

    def __init__(self, words: Iterable[str] | None = None) -> None:
        super().__init__(steparith_vocabulary() if words is None else words)

    @classmethod
    def load(cls, path: str | Path) -> WordTokenizer:
        """Read a tokenizer written by :meth:`save`."""
        d = json.loads(Path(path).read_text())
        if d.get("type") != "word":
            raise ValueError(f"{path} is not a word tokenizer file")
        return cls(d["words"])
