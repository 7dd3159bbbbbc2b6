"""Benchmark: fit all 7 Pythia per-problem laws and compute full pass@k curves for k in [1, 10^4].

Peers measured in the same run:
- scipy ``curve_fit`` of the Brown et al. exp(a k^b) law on the same empirical curves (the issue's reference),
- the HumanEval reference estimator ``1 - prod(1 - k / arange(n - c + 1, n + 1))`` looped per problem and k,
- beta-binomial MLE with ``scipy.stats.betabinom.logpmf`` and Nelder-Mead.

Run: ``.venv/bin/python benchmarks/inference_scaling/bench_fit_and_curves.py``
"""

from __future__ import annotations

import time

import numpy as np
from scipy import optimize, stats

from icml25.inference_scaling import coverage_curve, fit_counts, load_llmonkeys_pythia_math, log_spaced_ks


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def ours(data: dict, k_all: np.ndarray) -> dict:
    res = {}
    for name, d in data.items():
        emp = coverage_curve(d["n"], d["c"], k_all)
        law = fit_counts(d["n"], d["c"]).law
        res[name] = (emp, law.pass_at_k(k_all))
    return res


def brown_curve_fit(data: dict, k_all: np.ndarray, ks40: np.ndarray) -> dict:
    res = {}
    for name, d in data.items():
        emp = coverage_curve(d["n"], d["c"], k_all)
        y = emp[ks40 - 1]

        def f(k, a, b):
            return a * k**b  # log coverage = a k^b (Brown et al. Eq. 3)

        (a, b), _ = optimize.curve_fit(f, ks40.astype(float), np.log(y), p0=(-3.0, -0.3), maxfev=20_000)
        res[name] = (emp, np.exp(a * k_all**b))
    return res


def humaneval_estimator(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def scipy_betabinom_mle(n: np.ndarray, c: np.ndarray) -> tuple[float, float]:
    def nll(t):
        return -stats.betabinom.logpmf(n - c, n, np.exp(t[0]), np.exp(t[1])).sum()

    r = optimize.minimize(nll, [1.0, -1.0], method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-10})
    return float(np.exp(r.x[0])), float(np.exp(r.x[1]))


def main() -> None:
    data = load_llmonkeys_pythia_math()
    k_all = np.arange(1, 10_001)
    ks40 = log_spaced_ks(10_000, 41)
    t_ours, res = timed(lambda: ours(data, k_all))
    t_brown, res_b = timed(lambda: brown_curve_fit(data, k_all, ks40))
    mae_ours = np.mean([np.mean(np.abs(p - e)) for e, p in res.values()])
    mae_brown = np.mean([np.mean(np.abs(p - e)) for e, p in res_b.values()])
    print(f"7 models: Beta-law fit + empirical and fitted pass@k for k = 1..10^4: {t_ours:.3f} s "
          f"(mean |pred - emp| {mae_ours:.4f})")
    print(f"scipy curve_fit of Brown exp(a k^b), same curves:            {t_brown:.3f} s "
          f"(mean |pred - emp| {mae_brown:.4f})")
    print(f"ratio ours / Brown curve_fit: {t_ours / t_brown:.2f}")
    curves = {name: coverage_curve(d["n"], d["c"], ks40) for name, d in data.items()}
    t_fit_only, _ = timed(lambda: [fit_counts(d["n"], d["c"]) for d in data.values()])
    t_cf_only, _ = timed(lambda: [optimize.curve_fit(lambda k, a, b: a * k**b, ks40.astype(float), np.log(y),
                                                     p0=(-3.0, -0.3), maxfev=20_000) for y in curves.values()])
    print(f"fitting only (7 models): beta-binomial MLE {t_fit_only * 1e3:.1f} ms vs Brown curve_fit on 41 points "
          f"{t_cf_only * 1e3:.1f} ms (ratio {t_fit_only / t_cf_only:.1f})")

    d = data["Pythia 1B"]
    ks = ks40
    t_vec, v = timed(lambda: coverage_curve(d["n"], d["c"], ks))
    t_loop, ref = timed(lambda: np.array([np.mean([humaneval_estimator(int(n), int(c), int(k))
                                                   for n, c in zip(d["n"], d["c"])]) for k in ks]), repeat=1)
    print(f"pass@k, 128 problems x {ks.size} k: vectorised {t_vec * 1e3:.2f} ms vs HumanEval loop "
          f"{t_loop * 1e3:.1f} ms (speed-up {t_loop / t_vec:.0f}x, max diff {np.max(np.abs(v - ref)):.1e})")

    t_fit, fit = timed(lambda: fit_counts(d["n"], d["c"]))
    t_sp, (a_sp, b_sp) = timed(lambda: scipy_betabinom_mle(d["n"], d["c"]), repeat=1)
    print(f"beta-binomial MLE (Pythia 1B): ours {t_fit * 1e3:.1f} ms vs scipy.stats.betabinom + Nelder-Mead "
          f"{t_sp * 1e3:.1f} ms (ratio {t_fit / t_sp:.2f}); alpha {fit.alpha:.3f} vs {a_sp:.3f}, "
          f"beta {fit.beta:.4f} vs {b_sp:.4f}")


if __name__ == "__main__":
    main()
