"""The VAE study of the reproduction, computation only (needs torch and scikit-learn); the claims are in
``stages.py``."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.progress import progress

from ..correlation import PowerCorrelation, RepeatCorrelation
from ..data import load_digit_images
from ..estimators import coverage_curve, pass_at_k
from ..fitting import fit_correlation, fit_counts


def batch_coverage(success: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Empirical coverage from batches of exchangeable attempts ``success[sample, batch, attempt]``.

    Each batch's unbiased pass@k (its own ``n`` = batch size) is averaged over batches and samples.
    """
    n_s, n_b, kb = success.shape
    c = success.sum(axis=2).reshape(-1)
    return pass_at_k(kb, c, ks).reshape(n_s, n_b, -1).mean(axis=(0, 1))


def vae_study(cfg: Any, seed: int, stub: bool = False) -> dict[str, Any]:
    """Train the VAE, fit the (zero-inflated) Beta law per temperature, then test correlated attempts.

    ``stub``: the per-temperature prediction comes from a plain power law fitted to the empirical single-attempt
    coverage curve (k up to the attempts per digit) instead of the zero-inflated Beta law (the reproduction's stub).
    """
    from ..vae import attempt_errors, train_vae

    X = load_digit_images(cfg.vae_digits, seed)
    vae = train_vae(X, latent=cfg.vae_latent, hidden=cfg.vae_hidden, epochs=cfg.vae_epochs,
                    batch_size=cfg.vae_batch_size, lr=cfg.vae_lr, seed=seed)
    ks = 2 ** np.arange(int(np.log2(cfg.vae_k_max)) + 1)
    errs_t1 = attempt_errors(vae, X, 1.0, cfg.vae_attempts, seed=seed + 1)
    delta = float(np.quantile(errs_t1, cfg.delta_quantile))  # fixed once, at T = 1 (spec 8)
    temp_rows, curves = [], {}
    law_t1 = None
    for j, T in enumerate(progress(list(cfg.vae_temperatures), "VAE temperatures")):
        errs = errs_t1 if T == 1.0 else attempt_errors(vae, X, T, cfg.vae_attempts, seed=seed + 10 + j)
        c = (errs[:, 0, :] < delta).sum(axis=1)
        n = np.full_like(c, cfg.vae_attempts)
        emp = coverage_curve(n, c, ks)
        zi = fit_counts(n, c, fit_A=True)
        plain = fit_counts(n, c, fit_A=False)
        pred, pred_plain = zi.law.pass_at_k(ks), plain.law.pass_at_k(ks)
        if stub:
            from ..estimators import log_spaced_ks
            from .studies import PlainPowerLaw

            ks_fit = log_spaced_ks(cfg.vae_attempts, 41)
            pred = PlainPowerLaw().fit(ks_fit, coverage_curve(n, c, ks_fit)).pass_at_k(ks)
        if T == 1.0:
            law_t1 = zi.law
        temp_rows.append({"T": T, "alpha": zi.alpha, "beta": zi.beta, "A": zi.A, "never_solved": float(np.mean(c == 0)),
                          "mae": float(np.mean(np.abs(pred - emp))), "max_err": float(np.max(np.abs(pred - emp))),
                          "mae_A1": float(np.mean(np.abs(pred_plain - emp))), "alpha_A1": plain.alpha,
                          "beta_A1": plain.beta, "delta_aic": plain.aic - zi.aic})
        curves[T] = (emp, pred, pred_plain)
    if law_t1 is None:  # T = 1 not requested: the correlated study still uses the T = 1 marginal
        c = (errs_t1[:, 0, :] < delta).sum(axis=1)
        law_t1 = fit_counts(np.full_like(c, cfg.vae_attempts), c, fit_A=True).law
    corr_rows, corr_curves = [], {}
    k_over = min(64, int(cfg.vae_k_max))
    iid_pred = law_t1.pass_at_k(ks)
    for j, rho in enumerate(progress(list(cfg.vae_rhos), "VAE correlated attempts")):
        errs = attempt_errors(vae, X, 1.0, int(cfg.vae_k_max), rho=rho, n_batches=cfg.vae_batches,
                              seed=seed + 100 + j)
        emp = batch_coverage(errs < delta, ks)
        power = fit_correlation(law_t1, ks, emp, PowerCorrelation())
        repeat = fit_correlation(law_t1, ks, emp, RepeatCorrelation())
        mae_iid = float(np.mean(np.abs(iid_pred - emp)))
        mae_pow = float(np.mean(np.abs(power.law.pass_at_k(ks) - emp)))
        mae_rep = float(np.mean(np.abs(repeat.law.pass_at_k(ks) - emp)))
        i_over = int(np.searchsorted(ks, k_over))
        corr_rows.append({"rho": rho, "mae_iid": mae_iid, "gamma": power.law.correlation.value, "mae_power": mae_pow,
                          "rho_hat_repeat": repeat.law.correlation.value, "mae_repeat": mae_rep,
                          "best_family": "power" if mae_pow <= mae_rep else "repeat",
                          "best_ratio": min(mae_pow, mae_rep) / mae_iid if mae_iid > 0 else float("nan"),
                          f"iid_overestimate@{k_over}": float(iid_pred[i_over] - emp[i_over])})
        corr_curves[rho] = (emp, power.law.pass_at_k(ks), repeat.law.pass_at_k(ks))
    return {"ks": ks, "delta": delta, "temps": temp_rows, "curves": curves, "corr": corr_rows,
            "corr_curves": corr_curves, "iid_pred": iid_pred, "k_over": k_over, "law_t1": law_t1}
