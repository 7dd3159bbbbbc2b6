"""The two ways :class:`~icml25.llm.hf.HFModel` runs its network, behind one small interface.

* :class:`NativeRunner` -- :class:`~icml25.llm.native.NativeDecoder` (Llama / Qwen2 / Gemma 3): a preallocated KV
  cache, and a prefix shared by every row of a batch (an MCTS node's children, the answers of one question) is run
  once: its keys and values are computed for one row and copied (generation) or broadcast (scoring) to the others;
* :class:`TransformersRunner` -- any ``AutoModelForCausalLM``, on its own cache object.

Both take token-id rows, left-pad them so that every row ends at the last position, and return float32 logits.
A decoding state is forked to several samples per prompt with :meth:`select` (one prefill per prompt).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["NativeRunner", "TransformersRunner", "common_prefix", "MIN_SHARED", "decoder_layers"]

MIN_SHARED = 8  # a common prefix shorter than this is not worth a separate pass


def common_prefix(rows: list[list[int]], limit: int) -> int:
    """Length of the longest prefix shared by every row, at most ``limit``."""
    first = rows[0]
    n = min(limit, *(len(r) for r in rows))
    for r in rows[1:]:
        k = 0
        while k < n and r[k] == first[k]:
            k += 1
        n = k
        if n == 0:
            break
    return max(n, 0)


def decoder_layers(model: Any) -> Any:
    """The list of decoder blocks of a transformers causal LM (``model.model.layers`` for Llama/Gemma-style models,
    ``transformer.h`` for GPT-2, ``gpt_neox.layers``)."""
    for path in ("model.layers", "model.language_model.layers", "transformer.h", "gpt_neox.layers"):
        obj = model
        try:
            for part in path.split("."):
                obj = getattr(obj, part)
            return obj
        except AttributeError:
            continue
    raise TypeError(f"cannot find the decoder layers of {type(model).__name__} (looked for model.layers, "
                    "transformer.h, gpt_neox.layers)")


def _check_hook(hook: Any, n_layers: int) -> tuple[int, Any] | None:
    if hook is None:
        return None
    layer, fn = hook
    if not callable(fn) or isinstance(layer, bool) or not isinstance(layer, int) or not 1 <= layer <= n_layers:
        raise ValueError(f"hook must be (layer in 1..{n_layers}, fn(hidden) -> hidden or None), got {hook!r:.80}")
    return layer, fn


def _left_pad(rows: list[list[int]], pad_id: int, offset: int, total: int
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, bool]:
    """``idx (B, T)``, ``positions (B, T)`` (``offset`` + index among the row's real tokens), ``valid (B, total)``
    (True at the ``offset`` shared positions, the real tokens and every later position) and whether any row is
    padded."""
    B, T = len(rows), max(len(r) for r in rows)
    idx = torch.full((B, T), pad_id, dtype=torch.long)
    n_pad = torch.tensor([T - len(r) for r in rows])
    for b, r in enumerate(rows):
        idx[b, T - len(r):] = torch.tensor(r, dtype=torch.long)
    ar = torch.arange(T)[None]
    positions = offset + (ar - n_pad[:, None]).clamp(min=0)
    valid = torch.ones((B, total), dtype=torch.bool)
    valid[:, offset:offset + T] = ar >= n_pad[:, None]
    return idx, positions, valid, bool((n_pad > 0).any())


@dataclass
class NativeState:
    cache: Any
    valid: torch.Tensor | None  # (R, capacity) or None when no row is padded
    pos: torch.Tensor  # (R, 1) position id of the next token


class NativeRunner:
    """Prefill / step / select on a :class:`~icml25.llm.native.NativeDecoder`."""

    def __init__(self, net: Any, pad_id: int):
        self.net, self.pad_id, self.device = net, pad_id, net.device

    def vocab_size(self) -> int:
        return int(self.net.lm_head.shape[0])

    def _shared(self, rows: list[list[int]], keep: int, share: bool, extra: int = 0) -> int:
        """Length of the prefix to run once (0: none). Rows are padded between the shared prefix and their own
        tokens, which shifts cache indices against positions; a sliding window (Gemma: 512) is measured in cache
        indices, so sharing is used only while the whole sequence fits inside every window."""
        if not share or len(rows) < 2:
            return 0
        windows = [w for w in self.net.cfg.window if w is not None]
        if windows and max(len(r) for r in rows) + extra > min(windows):
            return 0
        P = common_prefix(rows, min(len(r) for r in rows) - max(keep, 1))
        return P if P >= MIN_SHARED else 0

    def prefill(self, rows: list[list[int]], extra: int, keep: int = 1, share: bool = True, hook: Any = None
                ) -> tuple[torch.Tensor, NativeState]:
        """Run ``rows`` into a new cache with room for ``extra`` more tokens; logits of the last ``keep`` positions
        ``(B, keep, V)``. A prefix common to all rows is run once and its cache rows copied. ``hook``:
        ``(layer, fn)`` applies ``fn`` to the output of decoder layer ``layer`` (1-based) during this pass."""
        net, B = self.net, len(rows)
        hook = _check_hook(hook, net.cfg.n_layer)
        P = 0 if hook is not None else self._shared(rows, keep, share, extra)
        suffix = [r[P:] for r in rows]
        T = max(len(s) for s in suffix)
        cache = net.new_cache(1 if P else B, P + T + extra)
        if P:
            net.forward(torch.tensor([rows[0][:P]], device=self.device), torch.arange(P, device=self.device)[None],
                        cache=cache, keep=0)
            cache.select_rows(torch.zeros(B, dtype=torch.long, device=self.device))
        idx, positions, valid, padded = _left_pad(suffix, self.pad_id, P, P + T + extra)
        idx, positions, valid = idx.to(self.device), positions.to(self.device), valid.to(self.device)
        layer_hook = None
        if hook is not None:
            target, fn = hook[0] - 1, hook[1]

            def layer_hook(i: int, x: torch.Tensor) -> Any:
                return fn(x) if i == target else None

        logits = net.forward(idx, positions, valid=valid if padded else None, cache=cache, keep=keep,
                             layer_hook=layer_hook)
        return logits.float(), NativeState(cache, valid if padded else None, positions[:, -1:] + 1)

    def select(self, st: NativeState, index: torch.Tensor) -> None:
        """Keep / repeat rows ``index`` of the state (forks the KV cache)."""
        index = index.to(self.device)
        st.cache.select_rows(index)
        st.pos = st.pos[index]
        if st.valid is not None:
            st.valid = st.valid[index]

    def step(self, st: NativeState, tokens: torch.Tensor) -> torch.Tensor:
        """Feed one token per row ``(R, 1)``; the next logits ``(R, V)``."""
        S = st.cache.length + 1
        valid = None
        if st.valid is not None:
            if st.valid.shape[1] < S:
                grow = torch.ones((st.valid.shape[0], S - st.valid.shape[1] + 64), dtype=torch.bool,
                                  device=self.device)
                st.valid = torch.cat([st.valid, grow], dim=1)
            valid = st.valid
        logits = self.net.forward(tokens.to(self.device), st.pos, valid=valid, cache=st.cache, keep=1)[:, -1]
        st.pos = st.pos + 1
        return logits.float()

    def extend(self, st: NativeState, tokens: torch.Tensor) -> torch.Tensor:
        """Feed a block of tokens per row ``(R, W)`` (right-padded rows are fine: a position never sees a later
        one); logits at every new position ``(R, W, V)``."""
        R, W = tokens.shape
        S = st.cache.length + W
        valid = None
        if st.valid is not None:
            if st.valid.shape[1] < S:
                grow = torch.ones((R, S - st.valid.shape[1]), dtype=torch.bool, device=self.device)
                st.valid = torch.cat([st.valid, grow], dim=1)
            valid = st.valid
        positions = st.pos + torch.arange(W, device=self.device)[None]
        logits = self.net.forward(tokens.to(self.device), positions, valid=valid, cache=st.cache, keep=None)
        st.pos = st.pos + W
        return logits.float()

    def logits(self, rows: list[list[int]], keep: int | None, share: bool = True, hidden: bool = False
               ) -> torch.Tensor:
        """Logits (or final hidden states) at the last ``keep`` positions of left-padded ``rows``, no cache kept.
        A common prefix is run once and broadcast (not copied) to the rows."""
        net = self.net
        P = self._shared(rows, keep or max(len(r) for r in rows), share)
        prefix = None
        if P:
            prefix = net.new_cache(1, P)
            net.forward(torch.tensor([rows[0][:P]], device=self.device), torch.arange(P, device=self.device)[None],
                        cache=prefix, keep=0)
        suffix = [r[P:] for r in rows]
        T = max(len(s) for s in suffix)
        idx, positions, valid, padded = _left_pad(suffix, self.pad_id, P, P + T)
        return net.forward(idx.to(self.device), positions.to(self.device),
                           valid=valid.to(self.device) if padded else None, keep=keep, hidden=hidden,
                           prefix=prefix)

    def logits_right_padded(self, rows: list[list[int]]) -> torch.Tensor:
        """Full logits ``(B, T, V)`` of right-padded rows (the plain computation)."""
        B, T = len(rows), max(len(r) for r in rows)
        idx = torch.full((B, T), self.pad_id, dtype=torch.long)
        valid = torch.zeros((B, T), dtype=torch.bool)
        for b, r in enumerate(rows):
            idx[b, :len(r)] = torch.tensor(r, dtype=torch.long)
            valid[b, :len(r)] = True
        positions = torch.arange(T)[None].expand(B, T)
        padded = not bool(valid.all())
        return self.net.forward(idx.to(self.device), positions.to(self.device),
                                valid=valid.to(self.device) if padded else None, keep=None)


@dataclass
class TransformersState:
    past: Any
    mask: torch.Tensor  # (R, S) attention mask (1 = real token)
    pos: torch.Tensor  # (R, 1)


class TransformersRunner:
    """The same interface on a transformers ``AutoModelForCausalLM`` (any architecture)."""

    def __init__(self, model: Any, pad_id: int, device: Any):
        import inspect

        self.model, self.pad_id, self.device = model, pad_id, device
        params = inspect.signature(model.forward).parameters
        # transformers >= 5 names the KV cache argument ``cache``; 4.x calls it ``past_key_values``
        self.cache_kw = "cache" if "cache" in params else "past_key_values"
        self.can_keep = "logits_to_keep" in params

    def vocab_size(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])

    def _pad(self, rows: list[list[int]], left: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
        T = max(len(s) for s in rows)
        idx = torch.full((len(rows), T), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), T), dtype=torch.long)
        for r, s in enumerate(rows):
            sl = slice(T - len(s), T) if left else slice(0, len(s))
            idx[r, sl] = torch.tensor(s, dtype=torch.long)
            mask[r, sl] = 1
        return idx.to(self.device), mask.to(self.device)

    def _call(self, idx: torch.Tensor, mask: torch.Tensor, keep: int | None, **kw: Any) -> Any:
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        if keep is not None and self.can_keep:
            kw["logits_to_keep"] = keep
        return self.model(input_ids=idx, attention_mask=mask, position_ids=pos, **kw)

    @staticmethod
    def cache_of(out: Any) -> Any:
        cache = getattr(out, "cache", None)
        return cache if cache is not None else out.past_key_values

    def _window(self) -> int | None:
        w = getattr(getattr(self.model, "config", None), "sliding_window", None)
        return int(w) if isinstance(w, int) and w > 0 else None

    def _shared(self, rows: list[list[int]], keep: int, share: bool, extra: int = 0) -> int:
        """As :meth:`NativeRunner._shared` (no sharing when a sliding window could bind)."""
        if not share or len(rows) < 2:
            return 0
        w = self._window()
        if w is not None and max(len(r) for r in rows) + extra > w:
            return 0
        P = common_prefix(rows, min(len(r) for r in rows) - max(keep, 1))
        return P if P >= MIN_SHARED else 0

    def prefill(self, rows: list[list[int]], extra: int, keep: int = 1, share: bool = True, hook: Any = None
                ) -> tuple[torch.Tensor, TransformersState]:
        idx, mask = self._pad(rows)
        hook = _check_hook(hook, len(decoder_layers(self.model))) if hook is not None else None
        handle = None
        if hook is not None:
            fn = hook[1]

            def forward_hook(_mod: Any, _inp: Any, out: Any) -> Any:
                h = out[0] if isinstance(out, tuple) else out
                new = fn(h)
                if new is None:
                    return None
                return (new, *out[1:]) if isinstance(out, tuple) else new

            handle = decoder_layers(self.model)[hook[0] - 1].register_forward_hook(forward_hook)
        try:
            out = self._call(idx, mask, keep, use_cache=True)
        finally:
            if handle is not None:
                handle.remove()
        logits = out.logits[:, -keep:].float()
        return logits, TransformersState(self.cache_of(out), mask, mask.sum(-1, keepdim=True) - 1)

    def select(self, st: TransformersState, index: torch.Tensor) -> None:
        index = index.to(self.device)
        past = st.past
        if hasattr(past, "reorder_cache"):
            past.reorder_cache(index)
        else:  # legacy tuple of (key, value) per layer
            st.past = tuple(tuple(t.index_select(0, index) for t in layer) for layer in past)
        st.mask, st.pos = st.mask[index], st.pos[index]

    def step(self, st: TransformersState, tokens: torch.Tensor) -> torch.Tensor:
        tokens = tokens.to(self.device)
        st.mask = torch.cat([st.mask, torch.ones_like(tokens)], dim=1)
        st.pos = st.pos + 1
        kw = {"logits_to_keep": 1} if self.can_keep else {}
        o = self.model(input_ids=tokens, attention_mask=st.mask, position_ids=st.pos, use_cache=True,
                       **{self.cache_kw: st.past}, **kw)
        st.past = self.cache_of(o)
        return o.logits[:, -1].float()

    def extend(self, st: TransformersState, tokens: torch.Tensor) -> torch.Tensor:
        """As :meth:`NativeRunner.extend`."""
        R, W = tokens.shape
        tokens = tokens.to(self.device)
        st.mask = torch.cat([st.mask, torch.ones((R, W), dtype=st.mask.dtype, device=self.device)], dim=1)
        pos = st.pos + 1 + torch.arange(W, device=self.device)[None]
        o = self.model(input_ids=tokens, attention_mask=st.mask, position_ids=pos, use_cache=True,
                       **{self.cache_kw: st.past})
        st.past, st.pos = self.cache_of(o), pos[:, -1:]
        return o.logits.float()

    def logits(self, rows: list[list[int]], keep: int | None, share: bool = True, hidden: bool = False
               ) -> torch.Tensor:
        """Logits (or final hidden states) at the last ``keep`` positions of left-padded ``rows``; a prefix common
        to the rows runs once (its cache repeated over the rows)."""
        P = 0 if hidden else self._shared(rows, keep or max(len(r) for r in rows), share)
        if P:
            B = len(rows)
            pre = torch.tensor([rows[0][:P]], device=self.device)
            cache = self.cache_of(self.model(input_ids=pre, use_cache=True))
            cache.batch_repeat_interleave(B)
            idx, smask = self._pad([r[P:] for r in rows])
            mask = torch.cat([torch.ones((B, P), dtype=smask.dtype, device=self.device), smask], dim=1)
            pos = P + (smask.cumsum(-1) - 1).clamp(min=0)
            kw = {"logits_to_keep": keep} if keep is not None and self.can_keep else {}
            out = self.model(input_ids=idx, attention_mask=mask, position_ids=pos, use_cache=True,
                             **{self.cache_kw: cache}, **kw).logits
            return out if keep is None else out[:, -keep:]
        idx, mask = self._pad(rows)
        if hidden:
            o = self._call(idx, mask, 1, output_hidden_states=True)
            h = o.hidden_states[-1]
            return h if keep is None else h[:, -keep:]
        out = self._call(idx, mask, keep).logits
        return out if keep is None else out[:, -keep:]

    def logits_right_padded(self, rows: list[list[int]]) -> torch.Tensor:
        idx, mask = self._pad(rows, left=False)
        return self._call(idx, mask, None).logits
