"""The stages of the reproduction (spec section 6), each with the claims it supports: per-problem Beta-law fits of
the Pythia models, the digitised Brown et al. curves, extrapolation, checkpoints, the compute trade-off and the VAE
check (independent and correlated attempts).

``stub`` (where a stage takes it): the Beta law replaced by a plain power law ``1 - pass@k = C k^-b``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core import Report, Scale

from ..data import DIGITIZED_CURVES, load_digitized_curve, load_pythia_checkpoints
from .studies import checkpoint_fits, compute_tradeoff, digitized_fits, extrapolation, real_data_fits

if TYPE_CHECKING:
    from ..reproduce import Config

TITLE = "A Simple Model of Inference Scaling Laws"


def _strip(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]


def new_report() -> Report:
    """The empty report."""
    return Report(slug="inference_scaling", title=TITLE)


def run_pythia_fits(report: Report, config: Config, data: dict[str, dict[str, Any]], ks: np.ndarray,
                    stub: bool) -> list[dict[str, Any]]:
    """Per-problem beta-binomial fits of the 7 Pythia models on MATH; claims fit_mae ... loss_slope."""
    from scipy.stats import spearmanr

    fits = real_data_fits(data, ks, (config.slope_k_lo, config.slope_k_hi), stub=stub)
    report.add_table("pythia_math_fits", _strip(fits))
    # fails if: the law ignores the spread of difficulties (a plain power law 1 - pass@k = C k^-b misses the
    # crossover at k ~ alpha: worst MAE 0.06), or the beta-binomial likelihood drops the c_i = 0 problems
    report.add_claim("fit_mae", "Beta law describes LLM coverage: worst-model mean |pred - emp| over k in [1, 1e4]",
                     None, max(r["mae"] for r in fits), "<=", 0.02, kind="paper", aggregate="max", headline=True,
                     reference_value=0.010, reference_source="spec calibration (0.005-0.010 per model)",
                     note="7 Pythia models, MATH, 128 x 10^4 samples per model (per-problem fits: a stronger test "
                          "than the paper's aggregate-curve fits)")
    # fails if: as fit_mae, at the worst k (a plain power law errs by 0.44 at small k)
    report.add_claim("fit_max_err", "... and worst-model max |pred - emp|", None, max(r["max_err"] for r in fits),
                     "<=", 0.04, kind="paper", aggregate="max", reference_value=0.028,
                     reference_source="spec calibration")
    # fails if: the difficulty distribution collapses to one value (ratio 1) or its tail is mis-shaped
    report.add_claim("vs_single_difficulty", "Beta law beats a single-difficulty model by >= 10x (worst model "
                     "MAE ratio)", None, max(r["ratio_to_single"] for r in fits), "<=", 0.1, kind="paper",
                     aggregate="max")
    rho_size = float(spearmanr([r["params"] for r in fits], [r["beta"] for r in fits])[0])
    # fails if: beta is not identified by the fit (e.g. a boundary solution) and the sizes are mis-ordered
    report.add_claim("beta_vs_size", "Fitted exponent beta grows with model size (Spearman)", None, rho_size,
                     ">=", 0.9, kind="paper", requires=["fit_mae"], aggregate="min",
                     note="the paper's outlook (beta as a function of model size); beta only means something "
                          "when the law fits (fit_mae)")
    # fails if: the tail exponent of the fitted law is not the empirical one (e.g. alpha and beta swapped, or
    # p taken as the success instead of the failure probability)
    report.add_claim("loss_slope", "Inference loss decays as k^-beta: worst |slope of log(1-pass@k), k in "
                     "[1e2, 1e4], + beta|", None, max(r["slope_plus_beta"] for r in fits), "<=", 0.04,
                     kind="paper", requires=["fit_mae"], aggregate="max", headline=True,
                     note="Eq. 8 (inference loss power law)")
    return fits


def run_digitized_fits(report: Report, stub: bool) -> list[dict[str, Any]]:
    """The paper's own fits: Eq. 7 on the digitised Brown et al. MATH curves; claims curve_rmse, curve_beta/alpha."""
    curves = {name: load_digitized_curve(name) for name in DIGITIZED_CURVES}
    dig = digitized_fits(curves, stub=stub)
    report.add_table("digitized_curve_fits", _strip(dig))
    # fails if: Eq. 7 is mis-implemented (e.g. no ceiling A, or B(alpha+k, beta) in place of the ratio of Beta
    # functions) or the least squares stops at a poor start
    report.add_claim("curve_rmse", "Eq. 7 with ceiling A fits the Brown et al. MATH curves (worst RMSE)", None,
                     max(r["rmse"] for r in dig), "<=", 0.025, kind="paper", aggregate="max", headline=True,
                     note="Gemma-2B, Llama-3-8B, Pythia-2.8B (digitised)")
    for r in dig:
        # fails if: the parametrisation is swapped (p as success probability: beta and alpha exchange roles)
        report.add_claim(f"curve_beta[{r['model']}]", f"beta ~ 0.35 on MATH ({r['model']})", 0.35, r["beta"],
                         "within", (0.2, 0.5), kind="paper", source="Sec. 3.2.1 text ('beta ~ 0.35')",
                         requires=["curve_rmse"])
        report.add_claim(f"curve_alpha[{r['model']}]", f"2 < alpha < 20 on MATH ({r['model']})", "2-20",
                         r["alpha"], "within", (2.0, 20.0), kind="paper",
                         source="Sec. 3.2.1 text ('2 < alpha < 20')", requires=["curve_rmse"])
    return dig


def run_extrapolation(report: Report, config: Config, data: dict[str, dict[str, Any]], ks: np.ndarray,
                      seed: int) -> None:
    """pass@1e4 predicted from a small per-problem budget; claims extrap_large, extrap_small."""
    seeds = [seed * 1000 + s for s in range(config.extrap_seeds)]
    ext = extrapolation(data, config.extrap_budget, seeds, 10_000, ks)
    report.add_table("extrapolation", ext)
    large = [r for r in ext if r["params"] >= 400e6]
    small = [r for r in ext if r["params"] < 400e6]
    # fails if: the fit over-weights the sampled range (a curve fit of Brown's law errs by more) or the
    # subsampling is not hypergeometric (attempts reused)
    report.add_claim("extrap_large", f"pass@1e4 predicted from {config.extrap_budget} attempts (models >= 410M, "
                     "worst mean |err|)", None, max(r["mean_abs_err"] for r in large), "<=", 0.04, scale=Scale.FULL,
                     kind="paper", aggregate="max", note=f"{config.extrap_seeds} subsampling seed(s); spec threshold")
    report.add_claim("extrap_small", "... for 70M/160M (worst mean |err|)", None,
                     max(r["mean_abs_err"] for r in small), "<=", 0.08, scale=Scale.FULL, kind="paper",
                     aggregate="max")


def run_checkpoint_fits(report: Report, config: Config) -> list[dict[str, Any]]:
    """Pythia checkpoints: beta against training compute; claims ckpt_math, ckpt_gsm8k."""
    ck_rows, ck_rho = checkpoint_fits(load_pythia_checkpoints(), config.ckpt_min_problems, config.ckpt_min_solved)
    report.add_table("checkpoint_fits", ck_rows)
    # fails if: degenerate checkpoint fits (almost nothing solved) are not filtered, or beta is not identified
    report.add_claim("ckpt_math", "beta grows with training compute 6ND (Spearman, MATH checkpoints)", None,
                     ck_rho["MATH"], ">=", 0.6, scale=Scale.FULL, kind="paper", aggregate="min",
                     reference_value=0.82, reference_source="spec calibration", note="the paper's outlook")
    report.add_claim("ckpt_gsm8k", "beta grows with training compute 6ND (Spearman, GSM8K checkpoints)", None,
                     ck_rho["GSM8K"], ">=", 0.4, scale=Scale.FULL, kind="paper", aggregate="min",
                     reference_value=0.64, reference_source="spec calibration", note="the paper's outlook")
    return ck_rows


def run_compute_tradeoff(report: Report, config: Config, fits: list[dict[str, Any]]
                         ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The best Pythia model per FLOP budget (a table, no claim); returns the budgets and coverage curves."""
    flops = np.logspace(9, 16, 29)
    comp_rows, comp_curves = compute_tradeoff(fits, config.gen_tokens, flops)
    report.add_table("best_model_per_budget", comp_rows)
    return flops, comp_curves


def run_vae(report: Report, config: Config, seed: int, stub: bool) -> dict[str, Any]:
    """The VAE check: train, fit the zero-inflated Beta law per temperature; claims vae_zi_*."""
    from .vae_study import vae_study

    vs = vae_study(config, seed, stub=stub)
    report.add_table("vae_temperatures", vs["temps"])
    report.add_table("vae_correlated", vs["corr"])
    # fails if: the ceiling A is left out (digits never reconstructed: MAE 0.05-0.06 at full size), or the
    # attempts are not independent given the digit
    report.add_claim("vae_zi_mae", "Zero-inflated Beta law predicts VAE coverage (worst-T MAE, loose small-sample "
                     "check)", None, max(r["mae"] for r in vs["temps"]), "<=", 0.05, kind="paper", aggregate="max",
                     no_stub_reason="at quick size (k <= 32, fitted on 200 attempts per digit) a plain power law "
                     "fitted to the same counts also predicts within 0.05 (measured 0.018 vs 0.010); the ceiling A "
                     "that separates them matters at the full size (k <= 256, vae_zi_mae_full)",
                     note="the paper: predictions 'in agreement with the empirical coverage curves' (abstract); "
                          "spec threshold")
    report.add_claim("vae_zi_mae_full", "Zero-inflated Beta law predicts VAE coverage at every T (worst MAE)",
                     None, max(r["mae"] for r in vs["temps"]), "<=", 0.03, scale=Scale.FULL, kind="paper",
                     aggregate="max", headline=True)
    report.add_claim("vae_zi_max_full", "... and worst max |pred - emp|", None,
                     max(r["max_err"] for r in vs["temps"]), "<=", 0.05, scale=Scale.FULL, kind="paper",
                     aggregate="max")
    return vs


def add_correlation_claims(report: Report, vs: dict[str, Any]) -> None:
    """Correlated VAE attempts: claims corr_iid_rho0, corr_overestimate, corr_family, corr_gamma_monotone."""
    corr = vs["corr"]
    strong = [r for r in corr if r["rho"] >= 0.6]
    zero = [r for r in corr if r["rho"] == 0.0]
    over_key = f"iid_overestimate@{vs['k_over']}"
    if zero:
        # fails if: the shared noise leaks into rho = 0 batches or the batch estimator is biased
        report.add_claim("corr_iid_rho0", "Uncorrelated VAE attempts follow the iid prediction (MAE at rho = 0)",
                         None, zero[0]["mae_iid"], "<=", 0.03, scale=Scale.FULL, kind="mechanism", aggregate="max")
    if strong:
        report.add_claim("corr_overestimate", f"Correlated attempts (rho >= 0.6): iid law over-estimates "
                         f"pass@{vs['k_over']} (min over rho)", None, min(r[over_key] for r in strong), ">=", 0.05,
                         scale=Scale.FULL, kind="paper", aggregate="min")
        report.add_claim("corr_family", "A fitted correlated family halves the iid error (worst best-family/iid "
                         "MAE ratio, rho >= 0.6)", None, max(r["best_ratio"] for r in strong), "<=", 0.5,
                         scale=Scale.FULL, kind="paper", aggregate="max")
    gammas = [r["gamma"] for r in corr]
    report.add_claim("corr_gamma_monotone", "Fitted power-family gamma decreases as rho grows", None,
                     bool(np.all(np.diff(gammas) < 0)), "is_true", None, scale=Scale.FULL, kind="mechanism",
                     aggregate="all",
                     note="gamma = " + ", ".join(f"{g:.3f}" for g in gammas))


def add_figures_and_notes(report: Report, config: Config, stub: bool, ks: np.ndarray, fits: list[dict[str, Any]],
                          dig: list[dict[str, Any]], ck_rows: list[dict[str, Any]], flops: np.ndarray,
                          comp_curves: dict[str, np.ndarray], vs: dict[str, Any]) -> None:
    """The figures and the closing notes (data sources, the VAE success threshold; the stub's note)."""
    from .figures import add_figures

    if stub:
        report.notes.append("STUB: the Beta law replaced by a plain power law 1 - pass@k = C k^-b in the quick-claim "
                            "stages (Pythia fits, digitised curves, VAE per-temperature prediction).")
    add_figures(report, fits, dig, ck_rows, flops, comp_curves, vs, ks)
    report.notes.append("Per-problem data: Large Language Monkeys (Brown et al. 2024) via Schaeffer et al. 2025; "
                        "the paper itself fits only aggregate curves, so the per-problem claims are our stronger "
                        "test of the same model. Thresholds from the project spec (section 6).")
    report.notes.append(f"VAE success threshold delta = {vs['delta']:.5f} (MSE), the {config.delta_quantile:.0%} "
                        "quantile of single-attempt errors at T = 1, fixed across T and rho.")
