"""Private helpers: run a TinyGPT module's trunk without the vocabulary head (the head dominates CPU cost)."""

from __future__ import annotations

import torch

__all__ = ["trunk_hidden", "masked_logits"]


def trunk_hidden(module, idx: torch.Tensor) -> torch.Tensor:
    """Final hidden states ``(B, T, C)`` (after ``ln_f``) of right-padded ``idx`` with causal attention.

    Equivalent to ``module(idx, return_hidden=True)[1]`` without computing the ``(B, T, vocab)`` logits.
    """
    if not all(hasattr(module, a) for a in ("wte", "wpe", "blocks", "ln_f")):
        _, h = module(idx, return_hidden=True)
        return h
    T = idx.shape[1]
    pos = torch.arange(T, device=idx.device)
    x = module.drop(module.wte(idx) + module.wpe(pos))
    for i, block in enumerate(module.blocks):
        x = block(x, None, None, i)
    return module.ln_f(x)


def masked_logits(module, idx: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits only at positions whose target is not -100: returns ``(logits (M, V), targets (M,))``."""
    h = trunk_hidden(module, idx)
    keep = targets != -100
    return module.lm_head(h[keep]), targets[keep]
