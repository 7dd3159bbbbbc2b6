"""Reward-model ablations of spec §6 / paper Table 8: PQM (Q-value regression) and ORM (outcome) heads.

Both reuse :class:`PPMModel` (same trunk + scalar head) and differ only in data and loss:

- PQM: every non-root node with ``N >= min_visits`` gives ``(prefix, step, Q)``; loss ``MSE(tanh(h), Q)``;
  search score ``tanh(h)``.
- ORM: every valid answer trajectory gives ``(prompt, response, correct)``; loss ``BCE(σ(h), correct)``;
  score ``2σ(h) - 1 = tanh(h/2)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ..domain.step_format import StepFormat
from ..search.tree import Tree
from .process_preference_model import PPMModel

__all__ = ["pqm_targets", "orm_targets", "train_value_head", "make_pqm", "make_orm"]


def pqm_targets(trees: Sequence[Tree], min_visits: int = 2, fmt: StepFormat | None = None
                ) -> list[tuple[str, str, float]]:
    """``(prefix, step text, Q)`` for every non-root node visited at least ``min_visits`` times."""
    from icml25.core.validation import check_int

    check_int(min_visits, "min_visits", low=1)
    fmt = fmt or StepFormat()
    out = []
    for t in trees:
        head = fmt.prompt(t.question)
        for n in t.nodes():
            if n.parent is not None and n.N >= min_visits:
                out.append((head + "".join(a.text for a in n.parent.path()), n.text, float(n.Q)))
    return out


def orm_targets(trees: Sequence[Tree], fmt: StepFormat | None = None) -> list[tuple[str, str, float]]:
    """``(prompt, full response, 1.0 if correct else 0.0)`` for every valid answer trajectory."""
    fmt = fmt or StepFormat()
    return [(fmt.prompt(t.question), "".join(n.text for n in path), 1.0 if path[-1].correct else 0.0)
            for t in trees for path in t.trajectories()]


def make_pqm(lm) -> PPMModel:
    """A Q-value regression head on a copy of the policy trunk (score ``tanh(h)``)."""
    return PPMModel.from_policy(lm, score_transform="tanh")


def make_orm(lm) -> PPMModel:
    """An outcome reward head on a copy of the policy trunk (score ``2σ(h) - 1``)."""
    return PPMModel.from_policy(lm, score_transform="tanh_half")


def train_value_head(model: PPMModel, data: Sequence[tuple[str, str, float]], kind: str, steps: int = 150,
                     batch_size: int = 32, lr: float = 2e-3, warmup: int = 10, weight_decay: float = 0.1,
                     seed: int = 0) -> list[float]:
    """Train a PQM (``kind="pqm"``, MSE on tanh) or ORM (``kind="orm"``, BCE) in place; returns losses."""
    if kind not in ("pqm", "orm"):
        raise ValueError(f"kind must be 'pqm' or 'orm', got {kind!r}")
    if not data:
        raise ValueError("data must be non-empty")
    from .._validation import check_training

    check_training(steps, batch_size, lr, warmup, weight_decay)
    targets = np.array([d[2] for d in data], dtype=float)
    if not np.isfinite(targets).all():
        raise ValueError("data targets (third entries) must be finite")
    from icml25.llm.training import LengthBuckets, train_loop

    rng = np.random.default_rng(seed)
    sampler = LengthBuckets([len(a) + len(b) for a, b, _ in data], min(batch_size, len(data)), rng)

    def batch_loss(pick: np.ndarray) -> torch.Tensor:
        x, lens = model.encode([data[i][0] for i in pick], [data[i][1] for i in pick])
        y = torch.tensor([data[i][2] for i in pick], dtype=torch.float32)
        h = model(x, lens)
        return F.mse_loss(torch.tanh(h), y) if kind == "pqm" else F.binary_cross_entropy_with_logits(h, y)

    return train_loop(model, batch_loss, sampler.draw, steps, lr, warmup=warmup, weight_decay=weight_decay,
                      decay="all", grad_clip=1.0, torch_seed=int(rng.integers(0, 2**31)))
