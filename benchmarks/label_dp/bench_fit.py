"""Benchmark: RR Fisher-scoring fit on 10^6 x 20 rows vs statsmodels' GLM (non-private case: same problem)."""

from __future__ import annotations

import time

import numpy as np
import statsmodels.api as sm

from icml25.label_dp import RRBinaryRegression


def main(n: int = 1_000_000, d: int = 20) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    beta = rng.normal(scale=0.3, size=d)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ beta - 0.5)))).astype(int)
    t = time.perf_counter()
    ours = RRBinaryRegression(p=1.0, q=1.0).fit(X, y)
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    ref = sm.GLM(y, sm.add_constant(X), family=sm.families.Binomial()).fit()
    t_sm = time.perf_counter() - t
    assert np.allclose(ours.params_, ref.params, atol=1e-6)
    print(f"n={n} d={d}: icml25 RRBinaryRegression {t_ours:.2f}s ({ours.n_iter_} Fisher steps), statsmodels GLM "
          f"{t_sm:.2f}s; ratio (ours/statsmodels) {t_ours / t_sm:.2f}; max |Δβ| "
          f"{np.max(np.abs(ours.params_ - ref.params)):.1e}")


if __name__ == "__main__":
    main()
