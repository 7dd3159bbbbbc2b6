"""Private: PPM scoring with shared prefixes (spec §6 cost model: "prefill the prefix once per expansion, then
extend by each child's tokens").

The children of one expansion share their prefix (question + steps so far, ~150-250 tokens) and differ by one
step (~15 tokens). Each unique prefix is encoded once into a KV cache (left-padded batch), its rows are forked
with ``KVCache.select_rows`` to one row per child, and only the step tokens are run on top. Pairs whose
tokenisation is not the concatenation of prefix and step tokens, that would exceed the context, or whose step is
empty are scored the plain way by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from icml25.llm.sampling import left_pad
from icml25.llm.tiny_module import KVCache

__all__ = ["split_shareable", "shared_prefix_hidden"]


def split_shareable(tok, prefixes: Sequence[str], steps: Sequence[str], block_size: int
                    ) -> tuple[list[int], dict[str, list[int]], list[list[int]], list[int]]:
    """Which pairs can use the shared path: ``(shared indices, prefix -> ids, step ids per shared pair,
    indices for the plain path)``."""
    pref_ids: dict[str, list[int]] = {}
    shared, step_ids, plain = [], [], []
    for i, (p, s) in enumerate(zip(prefixes, steps)):
        if p not in pref_ids:
            pref_ids[p] = [tok.eot_id, *tok.encode(p)]
        P, S = pref_ids[p], tok.encode(s)
        if S and len(P) + len(S) <= block_size and tok.encode(p + s) == P[1:] + S:
            shared.append(i)
            step_ids.append(S)
        else:
            plain.append(i)
    return shared, pref_ids, step_ids, plain


def _run_blocks(module, x: torch.Tensor, mask: torch.Tensor, cache: KVCache) -> torch.Tensor:
    for i, block in enumerate(module.blocks):
        x = block(x, mask, cache, i)
    cache.pos += x.shape[1]
    return x


@torch.no_grad()
def shared_prefix_hidden(module, pad_id: int, prefix_rows: list[list[int]], row_of: list[int],
                         step_ids: list[list[int]]) -> torch.Tensor:
    """Final hidden state ``(R, C)`` at the last token of ``prefix_rows[row_of[r]] + step_ids[r]`` for every r.

    ``module`` is a TinyGPT module (``wte``, ``wpe``, ``drop``, ``blocks``, ``ln_f``) in eval mode.
    """
    smax = max(len(s) for s in step_ids)
    idx, _, valid, positions, _ = left_pad(prefix_rows, pad_id, smax)
    # a row's padded step tail (beyond its own step) can run past the context when another row's step is
    # longer; those positions are never read (the result is taken at each row's own last token), so clamp them
    positions = positions.clamp(max=module.cfg.block_size - 1)
    U, Tp = idx.shape
    dtype = module.wte.weight.dtype
    cache = KVCache(module.cfg, U, Tp + smax, dtype)
    causal = torch.ones(Tp, Tp, dtype=torch.bool).tril()
    mask = ((causal & valid[:, None, :Tp]) | torch.eye(Tp, dtype=torch.bool))[:, None]
    _run_blocks(module, module.drop(module.wte(idx) + module.wpe(positions[:, :Tp])), mask, cache)
    rows = torch.tensor(row_of, dtype=torch.long)
    cache.select_rows(rows)
    valid, positions = valid[rows], positions[rows]
    R = len(step_ids)
    x_ids = torch.full((R, smax), pad_id, dtype=torch.long)
    for r, s in enumerate(step_ids):
        x_ids[r, :len(s)] = torch.tensor(s)
    step_mask = torch.cat([valid[:, None, None, :Tp].expand(R, 1, smax, Tp),
                           torch.ones(smax, smax, dtype=torch.bool).tril().expand(R, 1, smax, smax)], dim=-1)
    x = module.drop(module.wte(x_ids) + module.wpe(positions[:, Tp:Tp + smax]))
    h = module.ln_f(_run_blocks(module, x, step_mask, cache))
    last = torch.tensor([len(s) - 1 for s in step_ids])
    return h[torch.arange(R), last]
