"""The real-data studies of the reproduction, computation only (Pythia fits, digitised curves, extrapolation,
checkpoints, compute trade-off); the claims are in ``stages.py``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from icml25.core.progress import progress

from ..baselines import ExpPowerLaw, SingleDifficulty
from ..compute import AttemptCost, best_model_for_budget, coverage_at_compute
from ..estimators import coverage_curve, subsample_counts
from ..fitting import FitError, fit_counts, fit_curve


def loss_slope(ks: np.ndarray, coverage: np.ndarray, k_lo: float, k_hi: float) -> float:
    """Least-squares slope of ``log(1 - coverage)`` against ``log k`` for ``k_lo <= k <= k_hi``."""
    sel = (ks >= k_lo) & (ks <= k_hi) & (coverage < 1)
    return float(np.polyfit(np.log(ks[sel]), np.log1p(-coverage[sel]), 1)[0])


class PlainPowerLaw:
    """The reproduction's stub law (the naive baseline of spec 6): ``1 - pass@k = C k^(-b)``, fitted by least
    squares in log-log on an empirical curve. No difficulty distribution, so no crossover at ``k ~ alpha`` and no
    ceiling ``A``; ``b`` plays the role of ``beta`` and there is no ``alpha`` (NaN)."""

    alpha = float("nan")
    A = 1.0

    def fit(self, ks: np.ndarray, coverage: np.ndarray) -> PlainPowerLaw:
        k, y = np.asarray(ks, dtype=float), np.asarray(coverage, dtype=float)
        sel = y < 1
        slope, log_c = np.polyfit(np.log(k[sel]), np.log1p(-y[sel]), 1)
        self.beta, self.C = float(-slope), float(np.exp(log_c))
        return self

    def pass_at_k(self, ks: Any) -> np.ndarray:
        return np.clip(1.0 - self.C * np.asarray(ks, dtype=float) ** (-self.beta), 0.0, 1.0)


def real_data_fits(data: dict[str, dict[str, Any]], ks: np.ndarray, slope_range: tuple[float, float],
                   stub: bool = False) -> list[dict[str, Any]]:
    """Per-model beta-binomial fit vs the empirical curve and the single-difficulty baseline (spec 6 quick).

    ``stub``: fit :class:`PlainPowerLaw` to the empirical curve instead (the reproduction's stub).
    """
    rows = []
    for name, d in progress(list(data.items()), "fitting Pythia models"):
        n, c = d["n"], d["c"]
        emp = coverage_curve(n, c, ks)
        if stub:
            law = PlainPowerLaw().fit(ks, emp)
            nan = float("nan")
            fit = SimpleNamespace(law=law, alpha=nan, beta=law.beta, zero_fraction=nan, se={"alpha": nan, "beta": nan})
        else:
            fit = fit_counts(n, c)
        pred = fit.law.pass_at_k(ks)
        single = SingleDifficulty().fit_counts(n, c).predict(ks)
        mae = float(np.mean(np.abs(pred - emp)))
        mae_single = float(np.mean(np.abs(single - emp)))
        rows.append({"model": name, "params": d["params"], "alpha": fit.alpha, "alpha_se": fit.se["alpha"],
                     "beta": fit.beta, "beta_se": fit.se["beta"], "zero_frac": fit.zero_fraction,
                     "pass@1": float(emp[0]), "pass@max": float(emp[-1]), "mae": mae,
                     "max_err": float(np.max(np.abs(pred - emp))), "mae_single": mae_single,
                     "ratio_to_single": mae / mae_single,
                     "loss_slope": loss_slope(ks, emp, *slope_range),
                     "_emp": emp, "_pred": pred, "_law": fit.law})
        rows[-1]["slope_plus_beta"] = abs(rows[-1]["loss_slope"] + fit.beta)
    return rows


def digitized_fits(curves: dict[str, tuple[np.ndarray, np.ndarray]], stub: bool = False) -> list[dict[str, Any]]:
    """Least-squares fits of Eq. 7 (A free and A = 1) and of Brown's exp(a k^b) to the digitised curves.

    ``stub``: the "A free" fit is replaced by :class:`PlainPowerLaw` (the reproduction's stub).
    """
    rows = []
    for name, (k, y) in curves.items():
        if stub:
            law = PlainPowerLaw().fit(k, y)
            free = SimpleNamespace(law=law, rmse=float(np.sqrt(np.mean((law.pass_at_k(k) - y) ** 2))))
        else:
            free = fit_curve(k, y, fit_A=True)
        one = fit_curve(k, y, fit_A=False)
        brown = ExpPowerLaw().fit(k, y)
        brown_rmse = float(np.sqrt(np.mean((brown.predict(k) - y) ** 2)))
        rows.append({"model": name, "alpha": free.law.alpha, "beta": free.law.beta, "A": free.law.A,
                     "rmse": free.rmse, "alpha_A1": one.law.alpha, "beta_A1": one.law.beta, "rmse_A1": one.rmse,
                     "brown_a": brown.a_, "brown_b": brown.b_, "brown_rmse": brown_rmse,
                     "_k": k, "_y": y, "_law": free.law, "_brown": brown})
    return rows


def extrapolation(data: dict[str, dict[str, Any]], budget: int, seeds: list[int], k_target: int,
                  ks: np.ndarray) -> list[dict[str, Any]]:
    """Fit on ``budget`` subsampled attempts per problem and predict pass@k_target (spec 6 full)."""
    rows = []
    for name, d in progress(list(data.items()), "extrapolating"):
        n, c = d["n"], d["c"]
        emp_target = float(coverage_curve(n, c, [k_target])[0])
        errs, brown_errs = [], []
        fit_ks = ks[ks <= budget]
        for s in seeds:
            n_s, c_s = subsample_counts(n, c, budget, np.random.default_rng(s))
            if not np.any(c_s > 0):
                errs.append(-emp_target)
                continue
            law = fit_counts(n_s, c_s).law
            errs.append(float(law.pass_at_k(k_target)) - emp_target)
            brown = ExpPowerLaw().fit(fit_ks, coverage_curve(n_s, c_s, fit_ks))
            brown_errs.append(float(brown.predict([k_target])[0]) - emp_target)
        rows.append({"model": name, "params": d["params"], "budget": budget, "emp_target": emp_target,
                     "mean_err": float(np.mean(errs)), "mean_abs_err": float(np.mean(np.abs(errs))),
                     "brown_mean_abs_err": float(np.mean(np.abs(brown_errs))) if brown_errs else float("nan")})
    return rows


def checkpoint_fits(checkpoints: list[dict[str, Any]], min_problems: int, min_solved_frac: float
                    ) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Beta-binomial fit per (checkpoint, benchmark) with enough solved problems; Spearman(beta, 6ND)."""
    rows = []
    for ck in progress(checkpoints, "fitting checkpoints"):
        n, c = ck["n"], ck["c"]
        solved = float(np.mean(c > 0))
        if n.size < min_problems or solved < min_solved_frac:
            continue
        try:
            fit = fit_counts(n, c)
        except FitError as exc:
            rows.append({"benchmark": ck["benchmark"], "checkpoint": ck["checkpoint"], "status": str(exc)[:60]})
            continue
        rows.append({"benchmark": ck["benchmark"], "checkpoint": ck["checkpoint"], "params": ck["params"],
                     "train_tokens": ck["train_tokens"], "compute_6ND": 6.0 * ck["params"] * ck["train_tokens"],
                     "solved_frac": solved, "alpha": fit.alpha, "beta": fit.beta, "beta_se": fit.se["beta"],
                     "status": "ok"})
    from scipy.stats import spearmanr  # lazy: scipy.stats must not load at import time

    rho = {}
    for bench in ("MATH", "GSM8K"):
        ok = [r for r in rows if r["benchmark"] == bench and r["status"] == "ok"]
        rho[bench] = float(spearmanr([r["compute_6ND"] for r in ok], [r["beta"] for r in ok])[0]) if len(ok) > 2 \
            else float("nan")
    return rows, rho


def compute_tradeoff(fits: list[dict[str, Any]], gen_tokens: int, flops_grid: np.ndarray
                     ) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """Coverage per FLOP budget for each fitted Pythia law and the best model per budget (spec 6 full)."""
    models = {r["model"]: (r["_law"], AttemptCost(r["params"], gen_tokens)) for r in fits}
    table = best_model_for_budget(models, flops_grid)
    curves = {name: coverage_at_compute(law, cost, flops_grid) for name, (law, cost) in models.items()}
    short = [{"flops": r["flops"], "best": r["best"], "best_coverage": r["best_coverage"]} for r in table]
    return short, curves
