"""The TinyGPT network: a GPT-2-style decoder-only transformer (pre-LayerNorm, learned positions, tied embeddings).

Options (defaults = GPT-2): ``TinyGPTConfig.init`` (GPT-2 N(0, 0.02) or PyTorch's default initialisation) and
``tie_embeddings`` (output layer tied to the token embedding or not).

The architecture matches ``transformers.GPT2LMHeadModel`` (same blocks, tanh-GELU, tied input/output embedding),
so the benchmark compares like with like. :class:`KVCache` holds preallocated keys/values for fast sampling.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["TinyGPTConfig", "TinyGPTModule", "KVCache"]


@dataclass(frozen=True)
class TinyGPTConfig:
    """Size of a :class:`TinyGPTModule` (the vocabulary size comes from the tokenizer).

    Parameters
    ----------
    n_layer : int
        Number of transformer blocks.
    n_head : int
        Attention heads per block (must divide ``n_embd``).
    n_embd : int
        Width of the residual stream.
    block_size : int
        Maximum context length in tokens (prompt plus generated tokens).
    dropout : float
        Dropout on attention weights, residual branches and embeddings during training.
    bias : bool
        Whether linear layers and LayerNorms have biases.
    init : {"gpt2", "torch"}
        Weight initialisation: ``"gpt2"`` (default) draws every matrix and embedding from N(0, 0.02) and the
        residual output projections from N(0, 0.02 / sqrt(2 n_layer)), as GPT-2; ``"torch"`` keeps PyTorch's
        default initialisation of each layer (``nn.Linear``: U(-1/sqrt(fan_in), 1/sqrt(fan_in)); ``nn.Embedding``:
        N(0, 1)), whose much larger embeddings let tiny models trained from scratch leave loss plateaus sooner.
    tie_embeddings : bool
        Whether the output layer shares its weight with the token embedding (default True, as GPT-2). False gives
        ``lm_head`` its own ``(vocab_size, n_embd)`` weight.
    """

    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 256
    dropout: float = 0.0
    bias: bool = True
    init: str = "gpt2"
    tie_embeddings: bool = True

    def __post_init__(self) -> None:
        for name in ("n_layer", "n_head", "n_embd", "block_size"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"TinyGPTConfig.{name} must be a positive int, got {v!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"TinyGPTConfig.n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        from icml25.core.validation import check_real

        check_real(self.dropout, "TinyGPTConfig.dropout", low=0.0, high=1.0, high_open=True)
        if self.init not in ("gpt2", "torch"):
            raise ValueError(f"TinyGPTConfig.init must be 'gpt2' or 'torch', got {self.init!r}")
        if not isinstance(self.tie_embeddings, bool):
            raise TypeError(f"TinyGPTConfig.tie_embeddings must be a bool, got {self.tie_embeddings!r}")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of the fields (for JSON)."""
        return asdict(self)


class KVCache:
    """Preallocated keys and values of every layer, shape ``(batch, n_head, max_len, head_dim)`` each."""

    def __init__(self, cfg: TinyGPTConfig, batch: int, max_len: int, dtype: torch.dtype, device: Any = "cpu"):
        hd = cfg.n_embd // cfg.n_head
        self.k = [torch.empty(batch, cfg.n_head, max_len, hd, dtype=dtype, device=device) for _ in range(cfg.n_layer)]
        self.v = [torch.empty(batch, cfg.n_head, max_len, hd, dtype=dtype, device=device) for _ in range(cfg.n_layer)]
        self.pos = 0  # number of positions filled

    def select_rows(self, index: torch.Tensor) -> None:
        """Keep, reorder or repeat batch rows in place: row ``i`` becomes old row ``index[i]``.

        Forking a prefilled prompt into ``n`` samples is ``select_rows(arange(B).repeat_interleave(n))`` (the
        prompt is encoded once); dropping finished rows is ``select_rows(alive)``.
        """
        self.k = [k.index_select(0, index) for k in self.k]
        self.v = [v.index_select(0, index) for v in self.v]


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with an optional KV cache."""

    def __init__(self, cfg: TinyGPTConfig):
        super().__init__()
        self.n_head, self.n_embd, self.dropout = cfg.n_head, cfg.n_embd, cfg.dropout
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, cache: KVCache | None, layer: int) -> torch.Tensor:
        B, T, C = x.shape
        H = self.n_head
        q, k, v = self.c_attn(x).view(B, T, 3, H, C // H).permute(2, 0, 3, 1, 4)
        causal = mask is None and T > 1
        if cache is not None:
            p = cache.pos
            cache.k[layer][:, :, p:p + T] = k
            cache.v[layer][:, :, p:p + T] = v
            k, v = cache.k[layer][:, :, :p + T], cache.v[layer][:, :, :p + T]
            causal = causal and p == 0
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal,
                                           dropout_p=self.dropout if self.training else 0.0)
        return self.resid_drop(self.c_proj(y.transpose(1, 2).reshape(B, T, C)))


class Block(nn.Module):
    """Pre-LayerNorm transformer block: ``x + attn(ln(x))``, then ``x + mlp(ln(x))``."""

    def __init__(self, cfg: TinyGPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = nn.Sequential(nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias), nn.Dropout(cfg.dropout))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, cache: KVCache | None, layer: int) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x), mask, cache, layer)
        return x + self.mlp(self.ln_2(x))


class TinyGPTModule(nn.Module):
    """Decoder-only transformer language model.

    Parameters
    ----------
    cfg : TinyGPTConfig
        Sizes.
    vocab_size : int
        Number of token ids.
    """

    def __init__(self, cfg: TinyGPTConfig, vocab_size: int):
        super().__init__()
        if not isinstance(cfg, TinyGPTConfig):
            raise TypeError(f"cfg must be a TinyGPTConfig, got {type(cfg).__name__}")
        from icml25.core.validation import check_int

        if not isinstance(cfg, TinyGPTConfig):
            raise TypeError(f"cfg must be a TinyGPTConfig, got {type(cfg).__name__}")
        vocab_size = check_int(vocab_size, "vocab_size", low=2)
        self.cfg, self.vocab_size = cfg, int(vocab_size)
        self.wte = nn.Embedding(self.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.lm_head = nn.Linear(cfg.n_embd, self.vocab_size, bias=False)
        if cfg.tie_embeddings:
            self.lm_head.weight = self.wte.weight  # weight tying as in GPT-2
        if cfg.init == "gpt2":
            self.apply(self._init_weights)
            for name, p in self.named_parameters():
                if name.endswith("c_proj.weight") or name.endswith("mlp.2.weight"):
                    nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx: torch.Tensor, return_hidden: bool = False, positions: torch.Tensor | None = None,
                attn_mask: torch.Tensor | None = None, cache: KVCache | None = None,
                last_only: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Logits of the next token at every position.

        Parameters
        ----------
        idx : LongTensor, shape (B, T)
            Token ids.
        return_hidden : bool
            Also return the final hidden states (after the last LayerNorm), shape ``(B, T, n_embd)``.
        positions : LongTensor, shape (B, T) or (T,), optional
            Position ids (default ``cache.pos + arange(T)``); per-row positions support left padding.
        attn_mask : BoolTensor, shape (B, 1, T, S), optional
            True where a query may attend to a key (``S`` = keys incl. cached ones); default causal.
        cache : KVCache, optional
            Keys/values of earlier positions; the new ones are written at ``cache.pos`` and ``pos`` advances.
        last_only : bool
            Compute logits for the last position only (shape ``(B, 1, V)``).

        Returns
        -------
        logits : Tensor, shape (B, T, vocab_size)
            Unnormalised next-token scores; with ``return_hidden`` the tuple ``(logits, hidden)``.
        """
        B, T = idx.shape
        start = cache.pos if cache is not None else 0
        if positions is None:
            if start + T > self.cfg.block_size:
                raise ValueError(f"sequence length {start + T} exceeds block_size {self.cfg.block_size}")
            positions = torch.arange(start, start + T, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(positions))
        for i, block in enumerate(self.blocks):
            x = block(x, attn_mask, cache, i)
        if cache is not None:
            cache.pos += T
        h = self.ln_f(x)
        logits = self.lm_head(h[:, -1:] if last_only else h)
        return (logits, h) if return_hidden else logits
