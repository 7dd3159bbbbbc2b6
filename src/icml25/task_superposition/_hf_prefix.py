"""Shared-prefix teacher forcing for transformers models: one prompt pass (KV cache), then the K answers as one
batch on K copies of the cache. Exact (no padding inside the prompt); ``lm_head`` runs only where scored."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np

from icml25.core.progress import progress


def decoder_layers(model: Any) -> Any:
    """The list of decoder blocks of a transformers causal LM (``model.model.layers`` for Llama/Gemma-style
    models, ``transformer.h`` for GPT-2)."""
    inner = model.model
    for path in ("model.layers", "model.language_model.layers", "transformer.h", "gpt_neox.layers"):
        obj = inner
        try:
            for part in path.split("."):
                obj = getattr(obj, part)
            return obj
        except AttributeError:
            continue
    raise TypeError(f"cannot find the decoder layers of {type(inner).__name__} (looked for model.layers, "
                    "transformer.h, gpt_neox.layers)")


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
    hf = model.model
    n, K = len(prompts), len(answers[0])
    vectors = None
    if patch is not None:
        layer, vectors = patch
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = np.array(np.broadcast_to(vectors, (n, vectors.shape[0])))
        if vectors.shape[0] != n:
            raise ValueError(f"vector must have one row per prompt ({n}) or be one vector, got shape {vectors.shape}")
        if vectors.ndim != 2 or vectors.shape[1] != int(model.model.config.hidden_size):
            raise ValueError(f"vector must have hidden size {model.model.config.hidden_size}, got shape {vectors.shape}")
    out = np.zeros((n, K))
    with torch.inference_mode():
        for i in progress(range(n), "scoring answers", disable=not show_progress):
            split = [_split_ids(model._prompt_ids, prompts[i], a + terminator, model._cont_ids) for a in answers[i]]
            LAST_STATS["boundary_mismatch"] += sum(not ok for _, _, ok in split)
            # the prompt ids of the first answer; another answer whose boundary merged falls back to the plain ids
            p = model._prompt_ids(prompts[i])
            conts = [c for _, c, _ in split]
            ids = torch.tensor([p], dtype=torch.long, device=model.device)
            if vectors is not None:
                v = torch.as_tensor(vectors[i], device=model.device)

                def put(h: Any, v: Any = v) -> Any:
                    h = h.clone()
                    h[:, -1] = v.to(h.dtype)
                    return h

                with layer_hook(model, int(layer), put):
                    first = hf(input_ids=ids, use_cache=True, **model._last_kw)
            else:
                first = hf(input_ids=ids, use_cache=True, **model._last_kw)
            lp0 = torch.log_softmax(first.logits[0, -1].float(), -1)
            total = np.array([float(lp0[c[0]]) for c in conts])
            longest = max(len(c) for c in conts)
            if longest > 1:
                cache = model._cache_of(first)
                cache.batch_repeat_interleave(K)
                L = len(p)
                width = longest - 1  # the last answer token is predicted, never fed
                x = torch.full((K, width), model.pad_id, dtype=torch.long)
                for r, c in enumerate(conts):
                    x[r, :len(c) - 1] = torch.tensor(c[:-1], dtype=torch.long)
                mask = torch.ones((K, L + width), dtype=torch.long, device=model.device)
                pos = (L + torch.arange(width)).unsqueeze(0).expand(K, -1).to(model.device)
                o = hf(input_ids=x.to(model.device), attention_mask=mask, position_ids=pos, use_cache=True,
                       **{model._cache_kw: cache})
                lp = torch.log_softmax(o.logits.float(), -1).cpu()
                for r, c in enumerate(conts):
                    if len(c) > 1:
                        total[r] += float(lp[r, torch.arange(len(c) - 1), torch.tensor(c[1:])].sum())
            out[i] = np.exp(total)
    return out
