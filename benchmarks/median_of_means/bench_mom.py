"""Benchmark: UniformMoM over 1,000 functions x 1e5 samples vs a per-function loop, and MoMKMeans vs
scikit-learn's KMeans at n = 1e5 (same run; ratios printed)."""

from __future__ import annotations

import time

import numpy as np
from sklearn.cluster import KMeans

from icml25.median_of_means import MoMKMeans, UniformMoM


def timed(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    n, d, n_funcs, K = 100_000, 10, 1000, 37
    X = rng.standard_t(2.5, size=(n, d))
    U = rng.normal(size=(d, n_funcs))
    est = UniformMoM(K, random_state=0).fit(X)
    part = est.partition_

    def loop() -> np.ndarray:
        out = np.empty(n_funcs)
        for j in range(n_funcs):
            v = X @ U[:, j]
            out[j] = np.median(v[part].mean(1))
        return out

    np.testing.assert_allclose(est.estimate(lambda X: X @ U), loop(), rtol=1e-9, atol=1e-12)
    t_vec = timed(lambda: est.estimate(lambda X: X @ U))
    t_loop = timed(loop, repeat=1)
    print(f"UniformMoM  {n_funcs} functions x {n} samples: vectorised {t_vec:.3f}s, per-function loop "
          f"{t_loop:.3f}s, speed-up x{t_loop / t_vec:.1f}")

    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    Xk = centres[rng.integers(3, size=n)] + rng.standard_t(3, size=(n, 2))
    t_mom = timed(lambda: MoMKMeans(3, n_blocks=15, n_init=10, random_state=0).fit(Xk), repeat=1)
    t_km = timed(lambda: KMeans(3, n_init=10, random_state=0).fit(Xk), repeat=1)
    print(f"k-means n={n}, 10 restarts: MoMKMeans {t_mom:.2f}s, sklearn KMeans {t_km:.2f}s, "
          f"ratio (MoM/sklearn) {t_mom / t_km:.2f}")


if __name__ == "__main__":
    main()
