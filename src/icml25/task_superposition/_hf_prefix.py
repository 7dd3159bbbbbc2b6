"""Shared-prefix teacher forcing for :class:`~icml25.llm.hf.HFModel`: one prompt pass, then the K answers as one
batch on K copies of its KV cache (:meth:`HFModel.score_continuations <icml25.llm.hf.HFModel.score_continuations>`,
the llm layer's scorer; exact: no padding inside the prompt, the output layer only where scored), with optional
task-vector patching of a decoder layer's output at the prompt's last position."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np

from icml25.core.progress import progress


def decoder_layers(model: Any) -> Any:
    """The list of decoder blocks of an HFModel's transformers network (``model.model.layers`` for Llama/Gemma-style
    models, ``transformer.h`` for GPT-2); builds ``model.model``."""
    from icml25.llm.runners import decoder_layers as layers

    return layers(model.model)


@contextmanager
def layer_hook(model: Any, layer: int, fn: Callable[[Any], Any]) -> Any:
    """Register ``fn(hidden (B, T, d)) -> hidden or None`` on the output of decoder layer ``layer`` (1-based)."""
    blocks = decoder_layers(model)
    if not 1 <= layer <= len(blocks):
        raise ValueError(f"layer must be in 1..{len(blocks)} (decoder layers of this model), got {layer}")

    def hook(_mod: Any, _inp: Any, out: Any) -> Any:
        h = out[0] if isinstance(out, tuple) else out
        new = fn(h)
        if new is None:
            return None
        return (new, *out[1:]) if isinstance(out, tuple) else new

    handle = blocks[layer - 1].register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def score_hf(model: Any, prompts: list[str], answers: list[list[str]], terminator: str, show_progress: bool,
             patch: Any = None) -> np.ndarray:
    """``P(answers[i][k] + terminator | prompts[i])`` for an :class:`~icml25.llm.hf.HFModel` (see
    :func:`~icml25.task_superposition.scoring.answer_probabilities`)."""
    from .scoring import LAST_STATS, _split_ids

    torch = model._torch
    n, K = len(prompts), len(answers[0])
    vectors, layer = None, 0
    if patch is not None:
        layer, vectors = patch
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = np.array(np.broadcast_to(vectors, (n, vectors.shape[0])))
        if vectors.shape[0] != n:
            raise ValueError(f"vector must have one row per prompt ({n}) or be one vector, got shape {vectors.shape}")
        if vectors.ndim != 2 or vectors.shape[1] != int(model.hidden_size):
            raise ValueError(f"vector must have hidden size {model.hidden_size}, got shape {vectors.shape}")
        if not 1 <= int(layer) <= model.num_layers:
            raise ValueError(f"layer must be in 1..{model.num_layers} (decoder layers of this model), got {layer}")
    out = np.zeros((n, K))
    for i in progress(range(n), "scoring answers", disable=not show_progress):
        split = [_split_ids(model._prompt_ids, prompts[i], a + terminator, model._cont_ids) for a in answers[i]]
        LAST_STATS["boundary_mismatch"] += sum(not ok for _, _, ok in split)
        # the prompt ids of the first answer; another answer whose boundary merged falls back to the plain ids
        p = model._prompt_ids(prompts[i])
        hook = None
        if vectors is not None:
            v = torch.as_tensor(vectors[i])

            def put(h: Any, v: Any = v) -> Any:
                h = h.clone()
                h[:, -1] = v.to(h.dtype)
                return h

            hook = (int(layer), put)
        lps = model.score_continuations(p, [c for _, c, _ in split], hook=hook)
        out[i] = np.exp([float(lp.sum()) for lp in lps])
    return out
