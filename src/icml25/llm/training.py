"""The one training loop of the LLM layer: AdamW, linear warm-up then cosine decay, gradient clipping, seeded
dropout.

:meth:`icml25.llm.TinyGPT.fit` and the rStar-Math trainers (base-model pretraining, policy SFT, PPM, PQM/ORM
heads) all run through :func:`train_loop`; what differs between them is passed in: how a batch is drawn
(``sample``, e.g. uniform indices or :class:`LengthBuckets`) and the loss of a batch (``batch_loss``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from icml25.core.validation import check_int, check_option, check_positive, check_probability, check_real

from .schedule import warmup_cosine_lr

__all__ = ["train_loop", "LengthBuckets"]

#: which parameters AdamW's decoupled weight decay applies to
DECAY = ("matrices", "all")


def train_loop(module: torch.nn.Module, batch_loss: Callable[[Any], torch.Tensor], sample: Callable[[], Any],
               steps: int, lr: float, *, warmup: int = 0, min_lr_ratio: float = 0.1, weight_decay: float = 0.0,
               decay: str = "matrices", grad_clip: float = 1.0, torch_seed: int = 0, fused: bool = False,
               progress: bool = False, desc: str = "train",
               stop: Callable[[list[float]], bool] | None = None) -> list[float]:
    """Train ``module`` in place for ``steps`` AdamW steps; returns the loss of every step.

    Each step draws a batch ``b = sample()``, sets the learning rate of
    :func:`icml25.llm.schedule.warmup_cosine_lr` (linear warm-up over ``warmup`` steps, cosine decay to
    ``min_lr_ratio * lr``), evaluates ``loss = batch_loss(b)`` (a scalar tensor), back-propagates, clips the global
    gradient norm of ``module.parameters()`` at ``grad_clip`` (``0``: no clipping) and steps AdamW
    (betas 0.9/0.95). Torch's global RNG is forked and seeded with ``torch_seed`` for the loop (dropout is
    reproducible and the caller's RNG state is left untouched). The module is in train mode during the loop and in
    eval mode after it.

    Parameters
    ----------
    module : torch.nn.Module
        The network whose parameters are trained.
    batch_loss : callable
        ``batch_loss(batch) -> scalar tensor``; ``batch`` is what ``sample()`` returned.
    sample : callable
        ``sample() -> batch`` (e.g. an index array; ``LengthBuckets(...).draw``).
    steps : int
        Optimiser steps.
    lr : float
        Peak learning rate.
    warmup : int
        Linear warm-up steps.
    min_lr_ratio : float
        Final learning rate as a fraction of ``lr``.
    weight_decay : float
        AdamW decoupled weight decay.
    decay : {"matrices", "all"}
        ``"matrices"``: decay only parameters with two or more dimensions (not biases and LayerNorm gains, as
        GPT-2 training does); ``"all"``: every parameter.
    grad_clip : float
        Maximum global gradient norm (``0`` disables clipping).
    torch_seed : int
        Seed of torch's (forked) global RNG during the loop.
    fused : bool
        Use AdamW's fused kernel where torch has one (about 10 % faster on CPU for small models; its updates
        differ from the default implementation in the last float bits); falls back to the default.
    progress : bool
        Show a progress bar labelled ``desc``.
    desc : str
        Label of the progress bar.
    stop : callable, optional
        ``stop(losses) -> bool``, called after every step with the losses so far: True ends training early (e.g. a
        convergence test); the schedule still runs over ``steps``.

    Returns
    -------
    list of float
        ``float(loss)`` at every step.
    """
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    for name, f in (("batch_loss", batch_loss), ("sample", sample), ("stop", callable if stop is None else stop)):
        if not callable(f):
            raise TypeError(f"{name} must be callable, got {type(f).__name__}")
    steps = check_int(steps, "steps", low=1)
    lr = check_positive(lr, "lr")
    warmup = check_int(warmup, "warmup", low=0)
    min_lr_ratio = check_probability(min_lr_ratio, "min_lr_ratio")
    weight_decay = check_real(weight_decay, "weight_decay", low=0.0)
    check_option(decay, "decay", DECAY)
    grad_clip = check_real(grad_clip, "grad_clip", low=0.0)
    torch_seed = check_int(torch_seed, "torch_seed", low=0)
    if decay == "all":
        params: Any = list(module.parameters())
    else:
        params = [{"params": [p for p in module.parameters() if p.dim() >= 2], "weight_decay": weight_decay},
                  {"params": [p for p in module.parameters() if p.dim() < 2], "weight_decay": 0.0}]
    opt = None
    if fused:
        try:  # the fused kernel (torch >= 2.4 on CPU) saves ~10% of a small model's step
            opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=(0.9, 0.95), fused=True)
        except (RuntimeError, TypeError, ValueError):
            opt = None
    if opt is None:
        opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=(0.9, 0.95))
    from icml25.core.progress import progress as _progress

    iterator = _progress(range(steps), desc, total=steps) if progress else range(steps)
    losses: list[float] = []
    module.train()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(torch_seed)
            for step in iterator:
                batch = sample()
                for g in opt.param_groups:
                    g["lr"] = warmup_cosine_lr(step, steps, lr, warmup, min_lr_ratio)
                loss = batch_loss(batch)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if grad_clip:
                    torch.nn.utils.clip_grad_norm_(module.parameters(), grad_clip)
                opt.step()
                losses.append(float(loss.detach()))
                if stop is not None and stop(losses):
                    break
    finally:
        module.eval()
    return losses


class LengthBuckets:
    """Batches of similar-length sequences (less padding on CPU) for :func:`train_loop`.

    :meth:`draw` sorts the sequences by length with random tie-breaking and takes ``batch_size`` consecutive ones
    from a uniformly drawn start (every sequence can be drawn; those at the two ends of the length order less
    often); with at most ``batch_size`` sequences it draws ``batch_size`` indices uniformly with replacement.

    Parameters
    ----------
    lengths : array-like of int, shape (N,)
        Length of every sequence.
    batch_size : int
        Sequences per batch.
    rng : numpy.random.Generator
        The stream the batches are drawn from.
    """

    def __init__(self, lengths: Any, batch_size: int, rng: np.random.Generator) -> None:
        from icml25.core.validation import check_array

        lengths = check_array(lengths, "lengths", ndim=1, low=0)
        if not np.all(lengths == np.round(lengths)):
            raise ValueError("lengths must be whole numbers (token counts)")
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
        self.lengths, self.bs, self.rng = lengths.astype(np.int64), check_int(batch_size, "batch_size", low=1), rng

    def draw(self) -> np.ndarray:
        """Indices of one batch, shape ``(batch_size,)``."""
        n = len(self.lengths)
        if n <= self.bs:
            return self.rng.integers(0, n, size=self.bs)
        order = np.lexsort((self.rng.random(n), self.lengths))
        start = int(self.rng.integers(0, n - self.bs + 1))
        return order[start:start + self.bs]
