"""Policy supervised fine-tuning (spec §2.9) with prompt and executor-output tokens masked."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ..domain.step_format import END_OUTPUT, OUTPUT, StepFormat
from ._trunk import masked_logits

__all__ = ["sft_examples", "train_sft", "lm_batches", "masked_lm_train"]


def sft_examples(records: Sequence, fmt: StepFormat | None = None) -> list[tuple[str, str]]:
    """``(prompt, response)`` pairs from SFT records (objects or dicts with ``query``/``response``)."""
    fmt = fmt or StepFormat()
    out = []
    for i, r in enumerate(records):
        q = r["query"] if isinstance(r, dict) else r.query
        resp = r["response"] if isinstance(r, dict) else r.response
        if not isinstance(q, str) or not isinstance(resp, str) or not resp.strip():
            raise ValueError(f"records[{i}] must have a non-empty query and response")
        out.append((fmt.prompt(q), resp))
    return out


def _encode_masked(tok, prompt: str, response: str, block: int) -> tuple[list[int], list[bool]]:
    """Ids ``<eot> prompt response <eot>`` and, per id, whether it is a training target."""
    p_ids = tok.encode(prompt)
    ids = [tok.eot_id, *p_ids]
    train = [False] * len(ids)
    for piece in split_outputs(response):
        piece_ids = tok.encode(piece)
        if piece.startswith(OUTPUT):
            ids += piece_ids
            train += [False] * len(piece_ids)
        else:
            ids += piece_ids
            train += [True] * len(piece_ids)
    ids.append(tok.eot_id)
    train.append(True)
    return ids[:block + 1], train[:block + 1]


def split_outputs(text: str) -> list[str]:
    """``text`` cut into pieces, each ``<output>...<end_of_output>`` block a piece of its own (executor output,
    masked from the SFT loss)."""
    parts, rest = [], text
    while OUTPUT in rest:
        a, _, b = rest.partition(OUTPUT)
        body, sep, c = b.partition(END_OUTPUT)
        parts += [a, OUTPUT + body + sep]
        rest = c
    parts.append(rest)
    return [p for p in parts if p]


def lm_batches(tok, examples: Sequence[tuple[str, str]], block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inputs ``(N, L)``, targets ``(N, L)`` (-100 = no loss) and lengths for masked next-token training."""
    seqs = [_encode_masked(tok, p, r, block) for p, r in examples]
    L = max(len(s) for s, _ in seqs) - 1
    x = np.full((len(seqs), L), tok.pad_id, dtype=np.int64)
    y = np.full((len(seqs), L), -100, dtype=np.int64)
    lengths = np.zeros(len(seqs), dtype=np.int64)
    for r, (ids, m) in enumerate(seqs):
        a = np.asarray(ids)
        x[r, :len(ids) - 1] = a[:-1]
        y[r, :len(ids) - 1] = np.where(np.asarray(m[1:]), a[1:], -100)
        lengths[r] = len(ids) - 1
    return x, y, lengths


def train_sft(lm, examples: Sequence[tuple[str, str]], steps: int = 150, batch_size: int = 32, lr: float = 2e-3,
              warmup: int = 10, weight_decay: float = 0.1, grad_clip: float = 1.0, seed: int = 0,
              progress: bool = False) -> list[float]:
    """Fine-tune ``lm`` (an ``icml25.llm.TinyGPT``) in place on ``(prompt, response)`` pairs.

    Loss = mean next-token cross-entropy over response tokens, with prompt tokens and ``<output>...
    <end_of_output>`` executor-output tokens masked (spec §2.9). AdamW, linear warm-up, cosine decay to 10 %.

    Returns
    -------
    list of float
        The loss at every step.
    """
    if not examples:
        raise ValueError("examples must be non-empty (no SFT trajectories were extracted)")
    from .._validation import check_training

    check_training(steps, batch_size, lr, warmup, weight_decay, grad_clip)
    x_all, y_all, lengths = lm_batches(lm.tokenizer, examples, lm.config.block_size)
    return masked_lm_train(lm.module, x_all, y_all, lengths, steps, batch_size, lr, warmup, weight_decay,
                           grad_clip, seed, progress, "SFT")


def masked_lm_train(module, x_all, y_all, lengths, steps, batch_size, lr, warmup, weight_decay, grad_clip, seed,
                    progress=False, desc="train") -> list[float]:
    """Next-token training on prepared arrays (shared by pretraining and SFT): length-bucketed batches, loss on
    the unmasked targets only, the shared :func:`icml25.llm.training.train_loop` (decay on matrices only)."""
    from icml25.llm.training import LengthBuckets, train_loop

    rng = np.random.default_rng(seed)
    sampler = LengthBuckets(lengths, batch_size, rng)

    def batch_loss(pick: np.ndarray) -> torch.Tensor:
        T = int(lengths[pick].max())
        x, y = torch.from_numpy(x_all[pick, :T]), torch.from_numpy(y_all[pick, :T])
        logits, targets = masked_logits(module, x, y)
        return F.cross_entropy(logits, targets)

    return train_loop(module, batch_loss, sampler.draw, steps, lr, warmup=warmup, weight_decay=weight_decay,
                      decay="matrices", grad_clip=grad_clip, torch_seed=int(rng.integers(0, 2**31)),
                      progress=progress, desc=desc)
