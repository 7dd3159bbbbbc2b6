"""The shared "base model" of the CPU reproduction (spec §5): a TinyGPT pretrained on StepArith problem texts and
single-sentence -> code pairs, never on multi-step solutions. Every round's policy is fine-tuned from it."""

from __future__ import annotations

import numpy as np

from ..domain.steparith import Problem, step_text
from .sft import masked_lm_train

__all__ = ["pretraining_corpus", "pretrain_base"]


def pretraining_corpus(problems: list[Problem], in_context: bool = False) -> list[str]:
    """Problem texts plus one ``sentence <sep> step`` translation pair per fact/operation sentence.

    ``in_context=True`` adds, per problem, a copy text ``question <sep> question`` and the translation pairs *in
    the context of the problem*: ``question <sep> sentence <sep> step`` for every sentence, so the model learns
    to copy the question sentence by sentence and to find a sentence in it and copy its names and numbers (the
    in-context copy behaviour that small transformers only learn after thousands of steps, spec §5); still at
    most one step per text, never a multi-step solution.
    """
    texts = []
    for p in problems:
        texts.append(p.question)
        if in_context:
            texts.append(f"{p.question} <sep> {p.question}")
        for d in p.defs:
            texts.append(f"{d.sentence} <sep>{step_text(d)}")
            if in_context:
                texts.append(f"{p.question} <sep> {d.sentence} <sep>{step_text(d)}")
    return texts


def pretrain_base(lm, problems: list[Problem], steps: int = 300, batch_size: int = 32, lr: float = 2e-3,
                  warmup: int = 20, seed: int = 0, progress: bool = False, in_context: bool = False) -> list[float]:
    """Pretrain ``lm`` (TinyGPT with the word tokenizer) in place on :func:`pretraining_corpus` (with its
    ``in_context`` pairs if asked); returns losses."""
    if not problems:
        raise ValueError("problems must be non-empty")
    from .._validation import check_training

    check_training(steps, batch_size, lr, warmup)
    tok = lm.tokenizer
    texts = pretraining_corpus(problems, in_context=bool(in_context))
    seqs = [[tok.eot_id, *tok.encode(t), tok.eot_id][:lm.config.block_size + 1] for t in texts]
    L = max(len(s) for s in seqs) - 1
    x = np.full((len(seqs), L), tok.pad_id, dtype=np.int64)
    y = np.full((len(seqs), L), -100, dtype=np.int64)
    for r, s in enumerate(seqs):
        a = np.asarray(s)
        x[r, :len(s) - 1] = a[:-1]
        y[r, :len(s) - 1] = a[1:]
    lengths = np.array([len(s) - 1 for s in seqs])
    return masked_lm_train(lm.module, x, y, lengths, steps, batch_size, lr, warmup, 0.1, 1.0, seed, progress,
                           "pretrain base")
