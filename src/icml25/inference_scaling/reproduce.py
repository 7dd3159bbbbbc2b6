"""Reproduction of 'A Simple Model of Inference Scaling Laws' (Levi, ICML 2025): claims of spec section 6."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core import Report, Scale, reproduction
from icml25.core.registry import reproduction_stub
from icml25.core.validation import check_int, check_positive, check_probability, check_real

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
    torch_threads: int = 1  # torch/BLAS threads, set by the runner (1 beat 2 on the shared 2-core machine)

    def __post_init__(self) -> None:
        for name in ("n_ks", "extrap_budget", "extrap_seeds", "ckpt_min_problems", "gen_tokens", "vae_digits",
                     "vae_epochs", "vae_latent", "vae_hidden", "vae_batch_size", "vae_attempts", "vae_k_max",
                     "vae_batches", "torch_threads"):
            check_int(getattr(self, name), name, low=2 if name in ("n_ks", "vae_digits", "vae_attempts") else 1)
        check_positive(self.slope_k_lo, "slope_k_lo")
        check_real(self.slope_k_hi, "slope_k_hi", low=self.slope_k_lo, low_open=True, high=10_000.0)
        if self.extrap_budget >= 10_000:
            raise ValueError(f"extrap_budget must be < 10000 (the attempts per problem), got {self.extrap_budget}")
        check_probability(self.ckpt_min_solved, "ckpt_min_solved")
        check_positive(self.vae_lr, "vae_lr")
        if self.vae_digits > 1797:
            raise ValueError(f"vae_digits must be <= 1797 (scikit-learn's digits), got {self.vae_digits}")
        if self.vae_k_max & (self.vae_k_max - 1) or self.vae_k_max < 2:
            raise ValueError(f"vae_k_max must be a power of two >= 2, got {self.vae_k_max}")
        if self.vae_k_max > self.vae_attempts:
            raise ValueError(f"vae_k_max must be <= vae_attempts ({self.vae_attempts}), got {self.vae_k_max}")
        for name, values in (("vae_temperatures", self.vae_temperatures), ("vae_rhos", self.vae_rhos)):
            if not isinstance(values, tuple) or not values:
                raise ValueError(f"{name} must be a non-empty tuple, got {values!r}")
        for t in self.vae_temperatures:
            check_positive(t, "vae_temperatures")
        for r in self.vae_rhos:
            check_real(r, "vae_rhos", low=0.0, high=1.0, high_open=True)
        check_probability(self.delta_quantile, "delta_quantile", open_low=True, open_high=True)

    @classmethod
    def quick(cls) -> Config:
        return cls(extrap_seeds=1, vae_digits=300, vae_epochs=30, vae_attempts=200, vae_k_max=32,
                   vae_temperatures=(1.0,), vae_rhos=(0.0, 0.6, 0.9), vae_batches=4)

    @classmethod
    def full(cls) -> Config:
        return cls()

    @classmethod
    def paper(cls) -> Config:
        """The paper's setting, as far as it is known (the paper text was not retrievable, spec §1): its LLM data are
        the shipped curves and counts (as full); its VAE sizes are not stated, so we take the full VAE and sample
        as far in k as the LLM curves go. CPU-feasible (see --dry-run)."""
        return cls(extrap_seeds=10,  # paper silent: 10 subsampling seeds (full: 5)
                   vae_attempts=10_000,  # paper silent: 10^4 single attempts per digit, as the LLM data (full: 1,000)
                   vae_k_max=1024,  # paper silent: coverage curves to k = 1024 (full: 256)
                   vae_batches=16)  # paper silent: 16 correlated batches per digit (full: 8)

    def plan(self) -> Any:
        """The dry-run plan (no data are read, torch is not imported)."""
        from ._plan import inference_scaling_plan

        return inference_scaling_plan(self)


def _strip(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]


def _run(config: Config, seed: int, stub: bool) -> Report:
    """The reproduction; ``stub`` replaces the Beta law by a plain power law in the quick-claim stages."""
    from scipy.stats import spearmanr

    from ._figures import add_figures
    from ._vae_study import vae_study

    report = Report(slug="inference_scaling", title=TITLE)
    ks = log_spaced_ks(10_000, config.n_ks)

    # ---- real LLM data: per-problem beta-binomial fits of 7 Pythia models on MATH
    data = load_llmonkeys_pythia_math()
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

    # ---- the paper's own fits: digitised Brown et al. MATH curves
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

    # ---- extrapolation from a small per-problem budget
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

    # ---- Pythia checkpoints: beta vs training compute
    ck_rows, ck_rho = checkpoint_fits(load_pythia_checkpoints(), config.ckpt_min_problems, config.ckpt_min_solved)
    report.add_table("checkpoint_fits", ck_rows)
    # fails if: degenerate checkpoint fits (almost nothing solved) are not filtered, or beta is not identified
    report.add_claim("ckpt_math", "beta grows with training compute 6ND (Spearman, MATH checkpoints)", None,
                     ck_rho["MATH"], ">=", 0.6, scale=Scale.FULL, kind="paper", aggregate="min",
                     reference_value=0.82, reference_source="spec calibration", note="the paper's outlook")
    report.add_claim("ckpt_gsm8k", "beta grows with training compute 6ND (Spearman, GSM8K checkpoints)", None,
                     ck_rho["GSM8K"], ">=", 0.4, scale=Scale.FULL, kind="paper", aggregate="min",
                     reference_value=0.64, reference_source="spec calibration", note="the paper's outlook")

    # ---- compute trade-off (no threshold)
    flops = np.logspace(9, 16, 29)
    comp_rows, comp_curves = compute_tradeoff(fits, config.gen_tokens, flops)
    report.add_table("best_model_per_budget", comp_rows)

    # ---- VAE: controlled generative-model check
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

    if stub:
        report.notes.append("STUB: the Beta law replaced by a plain power law 1 - pass@k = C k^-b in the quick-claim "
                            "stages (Pythia fits, digitised curves, VAE per-temperature prediction).")
    add_figures(report, fits, dig, ck_rows, flops, comp_curves, vs, ks)
    report.notes.append("Per-problem data: Large Language Monkeys (Brown et al. 2024) via Schaeffer et al. 2025; "
                        "the paper itself fits only aggregate curves, so the per-problem claims are our stronger "
                        "test of the same model. Thresholds from the project spec (section 6).")
    report.notes.append(f"VAE success threshold delta = {vs['delta']:.5f} (MSE), the {config.delta_quantile:.0%} "
                        "quantile of single-attempt errors at T = 1, fixed across T and rho.")
    return report


@reproduction(slug="inference_scaling", title="A Simple Model of Inference Scaling Laws", arxiv="2410.16377",
              extras=("torch", "stats", "plot"), config=Config)
def reproduce(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """Fit the Beta coverage law to real LLM data and to a VAE; report the claims of spec section 6."""
    return _run(config, seed, stub=False)


@reproduction_stub(slug="inference_scaling")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The reproduction with the paper's Beta law replaced by its naive baseline, a plain power law
    ``1 - pass@k = C k^-b`` fitted to each empirical curve (spec section 6's stub), in the quick-claim stages."""
    return _run(config, seed, stub=True)
