"""Reproduction of 'A Simple Model of Inference Scaling Laws' (Levi, ICML 2025): claims of spec section 6."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core import Report, Scale, reproduction

from ._experiments import checkpoint_fits, compute_tradeoff, digitized_fits, extrapolation, real_data_fits
from .datasets import (
    DIGITIZED_CURVES,
    load_digitized_curve,
    load_llmonkeys_pythia_math,
    load_pythia_checkpoints,
)
from .estimators import log_spaced_ks

TITLE = "A Simple Model of Inference Scaling Laws"


@dataclass(frozen=True)
class Config:
    n_ks: int = 41  # log-spaced k values in [1, 10^4] for curve comparisons (integers, duplicates dropped)
    slope_k_lo: float = 100.0  # lower end of the k range for the inference-loss slope
    slope_k_hi: float = 10_000.0  # upper end of the k range for the inference-loss slope
    extrap_budget: int = 1000  # attempts per problem kept for the extrapolation fit
    extrap_seeds: int = 5  # hypergeometric subsampling seeds for the extrapolation
    ckpt_min_problems: int = 100  # a checkpoint fit needs at least this many problems
    ckpt_min_solved: float = 0.25  # ... and this fraction of problems with >= 1 success
    gen_tokens: int = 256  # generated tokens per attempt for the FLOPs conversion
    vae_digits: int = 1797  # digits the VAE memorises (the "problems")
    vae_epochs: int = 60  # VAE training epochs
    vae_latent: int = 8  # VAE latent dimension
    vae_hidden: int = 128  # VAE hidden width
    vae_batch_size: int = 128  # VAE mini-batch size
    vae_lr: float = 1e-3  # Adam learning rate
    vae_attempts: int = 1000  # single attempts per digit (M) for the Beta fit
    vae_k_max: int = 256  # largest k of the VAE coverage curves (power of two); also the correlated batch size
    vae_temperatures: tuple[float, ...] = (0.5, 1.0, 2.0)  # latent temperatures T
    vae_rhos: tuple[float, ...] = (0.0, 0.3, 0.6, 0.9)  # shared-noise fractions for correlated attempts
    vae_batches: int = 8  # independent correlated batches per digit (S)
    delta_quantile: float = 0.3  # success threshold = this quantile of single-attempt MSE at T = 1
    torch_threads: int = 1  # torch CPU threads (1 was faster than 2 on the shared 2-core machine)

    @classmethod
    def quick(cls) -> Config:
        return cls(extrap_seeds=1, vae_digits=300, vae_epochs=30, vae_attempts=200, vae_k_max=32,
                   vae_temperatures=(1.0,), vae_rhos=(0.0, 0.6, 0.9), vae_batches=4)

    @classmethod
    def full(cls) -> Config:
        return cls()


def _strip(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]


@reproduction(slug="inference_scaling", title="A Simple Model of Inference Scaling Laws", arxiv="2410.16377",
              extras=("torch", "stats", "plot"), config=Config)
def reproduce(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """Fit the Beta coverage law to real LLM data and to a VAE; report the claims of spec section 6."""
    import torch
    from scipy.stats import spearmanr

    from ._figures import add_figures
    from ._vae_study import vae_study

    torch.set_num_threads(config.torch_threads)
    report = Report(slug="inference_scaling", title=TITLE)
    ks = log_spaced_ks(10_000, config.n_ks)

    # ---- real LLM data: per-problem beta-binomial fits of 7 Pythia models on MATH
    data = load_llmonkeys_pythia_math()
    fits = real_data_fits(data, ks, (config.slope_k_lo, config.slope_k_hi))
    report.add_table("pythia_math_fits", _strip(fits))
    report.add_claim("fit_mae", "Beta law describes LLM coverage: worst-model mean |pred - emp| over k in [1, 1e4]",
                     None, max(r["mae"] for r in fits), "<=", 0.02, note="7 Pythia models, MATH, 128 x 10^4 samples")
    report.add_claim("fit_max_err", "... and worst-model max |pred - emp|", None, max(r["max_err"] for r in fits),
                     "<=", 0.04)
    report.add_claim("vs_single_difficulty", "Beta law beats a single-difficulty model by >= 10x (worst model "
                     "MAE ratio)", None, max(r["ratio_to_single"] for r in fits), "<=", 0.1)
    rho_size = float(spearmanr([r["params"] for r in fits], [r["beta"] for r in fits])[0])
    report.add_claim("beta_vs_size", "Fitted exponent beta grows with model size (Spearman)", None, rho_size,
                     ">=", 0.9)
    report.add_claim("loss_slope", "Inference loss decays as k^-beta: worst |slope of log(1-pass@k), k in "
                     "[1e2, 1e4], + beta|", None, max(r["slope_plus_beta"] for r in fits), "<=", 0.04)

    # ---- the paper's own fits: digitised Brown et al. MATH curves
    curves = {name: load_digitized_curve(name) for name in DIGITIZED_CURVES}
    dig = digitized_fits(curves)
    report.add_table("digitized_curve_fits", _strip(dig))
    report.add_claim("curve_rmse", "Eq. 7 with ceiling A fits the Brown et al. MATH curves (worst RMSE)", None,
                     max(r["rmse"] for r in dig), "<=", 0.025, note="Gemma-2B, Llama-3-8B, Pythia-2.8B")
    for r in dig:
        report.add_claim(f"curve_beta[{r['model']}]", f"beta ~ 0.35 on MATH ({r['model']})", "~0.35", r["beta"],
                         "within", (0.2, 0.5))
        report.add_claim(f"curve_alpha[{r['model']}]", f"2 < alpha < 20 on MATH ({r['model']})", "2-20", r["alpha"],
                         "within", (2.0, 20.0))

    # ---- extrapolation from a small per-problem budget
    seeds = [seed * 1000 + s for s in range(config.extrap_seeds)]
    ext = extrapolation(data, config.extrap_budget, seeds, 10_000, ks)
    report.add_table("extrapolation", ext)
    large = [r for r in ext if r["params"] >= 400e6]
    small = [r for r in ext if r["params"] < 400e6]
    report.add_claim("extrap_large", f"pass@1e4 predicted from {config.extrap_budget} attempts (models >= 410M, "
                     "worst mean |err|)", None, max(r["mean_abs_err"] for r in large), "<=", 0.04, scale=Scale.FULL,
                     note=f"{config.extrap_seeds} subsampling seed(s)")
    report.add_claim("extrap_small", "... for 70M/160M (worst mean |err|)", None,
                     max(r["mean_abs_err"] for r in small), "<=", 0.08, scale=Scale.FULL)

    # ---- Pythia checkpoints: beta vs training compute
    ck_rows, ck_rho = checkpoint_fits(load_pythia_checkpoints(), config.ckpt_min_problems, config.ckpt_min_solved)
    report.add_table("checkpoint_fits", ck_rows)
    report.add_claim("ckpt_math", "beta grows with training compute 6ND (Spearman, MATH checkpoints)", None,
                     ck_rho["MATH"], ">=", 0.6, scale=Scale.FULL)
    report.add_claim("ckpt_gsm8k", "beta grows with training compute 6ND (Spearman, GSM8K checkpoints)", None,
                     ck_rho["GSM8K"], ">=", 0.4, scale=Scale.FULL)

    # ---- compute trade-off (no threshold)
    flops = np.logspace(9, 16, 29)
    comp_rows, comp_curves = compute_tradeoff(fits, config.gen_tokens, flops)
    report.add_table("best_model_per_budget", comp_rows)

    # ---- VAE: controlled generative-model check
    vs = vae_study(config, seed)
    report.add_table("vae_temperatures", vs["temps"])
    report.add_table("vae_correlated", vs["corr"])
    report.add_claim("vae_zi_mae", "Zero-inflated Beta law predicts VAE coverage (worst-T MAE, loose small-sample "
                     "check)", "in agreement", max(r["mae"] for r in vs["temps"]), "<=", 0.05)
    report.add_claim("vae_zi_mae_full", "Zero-inflated Beta law predicts VAE coverage at every T (worst MAE)",
                     "in agreement", max(r["mae"] for r in vs["temps"]), "<=", 0.03, scale=Scale.FULL)
    report.add_claim("vae_zi_max_full", "... and worst max |pred - emp|", None,
                     max(r["max_err"] for r in vs["temps"]), "<=", 0.05, scale=Scale.FULL)
    corr = vs["corr"]
    strong = [r for r in corr if r["rho"] >= 0.6]
    zero = [r for r in corr if r["rho"] == 0.0]
    over_key = f"iid_overestimate@{vs['k_over']}"
    if zero:
        report.add_claim("corr_iid_rho0", "Uncorrelated VAE attempts follow the iid prediction (MAE at rho = 0)",
                         None, zero[0]["mae_iid"], "<=", 0.03, scale=Scale.FULL)
    if strong:
        report.add_claim("corr_overestimate", f"Correlated attempts (rho >= 0.6): iid law over-estimates "
                         f"pass@{vs['k_over']} (min over rho)", None, min(r[over_key] for r in strong), ">=", 0.05,
                         scale=Scale.FULL)
        report.add_claim("corr_family", "A fitted correlated family halves the iid error (worst best-family/iid "
                         "MAE ratio, rho >= 0.6)", None, max(r["best_ratio"] for r in strong), "<=", 0.5,
                         scale=Scale.FULL)
    gammas = [r["gamma"] for r in corr]
    report.add_claim("corr_gamma_monotone", "Fitted power-family gamma decreases as rho grows", None,
                     bool(np.all(np.diff(gammas) < 0)), "is_true", None, scale=Scale.FULL,
                     note="gamma = " + ", ".join(f"{g:.3f}" for g in gammas))

    add_figures(report, fits, dig, ck_rows, flops, comp_curves, vs, ks)
    report.notes.append("Per-problem data: Large Language Monkeys (Brown et al. 2024) via Schaeffer et al. 2025; "
                        "the paper itself fits only aggregate curves, so the per-problem claims are our stronger "
                        "test of the same model. Thresholds from the project spec (section 6).")
    report.notes.append(f"VAE success threshold delta = {vs['delta']:.5f} (MSE), the {config.delta_quantile:.0%} "
                        "quantile of single-attempt errors at T = 1, fixed across T and rho.")
    return report
