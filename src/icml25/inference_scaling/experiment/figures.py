"""Figures of the reproduction (matplotlib via icml25.core.plotting)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core import Report
from icml25.core.plotting import new_figure, reference_line


def add_figures(report: Report, fits: list[dict[str, Any]], dig: list[dict[str, Any]], ck_rows: list[dict[str, Any]],
                flops: np.ndarray, comp_curves: dict[str, np.ndarray], vs: dict[str, Any], ks: np.ndarray) -> None:
    """Coverage vs k, inference loss vs k, beta vs size, compute trade-off and the VAE check."""
    fig, (ax1, ax2) = new_figure(ncols=2)
    for r in fits:
        line = ax1.plot(ks, r["_pred"], lw=1.2, label=r["model"])[0]
        ax1.plot(ks, r["_emp"], "o", ms=2.5, color=line.get_color())
    ax1.set(xscale="log", xlabel="attempts k", ylabel="coverage pass@k",
            title="Pythia on MATH: data (dots) vs Beta law")
    ax1.legend(fontsize=6)
    kk = np.logspace(0, 4, 200)
    for r in dig:
        line = ax2.plot(kk, r["_law"].pass_at_k(kk), lw=1.2, label=f"{r['model']} Beta")[0]
        ax2.plot(kk, r["_brown"].predict(kk), ls=":", color=line.get_color())
        ax2.plot(r["_k"], r["_y"], "o", ms=2.5, color=line.get_color())
    ax2.set(xscale="log", xlabel="attempts k", ylabel="coverage pass@k",
            title="Brown et al. curves: Beta (solid), exp(a k^b) (dotted)")
    ax2.legend(fontsize=6)
    report.add_figure("coverage_vs_k", fig)

    fig, ax = new_figure()
    for r in fits:
        line = ax.plot(ks, 1 - r["_pred"], lw=1.2, label=f"{r['model']} (beta={r['beta']:.2f})")[0]
        ax.plot(ks, 1 - r["_emp"], "o", ms=2.5, color=line.get_color())
    ax.set(xscale="log", yscale="log", xlabel="attempts k", ylabel="inference loss 1 - pass@k",
           title="Inference loss ~ k^-beta")
    ax.legend(fontsize=6)
    report.add_figure("inference_loss_vs_k", fig)

    fig, (ax1, ax2) = new_figure(ncols=2)
    ax1.errorbar([r["params"] for r in fits], [r["beta"] for r in fits], yerr=[r["beta_se"] for r in fits],
                 fmt="o-")
    reference_line(ax1, 0.35, label="paper (aggregate fits): beta ~ 0.35")
    ax1.set(xscale="log", xlabel="model parameters N", ylabel="fitted beta", title="beta vs model size (MATH)")
    ax1.legend(fontsize=7)
    for bench, marker in (("MATH", "o"), ("GSM8K", "s")):
        ok = [r for r in ck_rows if r["benchmark"] == bench and r["status"] == "ok"]
        ax2.plot([r["compute_6ND"] for r in ok], [r["beta"] for r in ok], marker, ms=4, label=bench)
    ax2.set(xscale="log", xlabel="training compute 6ND (FLOPs)", ylabel="fitted beta",
            title="Pythia checkpoints")
    ax2.legend(fontsize=7)
    report.add_figure("beta_vs_size", fig)

    fig, ax = new_figure()
    for name, cov in comp_curves.items():
        ax.plot(flops, cov, lw=1.2, label=name)
    ax.set(xscale="log", xlabel="inference FLOPs per problem", ylabel="coverage", title="Coverage at fixed compute")
    ax.legend(fontsize=6)
    report.add_figure("coverage_vs_compute", fig)

    fig, (ax1, ax2) = new_figure(ncols=2)
    vks = vs["ks"]
    for T, (emp, pred, pred_plain) in vs["curves"].items():
        line = ax1.plot(vks, pred, lw=1.2, label=f"T={T:g} zero-inflated Beta")[0]
        ax1.plot(vks, pred_plain, ls=":", color=line.get_color())
        ax1.plot(vks, emp, "o", ms=3, color=line.get_color())
    ax1.set(xscale="log", xlabel="attempts k", ylabel="coverage pass@k", title="VAE: data, fit with A, A=1 (dotted)")
    ax1.legend(fontsize=6)
    ax2.plot(vks, vs["iid_pred"], "k-", lw=1.5, label="iid prediction (T=1)")
    for rho, (emp, pw, rp) in vs["corr_curves"].items():
        line = ax2.plot(vks, pw, lw=1.0, label=f"rho={rho:g} power fit")[0]
        ax2.plot(vks, rp, ls=":", color=line.get_color())
        ax2.plot(vks, emp, "o", ms=3, color=line.get_color())
    ax2.set(xscale="log", xlabel="attempts k", ylabel="coverage pass@k",
            title="Correlated attempts: power (solid), repeat (dotted)")
    ax2.legend(fontsize=6)
    report.add_figure("vae_coverage", fig)
