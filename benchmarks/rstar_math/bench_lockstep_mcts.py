"""Lock-step batched MCTS vs the same search expanding one problem at a time (same policy, same seed).

A TinyGPT policy is fine-tuned briefly on gold StepArith solutions so that it writes well-formed steps; then
both searches run R rollouts over the same problems. Prints rollouts/s, policy tokens/s and the speed ratio.
Run: .venv/bin/python benchmarks/rstar_math/bench_lockstep_mcts.py
"""

from __future__ import annotations

import time

import torch

from icml25.rstar_math import (
    MCTS,
    AnswerChecker,
    MCTSConfig,
    SafeArithExecutor,
    StepArithGenerator,
    StepFormat,
    TinyStepPolicy,
)
from icml25.rstar_math.models.sft import train_sft
from icml25.rstar_math.models.tiny_policy import make_tiny_lm


def main(n_problems: int = 96, rollouts: int = 2, n_candidates: int = 4) -> None:
    torch.set_num_threads(1)
    fmt = StepFormat()
    train = StepArithGenerator(levels=(1, 2), seed=1).sample(200)
    lm = make_tiny_lm(block_size=256, seed=0)
    train_sft(lm, [(fmt.prompt(p.question), "".join(p.canonical_steps())) for p in train], steps=120,
              batch_size=32, lr=3e-3, seed=0)
    problems = StepArithGenerator(levels=(1, 2), seed=2).sample(n_problems)
    cfg = MCTSConfig(n_candidates=n_candidates, rollouts=rollouts, max_depth=10, errors_threshold=2,
                     max_tokens=32, seed=0)
    ex = SafeArithExecutor(allow_float=False)
    checker = AnswerChecker(use_math_verify=False)  # integer answers: the numeric route decides (and is fast)

    pol = TinyStepPolicy(lm)
    t = time.perf_counter()
    trees = MCTS(pol, ex, checker, config=cfg, fmt=fmt).search(problems)
    dt_batch = time.perf_counter() - t
    tok_batch = pol.generated_tokens

    pol1 = TinyStepPolicy(lm)
    t = time.perf_counter()
    for p in problems:
        MCTS(pol1, ex, checker, config=cfg, fmt=fmt).search([p])
    dt_one = time.perf_counter() - t
    tok_one = pol1.generated_tokens

    n_roll = n_problems * rollouts
    print(f"lock-step : {n_roll / dt_batch:7.2f} rollouts/s  {tok_batch / dt_batch:9.0f} policy tokens/s  "
          f"({dt_batch:.1f} s, {pol.calls} policy calls)")
    print(f"one-by-one: {n_roll / dt_one:7.2f} rollouts/s  {tok_one / dt_one:9.0f} policy tokens/s  "
          f"({dt_one:.1f} s, {pol1.calls} policy calls)")
    print(f"speed-up (rollouts/s): {dt_one / dt_batch:.1f}x ; solved {sum(t.solved() for t in trees)}/{n_problems}")


if __name__ == "__main__":
    main()
