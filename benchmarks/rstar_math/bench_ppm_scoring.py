"""PPM scoring inside an expansion: shared-prefix KV cache vs scoring every child from scratch.

Full-mode model size (d=96, 3 layers, context 320). Each "expansion" is a StepArith prefix (question + solved
steps) with 8 candidate children; 48 expansions are scored in one call, as a lock-step MCTS wave does.
Prints pairs/s of both paths, their ratio and the largest score difference.
Run: .venv/bin/python benchmarks/rstar_math/bench_ppm_scoring.py
"""

from __future__ import annotations

import time

import numpy as np
import torch

from icml25.rstar_math import StepArithGenerator, StepFormat
from icml25.rstar_math.models.process_preference_model import PPMModel
from icml25.rstar_math.models.tiny_policy import make_tiny_lm


def main(n_expansions: int = 48, children: int = 8, repeats: int = 3) -> None:
    torch.set_num_threads(1)
    fmt = StepFormat()
    ppm = PPMModel.from_policy(make_tiny_lm(n_layer=3, n_head=4, n_embd=96, block_size=320, seed=0))
    with torch.no_grad():
        ppm.summary.weight.normal_()  # a head with O(1) outputs, so that the score comparison means something
    prefixes, steps = [], []
    problems = StepArithGenerator(levels=(3, 4, 5, 6), seed=1).sample(n_expansions)
    other = StepArithGenerator(levels=(3, 4, 5, 6), seed=2).sample(children)
    for p in problems:
        sol = p.canonical_steps()
        head = fmt.prompt(p.question) + "".join(sol[:len(sol) // 2])
        for j in range(children):  # the true next step and steps of other problems as siblings
            prefixes.append(head)
            steps.append(sol[len(sol) // 2] if j == 0 else other[j].canonical_steps()[0])
    timings = {}
    scores = {}
    for name, share in (("shared prefix", True), ("plain", False)):
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            scores[name] = ppm.raw_scores(prefixes, steps, share_prefix=share)
            best = min(best, time.perf_counter() - t)
        timings[name] = best
    n = len(steps)
    for name, t in timings.items():
        print(f"{name:>14}: {n / t:8.1f} pairs/s ({t:.3f} s for {n} pairs)")
    print(f"speed-up: {timings['plain'] / timings['shared prefix']:.2f}x; "
          f"max |score difference|: {np.abs(scores['plain'] - scores['shared prefix']).max():.2e}")


if __name__ == "__main__":
    main()
