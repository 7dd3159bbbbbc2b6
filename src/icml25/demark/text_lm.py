"""A small word-level text model for the simulated watermarked deployment (spec §5, 1): a lower-cased word /
punctuation tokenizer with probe-template special tokens, and an interpolated absolute-discounting n-gram model.

It supplies every ordinary next-token distribution of the simulator (generation, top-k candidates, perplexity, the
null distribution of z); the probe answers come from :class:`~icml25.demark.InstructionFollowingLM`.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np

from icml25.core.validation import check_int, check_real

from ._ids import check_ids
from .oracles import NextTokenLM, check_id_batch
from .probing import ProbeTemplate

__all__ = ["WordTokenizer", "NGramLM"]

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|[.,!?;:]")
SPECIALS = ("<unk>", "<eos>", "[PROBE]", "[OR]", "[END]", "[ANS]") + tuple(f"[S{i}]" for i in range(10))


class WordTokenizer:
    """Lower-cased words and punctuation; the ``vocab_size - len(SPECIALS)`` most frequent, the rest ``<unk>``.

    Parameters
    ----------
    text : str
        Training text.
    vocab_size : int
        Total vocabulary including the special tokens (>= 32).

    Examples
    --------
    >>> tok = WordTokenizer("to be or not to be , that is the question .", vocab_size=32)
    >>> tok.decode(tok.encode("To be, or not"))
    'to be , or not'
    """

    def __init__(self, text: str, vocab_size: int = 2000):
        if not isinstance(text, str) or not text.strip():
            raise ValueError("text must be a non-empty string")
        vocab_size = check_int(vocab_size, "vocab_size", low=len(SPECIALS) + 16)
        counts = Counter(_WORD.findall(text.lower()))
        words = [w for w, _ in counts.most_common(vocab_size - len(SPECIALS))]
        self.itos = list(SPECIALS) + words
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.vocab_size = len(self.itos)
        self.unk, self.eos = 0, 1

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (unknown words -> ``<unk>``)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        return [self.stoi.get(w, self.unk) for w in _WORD.findall(text.lower())]

    def decode(self, ids: Any) -> str:
        """Space-joined tokens of ``ids``."""
        return " ".join(self.itos[int(i)] for i in ids)

    def probe_template(self) -> ProbeTemplate:
        """The simulator's probe template ``[PROBE] c u [OR] c v [END] s_1..s_10 [ANS] c`` (spec §5, 2(b))."""
        s = self.stoi
        return ProbeTemplate(pre=(s["[PROBE]"],), mid=(s["[OR]"],),
                             post=(s["[END]"], *(s[f"[S{i}]"] for i in range(10)), s["[ANS]"]))

    def word_ids(self, lo: int = 50, hi: int = 1000, min_len: int = 3) -> np.ndarray:
        """Ids of frequent alphabetic words (frequency ranks ``lo..hi``, length >= ``min_len``): probe targets."""
        ids = [i for i, w in enumerate(self.itos[len(SPECIALS):], start=len(SPECIALS))
               if w.isalpha() and len(w) >= min_len]
        return np.asarray(ids[lo:hi], dtype=np.int64)


class NGramLM(NextTokenLM):
    """Interpolated absolute-discounting n-gram model (order 1..4), special tokens never generated:
    ``p_n(w | u) = max(c(u, w) - d, 0) / c(u) + d N1+(u .) / c(u) * p_{n-1}(w | u[1:])``, down to a smoothed
    unigram.

    Parameters
    ----------
    ids : sequence of int
        Training token ids.
    vocab_size : int
    order : int
        n (1 = unigram, 2 = bigram, ...).
    discount : float
        ``d`` in (0, 1).
    n_special : int
        The first ``n_special`` ids get probability 0.

    Examples
    --------
    >>> lm = NGramLM([3, 4, 3, 4, 3, 5], vocab_size=8, order=2)
    >>> p = np.exp(lm.next_logprobs([[3]]))[0]
    >>> round(float(p.sum()), 6), bool(p[4] > p[5] > p[6])
    (1.0, True)
    """

    def __init__(self, ids: Any, vocab_size: int, order: int = 3, discount: float = 0.75, n_special: int = 0):
        self.vocab_size = check_int(vocab_size, "vocab_size", low=2)
        self.order = check_int(order, "order", low=1, high=4)
        self.discount = check_real(discount, "discount", low=0.0, high=1.0, low_open=True, high_open=True)
        self.n_special = check_int(n_special, "n_special", low=0, high=self.vocab_size - 1)
        arr = np.asarray(check_ids(ids, "ids", self.vocab_size), dtype=np.int64)
        if arr.size < self.order:
            raise ValueError(f"ids must hold at least order={self.order} token ids, got {arr.size}")
        uni = np.bincount(arr, minlength=self.vocab_size).astype(float) + 0.1
        uni[: self.n_special] = 0.0
        self.unigram = uni / uni.sum()
        # tables[n][context tuple of length n] = (next ids, counts)
        self.tables: list[dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]]] = [{}]
        for n in range(1, self.order):
            grams = np.stack([arr[i: arr.size - n + i] for i in range(n + 1)], axis=1)
            uniq, cnt = np.unique(grams, axis=0, return_counts=True)
            table: dict[tuple[int, ...], tuple[list[int], list[float]]] = {}
            for g, c in zip(uniq.tolist(), cnt.tolist()):
                e = table.setdefault(tuple(g[:-1]), ([], []))
                e[0].append(g[-1])
                e[1].append(float(c))
            self.tables.append({k: (np.asarray(a), np.asarray(b)) for k, (a, b) in table.items()})

    def _probs(self, seq: list[int]) -> np.ndarray:
        p = self.unigram.copy()
        d = self.discount
        for n in range(1, self.order):
            if len(seq) < n:
                break
            hit = self.tables[n].get(tuple(seq[-n:]))
            if hit is None:
                break
            nxt, cnt = hit
            tot = cnt.sum()
            p *= d * len(nxt) / tot
            p[nxt] += np.maximum(cnt - d, 0.0) / tot
        p[: self.n_special] = 0.0
        return p / p.sum()

    def next_logprobs(self, batch: list[list[int]]) -> np.ndarray:
        """Log-probabilities ``(B, V)`` of the next token given the last ``order - 1`` tokens of each sequence."""
        batch = check_id_batch(batch, self.vocab_size)
        return np.log(np.maximum(np.stack([self._probs(s) for s in batch]), 1e-300))
