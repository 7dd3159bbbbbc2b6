"""The policy SLM on :class:`icml25.llm.TinyGPT` (spec §6 models) as a :class:`StepPolicy` for the search."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from icml25.llm.shared_prefix import sample_shared_prefix

from ..domain.word_tokenizer import WordTokenizer

__all__ = ["TinyStepPolicy", "make_tiny_lm"]


def make_tiny_lm(n_layer: int = 2, n_head: int = 4, n_embd: int = 64, block_size: int = 320,
                 tokenizer: WordTokenizer | None = None, seed: int = 0, dropout: float = 0.0):
    """A fresh :class:`icml25.llm.TinyGPT` with the StepArith word tokenizer.

    Parameters
    ----------
    n_layer, n_head, n_embd, block_size : int
        Transformer sizes (spec §6: quick d=64/2 layers, full d=96/3 layers).
    tokenizer : WordTokenizer, optional
        Default: the closed StepArith vocabulary.
    seed : int
        Weight-initialisation seed.
    dropout : float
        Dropout probability.
    """
    from icml25.core.validation import check_int, check_probability
    from icml25.llm import TinyGPT, TinyGPTConfig

    for name, value in (("n_layer", n_layer), ("n_head", n_head), ("n_embd", n_embd), ("block_size", block_size)):
        check_int(value, name, low=1)
    check_probability(dropout, "dropout", open_high=True)
    tok = tokenizer or WordTokenizer()
    cfg = TinyGPTConfig(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size, dropout=dropout)
    return TinyGPT(cfg, tok, seed=seed)


def clone_lm(lm):
    """Deep copy of a TinyGPT (used to re-train every round from the base weights)."""
    return copy.deepcopy(lm)


class TinyStepPolicy:
    """Adapter from a TinyGPT language model to the step-level :class:`StepPolicy` protocol.

    One ``sample_steps`` call is one batched, KV-cached ``generate`` over ``len(prompts) * n`` rows. Each
    returned step starts with a space (word-level format) and ends with the stop string it hit; a sample that
    hit no stop string is returned without one (the search turns it into a NO_VALID_CHILD failure terminal).

    Parameters
    ----------
    lm : icml25.llm.TinyGPT
        The policy language model.
    top_p : float
        Nucleus mass for sampling.
    shared_prefix : bool
        With a word tokenizer whose stop strings are single tokens, prefill each prompt once and share its KV
        cache across the ``n`` samples, stopping rows by token id (else: ``lm.generate``).
    """

    def __init__(self, lm, top_p: float = 1.0, shared_prefix: bool = True) -> None:
        if not hasattr(lm, "generate"):
            raise TypeError("lm must be an icml25.llm language model with generate()")
        from icml25.core.validation import check_probability

        top_p = check_probability(top_p, "top_p", open_low=True)
        self.lm, self.top_p, self.shared_prefix = lm, top_p, bool(shared_prefix)
        self.generated_tokens = 0
        self.calls = 0

    def sample_steps(self, prompts: list[str], n: int = 1, temperature: float = 1.0,
                     stop: Sequence[str] | None = None, max_tokens: int = 32,
                     seed: int | None = None) -> list[list[str]]:
        """``n`` step texts per prompt (see the class docstring)."""
        from .._validation import check_sampling

        n, temperature, max_tokens = check_sampling(n, temperature, max_tokens)
        stop = list(stop or [])
        self.calls += 1
        tok = self.lm.tokenizer
        stop_ids = [tok.stoi.get(s) for s in stop] if hasattr(tok, "stoi") else []
        if self.shared_prefix and stop_ids and all(i is not None for i in stop_ids) and self.top_p == 1.0:
            samples = sample_shared_prefix(self.lm, list(prompts), n, temperature, max_tokens, stop_ids, seed)
            out = []
            for row in samples:
                steps = []
                for ids, stop_id in row:
                    self.generated_tokens += len(ids) + 1
                    words = [tok.itos[i] for i in ids]
                    if stop_id is not None:
                        words.append(tok.itos[stop_id])
                    steps.append(" " + " ".join(words))
                out.append(steps)
            return out
        gens = self.lm.generate(list(prompts), n=n, temperature=temperature, top_p=self.top_p,
                                max_tokens=max_tokens, stop=stop, seed=seed)
        out = []
        for row in gens:
            steps = []
            for g in row:
                self.generated_tokens += max(1, len(g.token_logprobs))
                words = WordTokenizer.words(g.text)
                if g.stop is not None:
                    words.append(g.stop)
                steps.append(" " + " ".join(words))
            out.append(steps)
        return out
