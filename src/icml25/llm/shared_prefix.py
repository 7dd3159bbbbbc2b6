"""Shared-prefix decoding and scoring (tree search: many continuations of one prefix).

- :func:`expand`: ``n_children`` continuations of every node of a search tree in one batched call, for any backend
  (:meth:`HFModel.expand <icml25.llm.hf.HFModel.expand>`: each distinct prefix run once, its KV cache rows copied to
  its children, a prefix common to all nodes run once; TinyGPT and HFModel's ``generate`` also encode each prompt
  once for its ``n`` samples).

For :class:`~icml25.llm.tiny.TinyGPT`:

- :func:`sample_shared_prefix`: every prompt is prefilled once and its KV cache rows are repeated for its ``n``
  samples; stop tokens are detected by id and finished rows leave the batch, so the per-token cost follows the
  number of live rows. Greedy output equals :meth:`TinyGPT.generate` with the same stop strings.
- :func:`prefix_hidden_states`: the final hidden state at the last token of ``prefix + continuation`` for many
  continuations of a few prefixes, each prefix encoded once (equal to a full forward pass up to float rounding).

Both use :class:`~icml25.llm.tiny_module.TinyGPTModule`'s ``forward(idx, positions, attn_mask, cache, ...)`` and
:class:`~icml25.llm.tiny_module.KVCache` (the scorer runs the continuation through the blocks without the
vocabulary head).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .sampling import left_pad, make_generator
from .tiny_module import KVCache

__all__ = ["sample_shared_prefix", "prefix_hidden_states", "expand"]


def expand(lm, prefixes, n_children: int = 1, max_tokens: int = 32, stop=None, temperature: float = 1.0,
           top_p: float = 1.0, seed: int | None = None):
    """``n_children`` continuations of each prefix, ``out[i][j]`` (a list of lists of ``Generation``).

    Parameters
    ----------
    lm : LanguageModel
        A backend with an ``expand`` method (``HFModel``: prefixes may be token-id lists, children carry
        ``token_ids``) or any backend's ``generate`` (text prefixes).
    prefixes : list of str (or of token-id lists for ``HFModel``)
    n_children, max_tokens, stop, temperature, top_p, seed
        As ``n``, ... in ``generate``.
    """
    from .hf import _check_children

    _check_children(n_children)
    method = getattr(lm, "expand", None)
    if callable(method):
        return method(prefixes, n_children=n_children, max_tokens=max_tokens, stop=stop, temperature=temperature,
                      top_p=top_p, seed=seed)
    if isinstance(prefixes, (list, tuple)) and any(not isinstance(p, str) for p in prefixes):
        raise TypeError(f"{type(lm).__name__} expands text prefixes only; token-id prefixes need HFModel")
    return lm.generate(prefixes, n=n_children, temperature=temperature, top_p=top_p, max_tokens=max_tokens,
                       stop=stop, seed=seed)


def _check_ids(rows, name: str, vocab: int, allow_empty: bool = False) -> list[list[int]]:
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence) or not rows:
        raise TypeError(f"{name} must be a non-empty list of token-id lists")
    out = []
    for i, r in enumerate(rows):
        if isinstance(r, (str, bytes)) or not isinstance(r, Sequence) or (not r and not allow_empty):
            raise ValueError(f"{name}[{i}] must be a non-empty list of token ids")
        ids = []
        for t in r:
            if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not 0 <= int(t) < vocab:
                raise ValueError(f"{name}[{i}] holds {t!r}, not a token id in [0, {vocab})")
            ids.append(int(t))
        out.append(ids)
    return out


@torch.inference_mode()
def sample_shared_prefix(lm, prompts: Sequence[str], n: int = 1, temperature: float = 1.0, max_tokens: int = 32,
                         stop_ids: Sequence[int] = (), seed: int | None = None
                         ) -> list[list[tuple[list[int], int | None]]]:
    """``n`` samples per prompt, each ``(generated ids without the stop token, stop id or None)``.

    Parameters
    ----------
    lm : TinyGPT
        The model (its tokenizer encodes the prompts; ``<|eot|>`` is prepended as in ``TinyGPT.generate``).
    prompts : list of str
        Prompts; each is cut from the left to ``block_size - max_tokens`` tokens.
    n : int
        Samples per prompt (sharing the prompt's KV cache).
    temperature : float
        0 = greedy; otherwise exact softmax sampling at this temperature (Gumbel-max).
    max_tokens : int
        Generated tokens at most per sample.
    stop_ids : sequence of int
        Token ids that end a sample (``<|eot|>`` always does; it is reported as stop ``None``).
    seed : int, optional
        Reproducible samples; ``None`` draws fresh entropy (two calls differ).
    """
    from icml25.core.validation import check_int, check_real

    from .base import validate_prompts

    prompts = validate_prompts(prompts)
    n = check_int(n, "n", low=1)
    max_tokens = check_int(max_tokens, "max_tokens", low=1)
    temperature = check_real(temperature, "temperature", low=0.0)
    tok, module, block = lm.tokenizer, lm.module, lm.config.block_size
    if max_tokens >= block:
        raise ValueError(f"max_tokens must be < block_size ({block}), got {max_tokens}")
    stop_ids = _check_ids([list(stop_ids)], "stop_ids", tok.vocab_size, allow_empty=True)[0]
    gen = make_generator(seed, np.random.default_rng())
    rows = [[tok.eot_id, *tok.encode(p)][-(block - max_tokens):] for p in prompts]
    idx, _, valid, positions, padded = left_pad(rows, tok.pad_id, max_tokens)
    B, Tp = idx.shape
    mask = None
    if padded:
        causal = torch.ones(Tp, Tp, dtype=torch.bool).tril()
        mask = ((causal & valid[:, None, :Tp]) | torch.eye(Tp, dtype=torch.bool))[:, None]
    cache = KVCache(lm.config, B, Tp + max_tokens, next(module.parameters()).dtype)
    logits = module(idx, positions=positions[:, :Tp], attn_mask=mask, cache=cache, last_only=True)[:, -1]
    rep = torch.arange(B).repeat_interleave(n)  # share the prefix: each prompt's cache rows n times
    cache.select_rows(rep)
    logits, valid, positions = logits[rep], valid[rep], positions[rep]
    R = B * n
    stop_t = torch.tensor(sorted(set(stop_ids) | {tok.eot_id}), dtype=torch.long)
    out_ids: list[list[int]] = [[] for _ in range(R)]
    out_stop: list[int | None] = [None] * R
    live = torch.arange(R)  # original row of each batch row still in the cache
    finished = torch.zeros(R, dtype=torch.bool)
    for t in range(max_tokens):
        if temperature == 0:
            nxt = logits.argmax(-1)
        else:  # Gumbel-max: argmax(logits / T + Gumbel noise) is an exact softmax sample
            u = torch.rand(logits.shape, generator=gen).clamp_(min=1e-20)
            nxt = (logits.float() / temperature - torch.log(-torch.log(u))).argmax(-1)
        done = finished[live]
        is_stop = torch.isin(nxt, stop_t) & ~done
        for r, tkn, s, f in zip(live.tolist(), nxt.tolist(), is_stop.tolist(), done.tolist()):
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


@torch.no_grad()
def prefix_hidden_states(module, pad_id: int, prefix_rows: Sequence[Sequence[int]], row_of: Sequence[int],
                         step_ids: Sequence[Sequence[int]]) -> torch.Tensor:
    """Final hidden state ``(R, n_embd)`` at the last token of ``prefix_rows[row_of[r]] + step_ids[r]``.

    Each prefix is run once into a KV cache (left-padded batch), its rows are forked to one row per
    continuation and only the continuation tokens run on top.

    Parameters
    ----------
    module : TinyGPTModule
        The network (eval mode for deterministic results).
    pad_id : int
        Padding id of its tokenizer.
    prefix_rows : list of list of int
        Token ids of the distinct prefixes.
    row_of : list of int
        For every continuation, the index of its prefix in ``prefix_rows``.
    step_ids : list of list of int
        Token ids of every continuation (non-empty; prefix + continuation must fit ``block_size``).
    """
    from icml25.core.validation import check_int

    cfg = module.cfg
    vocab = module.wte.weight.shape[0]
    pad_id = check_int(pad_id, "pad_id", low=0, high=vocab - 1)
    prefix_rows = _check_ids(prefix_rows, "prefix_rows", vocab)
    step_ids = _check_ids(step_ids, "step_ids", vocab)
    if isinstance(row_of, (str, bytes)) or len(row_of) != len(step_ids):
        raise ValueError(f"row_of must hold one prefix index per continuation ({len(step_ids)}), got {row_of!r}")
    row_of = [check_int(r, "row_of", low=0, high=len(prefix_rows) - 1) for r in row_of]
    for r, s in zip(row_of, step_ids):
        if len(prefix_rows[r]) + len(s) > cfg.block_size:
            raise ValueError(f"prefix + continuation has {len(prefix_rows[r]) + len(s)} tokens, more than "
                             f"block_size {cfg.block_size}")
    smax = max(len(s) for s in step_ids)
    idx, _, valid, positions, _ = left_pad(prefix_rows, pad_id, smax)
    # a row's padded tail (beyond its own continuation) can run past the context when another row's
    # continuation is longer; those positions are never read, so clamp them to a valid position id
    positions = positions.clamp(max=cfg.block_size - 1)
    U, Tp = idx.shape
    cache = KVCache(cfg, U, Tp + smax, module.wte.weight.dtype)
    causal = torch.ones(Tp, Tp, dtype=torch.bool).tril()
    mask = ((causal & valid[:, None, :Tp]) | torch.eye(Tp, dtype=torch.bool))[:, None]
    module(idx, positions=positions[:, :Tp], attn_mask=mask, cache=cache, last_only=True)
    rows = torch.tensor(row_of, dtype=torch.long)
    cache.select_rows(rows)
    valid, positions = valid[rows], positions[rows]
    R = len(step_ids)
    x_ids = torch.full((R, smax), pad_id, dtype=torch.long)
    for r, s in enumerate(step_ids):
        x_ids[r, :len(s)] = torch.tensor(s)
    step_mask = torch.cat([valid[:, None, None, :Tp].expand(R, 1, smax, Tp),
                           torch.ones(smax, smax, dtype=torch.bool).tril().expand(R, 1, smax, smax)], dim=-1)
    # the blocks without the vocabulary head (TinyGPTModule.forward would compute (R, smax, vocab) logits)
    x = module.drop(module.wte(x_ids) + module.wpe(positions[:, Tp:Tp + smax]))
    for i, blk in enumerate(module.blocks):
        x = blk(x, step_mask, cache, i)
    cache.pos += smax
    h = module.ln_f(x)
    last = torch.tensor([len(s) - 1 for s in step_ids])
    return h[torch.arange(R), last]
