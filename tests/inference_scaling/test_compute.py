"""FLOPs accounting and best-model-per-budget."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.inference_scaling import AttemptCost, BetaCoverageLaw, best_model_for_budget, coverage_at_compute


def test_attempt_cost_and_floor() -> None:
    cost = AttemptCost(1e9, 200, prompt_tokens=56)
    assert cost.flops == pytest.approx(2e9 * 256)
    assert list(cost.attempts([0, cost.flops * 2.5])) == [0, 2]
    with pytest.raises(ValueError, match="n_params"):
        AttemptCost(0, 10)


def test_coverage_at_compute_equals_law_at_affordable_k() -> None:
    law = BetaCoverageLaw(5.0, 0.3)
    cost = AttemptCost(1e8, 100)
    flops = cost.flops * np.array([0.5, 1, 10, 1000])
    assert np.allclose(coverage_at_compute(law, cost, flops), [0.0, *law.pass_at_k([1, 10, 1000])])


def test_small_model_wins_small_budgets_large_model_large_budgets() -> None:
    small = (BetaCoverageLaw(5.0, 0.3), AttemptCost(1e8, 100))  # cheap, weaker tail
    large = (BetaCoverageLaw(5.0, 0.8), AttemptCost(1e10, 100))  # 100x the cost, steeper
    grid = np.logspace(11, 16, 21)
    rows = best_model_for_budget({"small": small, "large": large}, grid)
    best = [r["best"] for r in rows]
    assert best[0] == "small" and best[-1] == "large"
    assert rows[0]["coverage[large]"] == 0.0  # not even one attempt of the large model fits
