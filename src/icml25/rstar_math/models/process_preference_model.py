"""The process preference model (PPM, spec §2.8): policy trunk + scalar value head, pairwise Bradley-Terry loss.

Training uses the raw head output ``h`` at the last non-padding token; the search uses ``tanh(h / 5)``
(official inference code), configurable through ``score_transform``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ._trunk import trunk_hidden

__all__ = ["PPMModel", "ppm_pair_loss", "train_ppm", "pair_accuracy", "pair_factors"]


class PPMModel(nn.Module):
    """The PPM of rStar-Math: a copy of the policy's transformer trunk and ``dropout -> Linear(hidden, 1)``.

    ``r_θ(x ⊕ s_1 ⊕ ... ⊕ s_i) = w · h_T + b`` with ``h_T`` the final hidden state at the last non-padding token
    (Eq. 4 input). Head initialisation follows the official code (weight ~ N(5e-7, 1e-6), bias 1e-6).

    Parameters
    ----------
    trunk : nn.Module
        A module with ``forward(idx, return_hidden=True) -> (logits, hidden (B, T, C))`` (TinyGPT's module).
    tokenizer : object
        Tokenizer with ``encode``, ``eot_id``, ``pad_id``.
    block_size : int
        Maximum sequence length (longer inputs keep their last tokens).
    dropout : float
        Dropout before the head.
    score_transform : {"tanh5", "tanh", "tanh_half", "clip"}
        Map from the raw head output to the search score in [-1, 1] (official PPM: ``tanh(h / 5)``; PQM
        ``tanh(h)``; ORM ``tanh(h / 2) = 2σ(h) - 1``).
    """

    def __init__(self, trunk: nn.Module, tokenizer, block_size: int, dropout: float = 0.1,
                 score_transform: str = "tanh5") -> None:
        super().__init__()
        from icml25.core.validation import check_int, check_probability

        check_int(block_size, "block_size", low=1)
        check_probability(dropout, "dropout", open_high=True)
        if score_transform not in ("tanh5", "tanh", "tanh_half", "clip"):
            raise ValueError(f"score_transform must be 'tanh5', 'tanh', 'tanh_half' or 'clip', got "
                             f"{score_transform!r}")
        self.trunk, self.tokenizer, self.block_size = trunk, tokenizer, int(block_size)
        n_embd = trunk.wte.weight.shape[1] if hasattr(trunk, "wte") else trunk.config.hidden_size
        self.dropout = nn.Dropout(dropout)
        self.summary = nn.Linear(n_embd, 1)
        with torch.no_grad():
            self.summary.weight.normal_(5e-7, 1e-6)
            self.summary.bias.fill_(1e-6)
        self.score_transform = score_transform

    @classmethod
    def from_policy(cls, lm, dropout: float = 0.1, score_transform: str = "tanh5") -> PPMModel:
        """A PPM initialised from a TinyGPT policy (its own deep copy of the trunk)."""
        return cls(copy.deepcopy(lm.module), lm.tokenizer, lm.config.block_size, dropout, score_transform)

    def forward(self, idx: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Raw scores ``h``, shape ``(B,)``, of right-padded ids ``(B, T)`` with true ``lengths`` ``(B,)``."""
        hidden = trunk_hidden(self.trunk, idx)
        last = hidden[torch.arange(idx.shape[0], device=hidden.device), lengths.to(hidden.device) - 1]
        return self.summary(self.dropout(last)).squeeze(-1)

    def encode(self, prefixes: Sequence[str], steps: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Right-padded ids of ``<eot> prefix step`` and their lengths (left-truncated to ``block_size``), on the
        model's device."""
        if len(prefixes) != len(steps):
            raise ValueError(f"prefixes and steps must have the same length, got {len(prefixes)} and {len(steps)}")
        tok = self.tokenizer
        seqs = []
        for p, s in zip(prefixes, steps):
            ids = [tok.eot_id, *tok.encode(p + s)]
            seqs.append(ids[-self.block_size:])
        L = max(len(s) for s in seqs)
        x = np.full((len(seqs), L), tok.pad_id, dtype=np.int64)
        for r, s in enumerate(seqs):
            x[r, :len(s)] = s
        device = next(self.parameters()).device
        return (torch.from_numpy(x).to(device),
                torch.from_numpy(np.array([len(s) for s in seqs], dtype=np.int64)).to(device))

    @torch.no_grad()
    def raw_scores(self, prefixes: Sequence[str], steps: Sequence[str], chunk: int = 64,
                   share_prefix: bool = True) -> np.ndarray:
        """Raw head outputs ``h`` for ``prefix ⊕ step`` (eval mode), shape ``(len(steps),)``.

        With ``share_prefix`` (TinyGPT trunks), pairs with the same prefix encode it once and run only their
        step tokens on top of its KV cache (same values up to float rounding, several times faster inside MCTS,
        where an expansion's children share one prefix).
        """
        was = self.training
        self.eval()
        prefixes, steps = list(prefixes), list(steps)
        if len(prefixes) != len(steps):
            raise ValueError(f"prefixes and steps must have the same length, got {len(prefixes)} and {len(steps)}")
        out = np.zeros(len(steps))
        plain = list(range(len(steps)))
        if share_prefix and all(hasattr(self.trunk, a) for a in ("cfg", "blocks", "wte", "wpe", "ln_f")):
            from icml25.llm.shared_prefix import prefix_hidden_states

            from ._prefix_scoring import split_shareable

            shared, pref_ids, step_ids, plain = split_shareable(self.tokenizer, prefixes, steps, self.block_size)
            order = sorted(range(len(shared)), key=lambda j: (len(pref_ids[prefixes[shared[j]]]), prefixes[shared[j]]))
            start = 0
            while start < len(order):
                stop = min(start + chunk, len(order))
                while stop < len(order) and prefixes[shared[order[stop]]] == prefixes[shared[order[stop - 1]]]:
                    stop += 1  # keep the children of one prefix together
                part = order[start:stop]
                keys = list(dict.fromkeys(prefixes[shared[j]] for j in part))
                row = {k: i for i, k in enumerate(keys)}
                h = prefix_hidden_states(self.trunk, self.tokenizer.pad_id, [pref_ids[k] for k in keys],
                                         [row[prefixes[shared[j]]] for j in part], [step_ids[j] for j in part])
                out[[shared[j] for j in part]] = self.summary(h).squeeze(-1).float().numpy()
                start = stop
        for s in range(0, len(plain), chunk):
            idx = plain[s:s + chunk]
            x, lens = self.encode([prefixes[i] for i in idx], [steps[i] for i in idx])
            out[idx] = self(x, lens).float().numpy()
        self.train(was)
        return out

    def score(self, prefixes: Sequence[str], steps: Sequence[str]) -> np.ndarray:
        """Search scores in [-1, 1] (``StepScorer`` protocol): ``tanh(h / 5)`` by default."""
        h = self.raw_scores(list(prefixes), list(steps))
        if self.score_transform == "tanh5":
            return np.tanh(h / 5.0)
        if self.score_transform == "tanh":
            return np.tanh(h)
        if self.score_transform == "tanh_half":
            return np.tanh(h / 2.0)  # = 2 sigmoid(h) - 1
        return np.clip(h, -1.0, 1.0)

    def save(self, directory: str | Path) -> Path:
        """Write ``trunk.pt``, ``value_head.bin`` and ``ppm.json``.

        ``value_head.bin`` uses the official key names (``v_head.summary.weight``, ``v_head.summary.bias``, as
        written by the official ``train/save_rm.py``), so the head file is interchangeable with an official PPM's.
        """
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        torch.save(self.trunk.state_dict(), d / "trunk.pt")
        torch.save({"v_head.summary.weight": self.summary.weight.detach().clone(),
                    "v_head.summary.bias": self.summary.bias.detach().clone()}, d / "value_head.bin")
        (d / "ppm.json").write_text(json.dumps({"score_transform": self.score_transform,
                                                "block_size": self.block_size}))
        return d

    def load_weights(self, directory: str | Path) -> PPMModel:
        """Load weights written by :meth:`save` into this (same-shaped) model."""
        d = Path(directory)
        for f in ("trunk.pt", "value_head.bin"):
            if not (d / f).is_file():
                raise FileNotFoundError(f"{d / f} not found: a PPM directory holds trunk.pt and value_head.bin")
        self.trunk.load_state_dict(torch.load(d / "trunk.pt", map_location="cpu", weights_only=True))
        head = torch.load(d / "value_head.bin", map_location="cpu", weights_only=True)
        prefix = "v_head." if "v_head.summary.weight" in head else ""  # files of earlier versions lack the prefix
        if f"{prefix}summary.weight" not in head or f"{prefix}summary.bias" not in head:
            raise ValueError(f"{d / 'value_head.bin'} must hold v_head.summary.weight and v_head.summary.bias, got "
                             f"{sorted(head)}")
        with torch.no_grad():
            self.summary.weight.copy_(head[f"{prefix}summary.weight"])
            self.summary.bias.copy_(head[f"{prefix}summary.bias"])
        return self


def pair_factors(pos_count: Sequence[int], neg_count: Sequence[int]) -> np.ndarray:
    """Official per-pair weight ``1/(pos_count·neg_count)`` (``1/(pos_count+neg_count)`` if a count is 0)."""
    pc, nc = np.asarray(pos_count, float), np.asarray(neg_count, float)
    prod, tot = pc * nc, pc + nc
    if np.any(tot <= 0):
        raise ValueError("pos_count + neg_count must be positive for every pair")
    return np.where(prod > 0, 1.0 / np.where(prod > 0, prod, 1.0), 1.0 / tot)


def ppm_pair_loss(h_pos: torch.Tensor, h_neg: torch.Tensor, pos_count=None, neg_count=None,
                  weighting: str = "paper") -> torch.Tensor:
    """Pairwise PPM loss (Eq. 4).

    ``"paper"``: ``mean(-log σ(h⁺ - h⁻))`` over pairs (Eq. 4's 1/(2·2) averages the 2x2 pairs of a node).
    ``"official"``: ``Σ factor · (-log σ(h⁺ - h⁻))`` with :func:`pair_factors` weights, summed over the batch.
    """
    from icml25.core.validation import check_option

    check_option(weighting, "weighting", ("paper", "official"))
    _check_scores(h_pos, "h_pos")
    _check_scores(h_neg, "h_neg")
    if h_pos.shape != h_neg.shape:
        raise ValueError(f"h_pos and h_neg must have the same shape, got {tuple(h_pos.shape)} and "
                         f"{tuple(h_neg.shape)}")
    per = -F.logsigmoid(h_pos - h_neg)
    if weighting == "paper":
        return per.mean()
    if weighting == "official":
        if pos_count is None or neg_count is None:
            raise ValueError("official weighting needs pos_count and neg_count")
        f = torch.as_tensor(pair_factors(pos_count, neg_count), dtype=per.dtype)
        return (per * f).sum()
    raise ValueError(f"weighting must be 'paper' or 'official', got {weighting!r}")


def _check_scores(h, name: str) -> None:
    """A non-empty, finite 1-D tensor of head outputs (one per pair)."""
    if not isinstance(h, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (pairs,), got {type(h).__name__}")
    if h.ndim != 1 or h.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty 1-D tensor (one score per pair), got shape {tuple(h.shape)}")
    if not bool(torch.isfinite(h.detach()).all()):
        raise ValueError(f"{name} must be finite, got NaN or inf entries")


def _pair_fields(pairs: Sequence) -> tuple[list[str], list[str], list[str], list[int], list[int]]:
    get = (lambda p, k: p[k]) if pairs and isinstance(pairs[0], dict) else getattr
    return ([get(p, "prompt") for p in pairs], [get(p, "pos") for p in pairs], [get(p, "neg") for p in pairs],
            [int(get(p, "pos_count")) for p in pairs], [int(get(p, "neg_count")) for p in pairs])


def train_ppm(ppm: PPMModel, pairs: Sequence, steps: int = 150, batch_size: int = 32, lr: float = 2e-3,
              warmup: int = 10, weight_decay: float = 0.1, grad_clip: float = 1.0, loss: str = "paper",
              seed: int = 0) -> list[float]:
    """Train ``ppm`` in place on preference pairs (records with prompt/pos/neg/pos_count/neg_count).

    Returns the per-step loss. AdamW, linear warm-up then cosine decay to 10 %.
    """
    if not pairs:
        raise ValueError("pairs must be non-empty (no preference pairs were extracted)")
    from icml25.core.validation import check_option

    from .._validation import check_training

    check_training(steps, batch_size, lr, warmup, weight_decay, grad_clip)
    check_option(loss, "loss", ("paper", "official"))
    prompts, pos, neg, pc, nc = _pair_fields(pairs)
    from icml25.llm.training import LengthBuckets, train_loop

    rng = np.random.default_rng(seed)
    sampler = LengthBuckets([len(p) + max(len(a), len(b)) for p, a, b in zip(prompts, pos, neg)],
                            min(batch_size, len(pairs)), rng)

    def batch_loss(pick: np.ndarray) -> torch.Tensor:
        pr = [prompts[i] for i in pick]
        x, lens = ppm.encode(pr + pr, [pos[i] for i in pick] + [neg[i] for i in pick])
        h = ppm(x, lens)
        k = len(pick)
        return ppm_pair_loss(h[:k], h[k:], [pc[i] for i in pick], [nc[i] for i in pick], weighting=loss)

    return train_loop(ppm, batch_loss, sampler.draw, steps, lr, warmup=warmup, weight_decay=weight_decay,
                      decay="all", grad_clip=grad_clip, torch_seed=int(rng.integers(0, 2**31)))


def pair_accuracy(ppm: PPMModel, pairs: Sequence) -> float:
    """Pairwise accuracy ``mean[h⁺ > h⁻]`` (official evaluation metric)."""
    if not pairs:
        raise ValueError("pairs must be non-empty")
    prompts, pos, neg, _, _ = _pair_fields(pairs)
    hp = ppm.raw_scores(prompts, pos)
    hn = ppm.raw_scores(prompts, neg)
    return float(np.mean(hp > hn))
