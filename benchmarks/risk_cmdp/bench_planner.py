"""Benchmark: the vectorised augmented-state planner (S=20, A=4, H=10, 201 budget cells) against a per-state
Python loop of the same recursion, same run; prints the ratio."""

from __future__ import annotations

import time

import numpy as np

from icml25.risk_cmdp import BudgetGrid, plan_augmented, plan_augmented_loop


def main() -> None:
    rng = np.random.default_rng(0)
    S, A, H = 20, 4, 10
    grid = BudgetGrid(H, 0.1)  # 2H/eps + 1 = 201 budget cells
    P = rng.dirichlet(np.ones(S), size=(S, A))
    P = np.broadcast_to(P, (H, S, A, S))
    r = rng.random((H, S, A))
    g_steps = rng.integers(0, 11, size=(H, S, A))
    bonus = 0.05 * rng.random((H, S, A))
    t = time.perf_counter()
    for _ in range(5):
        plan = plan_augmented(P, r, g_steps, bonus, 1.3, -0.5, grid, rng)
    t_vec = (time.perf_counter() - t) / 5
    t = time.perf_counter()
    _, V_r, V_u = plan_augmented_loop(P, r, g_steps, bonus, 1.3, -0.5, grid)
    t_loop = time.perf_counter() - t
    assert np.allclose(plan.V_r, V_r) and np.allclose(plan.V_u, V_u)
    print(f"augmented planner S={S} A={A} H={H} n_B={grid.n}: vectorised {t_vec * 1e3:.1f} ms, "
          f"Python loop {t_loop:.2f} s, speed-up x{t_loop / t_vec:.0f}")


if __name__ == "__main__":
    main()
