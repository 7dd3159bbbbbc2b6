"""Inference compute: convert attempts into FLOPs and pick the best model for a budget (spec 2.2).

One attempt costs ``c1 = 2 N (T_gen + T_prompt)`` FLOPs (forward pass of an ``N``-parameter decoder per token;
``T_prompt`` only if the prompt is re-encoded per attempt), so ``k = floor(C / c1)`` attempts fit in a budget
``C`` and ``L_inf(C) ~ Gamma(alpha+beta)/Gamma(alpha) (C / c1)^(-beta)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_positive

__all__ = ["AttemptCost", "coverage_at_compute", "best_model_for_budget"]


@dataclass(frozen=True)
class AttemptCost:
    """FLOPs of one attempt of a decoder-only model: ``2 n_params (gen_tokens + prompt_tokens)``.

    Parameters
    ----------
    n_params : float
        Model parameters ``N``.
    gen_tokens : float
        Generated tokens per attempt ``T_gen``.
    prompt_tokens : float
        Prompt tokens re-encoded per attempt (0 when the prompt's KV cache is shared across attempts).
    """

    n_params: float
    gen_tokens: float
    prompt_tokens: float = 0.0

    def __post_init__(self) -> None:
        for name in ("n_params", "gen_tokens"):
            check_positive(getattr(self, name), name)
        check_positive(self.prompt_tokens, "prompt_tokens", allow_zero=True)

    @property
    def flops(self) -> float:
        """FLOPs per attempt ``c1``."""
        return 2.0 * self.n_params * (self.gen_tokens + self.prompt_tokens)

    def attempts(self, flops: Any) -> np.ndarray:
        """Whole attempts affordable with ``flops`` per problem: ``floor(flops / c1)``."""
        f = check_array(flops, "flops", min_size=0, low=0.0)  # any shape, elementwise
        return np.floor(f / self.flops)


def coverage_at_compute(law: Any, cost: AttemptCost, flops: Any) -> np.ndarray:
    """Coverage reachable with ``flops`` inference FLOPs per problem (0 when not even one attempt fits).

    Parameters
    ----------
    law : object with ``pass_at_k(k)``
        A fitted coverage law (e.g. :class:`~icml25.inference_scaling.BetaCoverageLaw`).
    cost : AttemptCost
        Cost of one attempt.
    flops : float or array-like
        Budget(s) per problem in FLOPs.

    Returns
    -------
    ndarray, shape of ``flops``
    """
    if not isinstance(cost, AttemptCost):
        raise TypeError(f"cost must be an AttemptCost, got {type(cost).__name__}")
    k = cost.attempts(flops)
    out = np.zeros_like(k, dtype=float)
    ok = k >= 1
    if np.any(ok):
        out[ok] = np.asarray(law.pass_at_k(k[ok]), dtype=float)
    return out


def best_model_for_budget(models: dict[str, tuple[Any, AttemptCost]], flops_grid: Any) -> list[dict[str, Any]]:
    """For each budget, the model whose attempts give the highest coverage.

    Parameters
    ----------
    models : dict name -> (law, AttemptCost)
        Candidate models.
    flops_grid : array-like of float
        Budgets per problem in FLOPs.

    Returns
    -------
    list of dict
        One row per budget: ``flops``, ``best``, ``best_coverage`` and ``coverage[name]`` of every model.
    """
    if not models:
        raise ValueError("models must name at least one (law, cost) pair")
    grid = check_array(flops_grid, "flops_grid", ndim=1, low=0.0)
    cov = {name: coverage_at_compute(law, cost, grid) for name, (law, cost) in models.items()}
    names = list(models)
    rows = []
    for i, f in enumerate(grid):
        vals = [cov[nm][i] for nm in names]
        j = int(np.argmax(vals))
        row: dict[str, Any] = {"flops": float(f), "best": names[j] if vals[j] > 0 else "none",
                               "best_coverage": float(vals[j])}
        row.update({f"coverage[{nm}]": float(cov[nm][i]) for nm in names})
        rows.append(row)
    return rows
