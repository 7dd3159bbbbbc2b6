"""q_θ: an autoregressive model of the next selected state given the previous one (spec §2.3, reconstructed).

An episode transition ``(x_prev, x_next)`` is serialised as ``[BOS] x_prev [SEP] x_next`` over the sequence
alphabet plus two special tokens, and a small GPT from the shared layer (:class:`icml25.llm.TinyGPTModule`) is
trained with cross-entropy on the ``x_next`` tokens. At test time it transforms a sequence for a few steps,
optionally drawing ``n_candidates`` per step and keeping the best under a guide (best-of-n, which costs n guide
evaluations per step).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.optional import require
from icml25.core.validation import check_array, check_int, check_positive, check_real

__all__ = ["QTheta", "TransformResult"]


@dataclass
class TransformResult:
    """Output of :meth:`QTheta.transform`.

    Attributes
    ----------
    states : (n, steps+1, L) int array
        The sequence after every step (step 0 = input).
    values : (n, steps+1) float array
        Guide value after every step (NaN when no guide was given).
    n_evals : int
        Guide evaluations per input (``steps * n_candidates`` with a guide, else 0).
    infeasible_rate : float
        Fraction of sampled candidates that were infeasible.
    """

    states: np.ndarray
    values: np.ndarray
    n_evals: int
    infeasible_rate: float


class QTheta:
    """The extrapolative transformation model q_θ (a small GPT over episode transitions).

    Parameters
    ----------
    num_states : int
        Alphabet size v of the sequences.
    length : int
        Sequence length L.
    n_layer, n_head, n_embd : int
        Transformer size (spec quick: 1 layer, 2 heads, width 32; full: 2, 4, 96).
    seed : int
        Initialisation seed.
    device : str
        Torch device of the model and of every tensor it creates (``"cpu"``, ``"cuda"``, ...); sampling draws on
        that device, so a seed gives the same samples on the same device only.

    Examples
    --------
    >>> import numpy as np
    >>> q = QTheta(num_states=4, length=6, n_layer=1, n_head=2, n_embd=16, seed=0)
    >>> prev = np.zeros((32, 6), dtype=int); nxt = np.ones((32, 6), dtype=int)
    >>> _ = q.fit(prev, nxt, epochs=30, batch_size=16, lr=1e-2, seed=0)
    >>> q.transform(prev[:2], steps=1, seed=0).states[:, 1].tolist()
    [[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]]
    """

    def __init__(self, num_states: int, length: int, n_layer: int = 1, n_head: int = 2, n_embd: int = 32,
                 seed: int = 0, device: str = "cpu") -> None:
        torch = require("torch", extra="torch")
        from icml25.llm.tiny_module import TinyGPTConfig, TinyGPTModule

        self.v = check_int(num_states, "num_states", low=2)
        self.L = check_int(length, "length", low=1)
        self.SEP, self.BOS = self.v, self.v + 1
        cfg = TinyGPTConfig(n_layer=check_int(n_layer, "n_layer", low=1), n_head=check_int(n_head, "n_head", low=1),
                            n_embd=check_int(n_embd, "n_embd", low=1), block_size=2 * self.L + 2)
        gen = torch.random.fork_rng()
        with gen:
            torch.manual_seed(check_int(seed, "seed", low=0))
            self.module = TinyGPTModule(cfg, vocab_size=self.v + 2)
        if not isinstance(device, str) or not device.strip():
            raise TypeError(f"device must be a torch device name such as 'cpu' or 'cuda', got {device!r}")
        self.device = torch.device(device)
        self.module.to(self.device)
        self.losses: list[float] = []

    def _check_seqs(self, x: Any, name: str) -> np.ndarray:
        X = check_array(x, name, ndim=2, dtype=np.int64)
        if X.shape[1] != self.L:
            raise ValueError(f"{name} must have {self.L} columns (the sequence length), got shape {X.shape}")
        if X.min() < 0 or X.max() >= self.v:
            raise ValueError(f"{name} must hold states in [0, {self.v}), got values in [{X.min()}, {X.max()}]")
        return X

    def _serialise(self, prev: np.ndarray, nxt: np.ndarray) -> np.ndarray:
        n = len(prev)
        return np.concatenate([np.full((n, 1), self.BOS), prev, np.full((n, 1), self.SEP), nxt], axis=1)

    def fit(self, prev: Any, nxt: Any, epochs: int = 3, batch_size: int = 32, lr: float = 3e-3,
            seed: int = 0, show_progress: bool = False) -> QTheta:
        """Train on transitions ``prev -> nxt`` ((N, L) each) with AdamW; loss on the ``nxt`` tokens only."""
        import torch
        import torch.nn.functional as F

        P, N_ = self._check_seqs(prev, "prev"), self._check_seqs(nxt, "nxt")
        if len(P) != len(N_):
            raise ValueError(f"prev and nxt must have the same number of rows; prev has {len(P)}, nxt {len(N_)}")
        epochs = check_int(epochs, "epochs", low=1)
        batch_size = check_int(batch_size, "batch_size", low=1)
        lr = check_positive(lr, "lr")
        seq = torch.as_tensor(self._serialise(P, N_), device=self.device)
        inputs, targets = seq[:, :-1], seq[:, 1:].clone()
        targets[:, : self.L + 1] = -100  # predict only x_next (positions after SEP)
        opt = torch.optim.AdamW(self.module.parameters(), lr=lr, weight_decay=0.01)
        gen = torch.Generator().manual_seed(check_int(seed, "seed", low=0))
        self.module.train()
        it = range(epochs)
        if show_progress:
            from icml25.core.progress import progress

            it = progress(it, "q_theta epochs")
        for _ in it:
            perm = torch.randperm(len(seq), generator=gen).to(self.device)
            for b in range(0, len(seq), batch_size):
                idx = perm[b:b + batch_size]
                logits = self.module(inputs[idx])
                loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets[idx].reshape(-1),
                                       ignore_index=-100)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                self.losses.append(float(loss.detach()))
        self.module.eval()
        return self

    def sample(self, x: Any, n_samples: int = 1, temperature: float = 1.0, seed: Any = None) -> np.ndarray:
        """(n, n_samples, L) next states sampled from q_θ(· | x) for the (n, L) sequences ``x``."""
        import torch

        from icml25.llm.tiny_module import KVCache

        X = self._check_seqs(x, "x")
        k = check_int(n_samples, "n_samples", low=1)
        temperature = check_positive(temperature, "temperature")
        gen = torch.Generator(device=self.device).manual_seed(int(np.random.default_rng(seed).integers(2**62)))
        prefix = torch.as_tensor(np.concatenate([np.full((len(X), 1), self.BOS), X, np.full((len(X), 1), self.SEP)],
                                                axis=1), device=self.device).repeat_interleave(k, dim=0)
        B = len(prefix)
        out = torch.empty(B, self.L, dtype=torch.long, device=self.device)
        with torch.no_grad():
            cache = KVCache(self.module.cfg, B, 2 * self.L + 2, dtype=torch.float32, device=self.device)
            logits = self.module(prefix, cache=cache, last_only=True)[:, -1]
            for t in range(self.L):
                logits = logits[:, : self.v] / temperature  # only sequence states may be generated
                tok = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=gen)
                out[:, t] = tok[:, 0]
                if t + 1 < self.L:
                    logits = self.module(tok, cache=cache)[:, -1]
        return out.cpu().numpy().reshape(len(X), k, self.L)

    def transform(self, x0: Any, steps: int = 5, n_candidates: int = 1, temperature: float = 1.0,
                  guide: Callable[[np.ndarray], np.ndarray] | None = None,
                  feasible: Callable[[np.ndarray], np.ndarray] | None = None, seed: Any = None) -> TransformResult:
        """Apply q_θ for ``steps`` steps to each row of ``x0`` (spec §2.3 inference).

        With a ``guide`` ((n, L) -> (n,), ``-inf`` = infeasible) each step samples ``n_candidates`` and keeps the best
        (even if worse than the current state: no acceptance test); a step whose candidates are all infeasible keeps
        the current state. Without a guide ``n_candidates`` must be 1 and ``feasible`` (optional) rejects samples.
        """
        X = self._check_seqs(x0, "x0")
        steps = check_int(steps, "steps", low=1)
        k = check_int(n_candidates, "n_candidates", low=1)
        check_real(temperature, "temperature", low=0.0, low_open=True)
        if guide is None and k > 1:
            raise ValueError("n_candidates > 1 needs a guide to choose among the candidates")
        rng = np.random.default_rng(seed)
        n = len(X)
        states = np.empty((n, steps + 1, self.L), dtype=np.int64)
        values = np.full((n, steps + 1), np.nan)
        states[:, 0] = X
        if guide is not None:
            values[:, 0] = guide(X)
        bad = total = 0
        for s in range(steps):
            cand = self.sample(states[:, s], k, temperature, seed=rng)  # (n, k, L)
            flat = cand.reshape(n * k, self.L)
            total += n * k
            if guide is not None:
                g = np.asarray(guide(flat), dtype=float).reshape(n, k)
                ok = np.isfinite(g)
                bad += int((~ok).sum())
                best = np.argmax(np.where(ok, g, -np.inf), axis=1)
                take = ok.any(axis=1)
                states[:, s + 1] = np.where(take[:, None], cand[np.arange(n), best], states[:, s])
                values[:, s + 1] = np.where(take, g[np.arange(n), best], values[:, s])
            else:
                ok = np.ones(n, dtype=bool) if feasible is None else np.asarray(feasible(flat), dtype=bool)
                bad += int((~ok).sum())
                states[:, s + 1] = np.where(ok[:, None], cand[:, 0], states[:, s])
        return TransformResult(states=states, values=values, n_evals=steps * k if guide is not None else 0,
                               infeasible_rate=bad / max(total, 1))
