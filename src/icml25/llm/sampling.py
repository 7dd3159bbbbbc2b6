"""Backend-independent batched decoding: temperature / nucleus sampling, end-of-text and stop strings.

A backend supplies the logits of the first new token and a ``step(tokens)`` function that feeds the chosen
tokens (shape ``(rows, 1)``) and returns the next logits; :func:`decode_loop` does the rest and
:func:`to_generations` turns the sampled ids into :class:`~icml25.llm.base.Generation` objects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from .base import Generation, check_sampling_args, truncate_at_stop

__all__ = ["check_sampling_args", "sample_tokens", "decode_loop", "to_generations", "make_generator"]


def make_generator(seed: int | None, fallback: Any) -> torch.Generator:
    """A CPU torch generator seeded with ``seed`` (or with a seed drawn from the numpy Generator ``fallback``)."""
    if seed is None:
        seed = int(fallback.integers(0, 2**62))
    elif not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    return torch.Generator().manual_seed(int(seed))


def _draw(probs: torch.Tensor, generator: torch.Generator | None, method: str) -> torch.Tensor:
    """One index per row with probability proportional to ``probs`` (non-negative, rows need not sum to 1)."""
    if method == "multinomial":
        return torch.multinomial(probs, 1, generator=generator).squeeze(1)
    # inverse CDF with one uniform per row: pick a block of 512 entries by its float64 mass, then the entry inside it
    # (exact up to float64 rounding); ~10x cheaper than torch.multinomial, which draws an exponential per entry
    R, V = probs.shape
    B = 512
    nb = -(-V // B)
    p = probs if nb * B == V else torch.cat([probs, probs.new_zeros((R, nb * B - V))], dim=1)
    blocks = p.view(R, nb, B)
    bcdf = blocks.sum(-1, dtype=torch.float64).cumsum(-1)
    u = (1.0 - torch.rand((R, 1), generator=generator, dtype=torch.float64)) * bcdf[:, -1:]
    j = torch.searchsorted(bcdf, u).clamp_(max=nb - 1)
    prev = torch.where(j > 0, bcdf.gather(1, (j - 1).clamp(min=0)), torch.zeros_like(u))
    inner = blocks[torch.arange(R), j[:, 0]].double().cumsum(-1)
    k = torch.searchsorted(inner, torch.minimum(u - prev, inner[:, -1:]))
    return (j[:, 0] * B + k[:, 0]).clamp_(max=V - 1)


def sample_tokens(logits: torch.Tensor, temperature: float, top_p: float,
                  generator: torch.Generator | None, method: str = "multinomial") -> tuple[torch.Tensor, torch.Tensor]:
    """Choose one token per row.

    Parameters
    ----------
    logits : Tensor, shape (R, V)
        Next-token scores.
    temperature : float
        0 picks the arg-max (greedy); otherwise sample from ``softmax(logits / temperature)``.
    top_p : float
        Nucleus sampling: keep the smallest set of most likely tokens with total probability >= ``top_p``.
    generator : torch.Generator
        Source of randomness.
    method : {"multinomial", "cdf"}
        ``torch.multinomial`` (the default: TinyGPT's streams) or inverse-CDF sampling (one uniform per row, a
        cumulative sum and a binary search: the same distribution, a different stream for a given seed, much
        cheaper for large vocabularies; HFModel uses it).

    Returns
    -------
    tokens : LongTensor, shape (R,)
    logprobs : Tensor, shape (R,)
        ``log softmax(logits)`` at the chosen tokens (the model's, i.e. before temperature and top-p).
    """
    logits = logits.float()
    logp = torch.log_softmax(logits, dim=-1)
    if temperature == 0:
        tok = logits.argmax(dim=-1)
    else:
        probs = logp.exp() if temperature == 1 else torch.softmax(logits / temperature, dim=-1)
        if top_p < 1.0:
            sp, si = probs.sort(dim=-1, descending=True)
            sp[(sp.cumsum(dim=-1) - sp) >= top_p] = 0.0
            choice = _draw(sp, generator, method)
            tok = si.gather(1, choice[:, None]).squeeze(1)
        else:
            tok = _draw(probs, generator, method)
    return tok, logp.gather(1, tok[:, None]).squeeze(1)


def decode_loop(first_logits: torch.Tensor, step: Callable[[torch.Tensor], torch.Tensor], max_tokens: int,
                temperature: float, top_p: float, stop: Sequence[str], eot_id: int | Sequence[int] | None,
                pad_id: int,
                decode: Callable[[list[int]], str], generator: torch.Generator | None,
                pass_done: bool = False, method: str = "multinomial"
                ) -> tuple[list[list[int]], list[list[float]], list[str]]:
    """Sample up to ``max_tokens`` tokens per row.

    A row finishes on ``eot_id`` (one id or several; not included in its ids) or when its generated text contains
    a stop string
    (checked on a decoded tail, so the per-step cost is independent of the length so far). Finished rows keep
    being fed ``pad_id`` until every row is done or ``max_tokens`` is reached. With ``pass_done`` the loop calls
    ``step(tokens, done)`` (``done``: BoolTensor (R,) of finished rows, whose logits are ignored), so that a
    backend can drop finished rows from its batch. ``method`` is :func:`sample_tokens`'s.

    Returns
    -------
    ids, logprobs, finish_reasons : per row
        Generated token ids (with the tokens that completed a stop string), their log-probabilities, and
        ``"stop"`` or ``"length"``.
    """
    R = first_logits.shape[0]
    toks = torch.full((R, max(max_tokens, 1)), pad_id, dtype=torch.long)
    lps = torch.zeros(R, max(max_tokens, 1))
    done = torch.zeros(R, dtype=torch.bool)
    lengths = torch.full((R,), max_tokens, dtype=torch.long)
    finish = ["length"] * R
    ended_by_eot = [False] * R
    tail = max((len(s.encode("utf-8")) for s in stop), default=0) + 3
    rows_ids: list[list[int]] = [[] for _ in range(R)] if stop else []
    eot = torch.tensor([] if eot_id is None else [eot_id] if isinstance(eot_id, int) else list(eot_id),
                       dtype=torch.long)
    logits = first_logits
    for t in range(max_tokens):
        tok, lp = sample_tokens(logits, temperature, top_p, generator, method)
        tok = torch.where(done, torch.full_like(tok, pad_id), tok)
        toks[:, t] = tok
        lps[:, t] = lp
        is_eot = torch.isin(tok, eot)
        newly = ~done & is_eot
        if stop:
            tl = tok.tolist()
            for r in (~done & ~newly).nonzero().flatten().tolist():
                ids = rows_ids[r]
                ids.append(tl[r])
                text = decode(ids[-tail:])
                if any(s in text for s in stop):
                    newly[r] = True
                    lengths[r] = t + 1
                    finish[r] = "stop"
        if len(eot):
            eot_rows = ~done & is_eot
            if bool(eot_rows.any()):
                lengths[eot_rows] = t
                for r in eot_rows.nonzero().flatten().tolist():
                    finish[r] = "stop"
                    ended_by_eot[r] = True
        done |= newly
        if t + 1 == max_tokens or bool(done.all()):
            break
        logits = step(tok[:, None], done) if pass_done else step(tok[:, None])
    lengths_l = lengths.tolist()
    toks_l, lps_l = toks.tolist(), lps.tolist()
    ids_out, lp_out = [], []
    for r in range(R):
        n_keep = lengths_l[r]
        ids_out.append(toks_l[r][:n_keep])
        # the end-of-text token's own log-probability belongs to the sampled event: keep it
        n_lp = n_keep + int(ended_by_eot[r])
        lp_out.append(lps_l[r][:n_lp])
    return ids_out, lp_out, finish


def to_generations(ids: list[list[int]], logprobs: list[list[float]], finish: list[str],
                   decode: Callable[[list[int]], str], stop: Sequence[str], n: int) -> list[list[Generation]]:
    """Group rows ``i*n .. i*n+n-1`` into the ``n`` generations of prompt ``i`` (text cut before a stop)."""
    gens = []
    for r in range(len(ids)):
        text, found = truncate_at_stop(decode(ids[r]), list(stop))
        reason = "stop" if found is not None else finish[r]
        gens.append(Generation(text=text, token_logprobs=[float(x) for x in logprobs[r]], finish_reason=reason,
                               stop=found))
    return [gens[i:i + n] for i in range(0, len(gens), n)]


def left_pad(rows: Sequence[Sequence[int]], pad_id: int, max_new: int, device: Any = None
             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, bool]:
    """Left-pad token rows for batched decoding of ``max_new`` further tokens.

    Returns ``(idx (R, Tp), n_pad (R,), valid (R, Tp+max_new), positions (R, Tp+max_new), padded)``: ``valid``
    marks key positions that are not padding, ``positions`` are per-row position ids (0 at each row's first real
    token), ``padded`` says whether any row was padded (no attention mask is needed otherwise).
    """
    R, Tp = len(rows), max(len(r) for r in rows)
    n_pad = torch.tensor([Tp - len(r) for r in rows])
    idx = torch.full((R, Tp), pad_id, dtype=torch.long)
    for r, ids in enumerate(rows):
        idx[r, Tp - len(ids):] = torch.tensor(ids)
    if device is not None:
        idx, n_pad = idx.to(device), n_pad.to(device)
    total = Tp + max_new
    ar = torch.arange(total, device=device)[None, :]
    return idx, n_pad, ar >= n_pad[:, None], (ar - n_pad[:, None]).clamp(min=0), bool((n_pad > 0).any())

