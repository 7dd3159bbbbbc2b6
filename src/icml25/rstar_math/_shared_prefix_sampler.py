"""Private: step sampling for word-level TinyGPT policies with a shared-prefix KV cache and stop-token ids.

Each prompt is prefilled once; its KV cache rows are then repeated for the ``n`` samples (spec §6: "each expansion
encodes its prefix once and shares that KV cache across its n samples"). Stop strings that are single tokens of
the vocabulary are detected by id, and finished rows are dropped from the batch, so the per-token cost follows
the number of live rows. Uses TinyGPTModule's ``forward(idx, positions, attn_mask, cache, last_only)`` and the
shared ``KVCache.select_rows`` (prefill once, fork rows).
"""

from __future__ import annotations

import numpy as np
import torch

from icml25.llm.sampling import left_pad, make_generator
from icml25.llm.tiny_module import KVCache

__all__ = ["sample_with_shared_prefix"]


@torch.inference_mode()
def sample_with_shared_prefix(lm, prompts: list[str], n: int, temperature: float, max_tokens: int,
                              stop_ids: list[int], seed: int | None) -> list[list[tuple[list[int], int | None]]]:
    """For each prompt ``n`` samples ``(token ids without the stop token, stop id or None)``; ``seed=None``
    draws fresh entropy (two calls differ), an int makes the samples reproducible."""
    tok, module, block = lm.tokenizer, lm.module, lm.config.block_size
    rows = []
    for p in prompts:
        ids = [tok.eot_id, *tok.encode(p)]
        rows.append(ids[-(block - max_tokens):])
    idx, n_pad, valid, positions, padded = left_pad(rows, tok.pad_id, max_tokens)
    B, Tp = idx.shape
    total = Tp + max_tokens
    mask = None
    if padded:
        causal = torch.ones(Tp, Tp, dtype=torch.bool).tril()
        mask = ((causal & valid[:, None, :Tp]) | torch.eye(Tp, dtype=torch.bool))[:, None]
    cache = KVCache(lm.config, B, total, next(module.parameters()).dtype)
    logits = module(idx, positions=positions[:, :Tp], attn_mask=mask, cache=cache, last_only=True)[:, -1]
    # share the prefix: repeat each prompt's cache rows n times
    rep = torch.arange(B).repeat_interleave(n)
    cache.select_rows(rep)
    logits, valid, positions = logits[rep], valid[rep], positions[rep]
    R = B * n
    gen = make_generator(seed, np.random.default_rng())  # seed=None: fresh OS entropy, a new stream every call
    stop_t = torch.tensor(sorted(set(stop_ids) | {tok.eot_id}), dtype=torch.long)
    out_ids: list[list[int]] = [[] for _ in range(R)]
    out_stop: list[int | None] = [None] * R
    live = torch.arange(R)  # original row index of each batch row still in the cache
    finished = torch.zeros(R, dtype=torch.bool)
    for t in range(max_tokens):
        if temperature == 0:
            nxt = logits.argmax(-1)
        else:
            # Gumbel-max: argmax(logits / T + Gumbel noise) is an exact softmax sample, cheaper than multinomial
            u = torch.rand(logits.shape, generator=gen).clamp_(min=1e-20)
            nxt = (logits.float() / temperature - torch.log(-torch.log(u))).argmax(-1)
        is_stop = torch.isin(nxt, stop_t) & ~finished[live]
        for r, tkn, s, f in zip(live.tolist(), nxt.tolist(), is_stop.tolist(), finished[live].tolist()):
            if f:
                continue
            if s:
                out_stop[r] = tkn if tkn != tok.eot_id else None
            else:
                out_ids[r].append(tkn)
        finished[live[is_stop]] = True
        if bool(finished[live].all()) or t + 1 == max_tokens:
            break
        keep = (~finished[live]).nonzero().flatten()
        if keep.numel() < 0.75 * live.numel():  # compact only when enough rows finished (index_select cost)
            cache.select_rows(keep)
            live, nxt, valid, positions = live[keep], nxt[keep], valid[keep], positions[keep]
        pos = Tp + t
        m = valid[:, None, None, :pos + 1] if padded else None
        logits = module(nxt[:, None], positions=positions[:, pos:pos + 1], attn_mask=m, cache=cache,
                        last_only=True)[:, -1]
    return [[(out_ids[i * n + j], out_stop[i * n + j]) for j in range(n)] for i in range(B)]
