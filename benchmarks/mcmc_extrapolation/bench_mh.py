"""MH steps per second vectorised over chains vs one chain at a time (same run), and q_θ training at 1 vs 2 threads.

    python benchmarks/mcmc_extrapolation/bench_mh.py
"""

from __future__ import annotations

import time

from icml25.mcmc_extrapolation import Ehrlich, MarkovPriorGibbsProposal, MetropolisHastings, QTheta


def main() -> None:
    f = Ehrlich(20, 32, 2, 4, seed=0)
    mh = MetropolisHastings(f, MarkovPriorGibbsProposal(f.transition_matrix, f.initial_dist, 2), beta=100)
    n, steps = 100, 200
    X = f.sample_prior(n, seed=0)
    t = time.perf_counter()
    mh.run(X, steps, seed=0)
    vec = n * steps / (time.perf_counter() - t)
    t = time.perf_counter()
    for i in range(10):
        mh.run(X[i:i + 1], steps, seed=i)
    one = 10 * steps / (time.perf_counter() - t)
    print("| MH (Ehrlich v=20, L=32) | chain-steps/s |")
    print("|---|---|")
    print(f"| {n} chains vectorised | {vec:,.0f} |")
    print(f"| one chain at a time | {one:,.0f} |")
    print(f"| ratio | {vec / one:.1f}x |")
    import numpy as np
    import torch

    prev = f.sample_prior(600, seed=1)
    nxt = np.roll(prev, 1, axis=1)
    print("\n| q_theta fit (600 transitions, 3 epochs) | seconds |")
    print("|---|---|")
    for size in ((1, 2, 32), (2, 4, 96)):
        for threads in (1, 2):
            torch.set_num_threads(threads)
            q = QTheta(20, 32, *size, seed=0)
            t = time.perf_counter()
            q.fit(prev, nxt, epochs=3, batch_size=64, lr=3e-4, seed=0)
            print(f"| layers/heads/width {size}, {threads} thread(s) | {time.perf_counter() - t:.2f} |")


if __name__ == "__main__":
    main()
