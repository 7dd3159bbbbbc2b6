"""One Riemannian diffusion iteration for K = 100 agents on Grassmann(100, 10).

Ours (batched over agents: one stacked SVD/solve per operation) against a per-agent Python loop over
pymanopt's Grassmann operations doing the same adapt-then-combine step, in the same run. Also reports a
per-agent loop over our own (unbatched) operations, to separate vectorisation from implementation.

Run: .venv/bin/python benchmarks/manifold_diffusion/bench_diffusion_step.py
"""

from __future__ import annotations

import time

import networkx as nx
import numpy as np

from icml25.manifold_diffusion import DiffusionAdaptation, Grassmann, metropolis_weights, pca_loss_grad

K, D, R, MU, ALPHA = 100, 100, 10, 0.01, 1.0


def _best_of(fn, repeats: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    graph = nx.connected_watts_strogatz_graph(K, 6, 0.3, seed=0)
    a = metropolis_weights(graph)
    g = Grassmann(D, R)
    base = np.repeat(g.random_point(rng)[None], K, 0)
    w = g.retr(base, 0.2 * g.random_tangent(base, rng))
    x = rng.standard_normal((K, D))
    egrad = pca_loss_grad(w, x)
    algo = DiffusionAdaptation(g, a, MU, ALPHA)
    nbrs = [np.flatnonzero(a[:, k]) for k in range(K)]
    print(f"K={K} agents, Grassmann({D}, {R}), {int((a > 0).sum()) - K} directed neighbour pairs")

    t_ours = _best_of(lambda: algo.step(w, egrad))
    print(f"ours, batched over agents          : {1e3 * t_ours:8.1f} ms / iteration")

    def loop(proj, retr, log):  # type: ignore[no-untyped-def]
        psi = [retr(w[k], -MU * proj(w[k], egrad[k])) for k in range(K)]
        return [retr(psi[k], ALPHA * sum(a[l, k] * log(psi[k], psi[l]) for l in nbrs[k] if l != k))
                for k in range(K)]

    t_loop = _best_of(lambda: loop(g.proj, g.retr, g.log))
    print(f"ours, per-agent Python loop        : {1e3 * t_loop:8.1f} ms / iteration  (batched is "
          f"{t_loop / t_ours:.1f}x faster)")
    try:
        from pymanopt.manifolds import Grassmann as PymanoptGrassmann
    except ImportError:
        print("pymanopt not installed: pip install pymanopt to compare")
        return
    pm = PymanoptGrassmann(D, R)
    t_pm = _best_of(lambda: loop(pm.projection, pm.retraction, pm.log))
    out_pm = loop(pm.projection, pm.retraction, pm.log)
    out_ours = algo.step(w, egrad)
    err = max(float(np.abs(out_pm[k] @ out_pm[k].T - out_ours[k] @ out_ours[k].T).max()) for k in range(K))
    print(f"pymanopt 2.2 ops, per-agent loop   : {1e3 * t_pm:8.1f} ms / iteration  (ours is "
          f"{t_pm / t_ours:.1f}x faster; max |P_ours - P_pymanopt| = {err:.1e})")


if __name__ == "__main__":
    main()
