"""The dry-run plan of the inference-scaling reproduction (``icml25 reproduce inference_scaling --dry-run``)."""

from __future__ import annotations

from typing import Any

from icml25.core.plan import Needs, Plan, UnitCost, closest_preset

#: CPU seconds per digit and epoch of VAE training: spec §7, "60 epochs ~ 60 s" for the 1,797 digits
VAE_TRAIN_S = 60.0 / (1797 * 60)
#: CPU seconds per single attempt (encode, sample, decode, error) and per attempt of a correlated batch, and the
#: fixed fits (real-data, digitised, checkpoint fits) and one extrapolation seed: a timing snippet on this
#: 2-core machine (1 torch thread, process CPU time)
ATTEMPT_S = 3.9e-6
CORR_ATTEMPT_S = 1.7e-6
FIXED_FITS_S = 2.2
EXTRAP_SEED_S = 0.16
MEASURED = "2-core CPU, 1 thread, process CPU time of a timing snippet of the real code"


def inference_scaling_plan(cfg: Any) -> Plan:
    """The plan of ``cfg`` (a :class:`icml25.inference_scaling.reproduce.Config`)."""
    temps = len(cfg.vae_temperatures) + (0 if 1.0 in cfg.vae_temperatures else 1)
    attempts = cfg.vae_digits * cfg.vae_attempts * temps
    corr = cfg.vae_digits * cfg.vae_k_max * cfg.vae_batches * len(cfg.vae_rhos)
    costs = [UnitCost("real-data, digitised-curve and checkpoint fits", "run", 1, FIXED_FITS_S, MEASURED),
             UnitCost("extrapolation from a subsampled budget", "subsampling seed", cfg.extrap_seeds, EXTRAP_SEED_S,
                      MEASURED),
             UnitCost("VAE training", "digit x epoch", cfg.vae_digits * cfg.vae_epochs, VAE_TRAIN_S,
                      "spec §7 timing (60 epochs of 1,797 digits ~ 60 s on this 2-core machine)"),
             UnitCost("VAE single attempts (per temperature)", "attempt", attempts, ATTEMPT_S, MEASURED),
             UnitCost("VAE correlated attempts (per rho)", "attempt", corr, CORR_ATTEMPT_S, MEASURED)]
    mem_gb = 4.0 * (attempts / temps + corr / max(len(cfg.vae_rhos), 1)) * 1e-9 * 3
    return Plan(slug="inference_scaling", scale=closest_preset(cfg), runs=1,
                stages=["per-problem beta-binomial fits of 7 Pythia models on MATH (shipped counts)",
                        "Eq. 7 fits of the digitised Brown et al. curves",
                        f"extrapolation of pass@1e4 from {cfg.extrap_budget} attempts ({cfg.extrap_seeds} seeds); "
                        "Pythia checkpoint fits; compute trade-off",
                        f"VAE on {cfg.vae_digits} digits ({cfg.vae_epochs} epochs); {cfg.vae_attempts} attempts per "
                        f"digit at T in {list(cfg.vae_temperatures)}; correlated batches of {cfg.vae_k_max} at rho in "
                        f"{list(cfg.vae_rhos)}",
                        "claims, tables, figures"],
                models=[f"VAE 64-{cfg.vae_hidden}-{cfg.vae_latent} (scikit-learn digits)"],
                datasets=["Large Language Monkeys Pythia MATH counts (shipped)", "Pythia checkpoint counts (shipped)",
                          "digitised Brown et al. MATH curves (shipped)", "scikit-learn 8x8 digits (in its wheel)"],
                needs=Needs(cpu_cores=2, ram_gb=max(2.0, round(mem_gb + 1.0, 1)), disk_gb=0.1),
                costs=costs,
                notes=["the paper's VAE data set and sizes were not retrievable (spec §5): the VAE memorises "
                       "scikit-learn's digits (no download)"])

