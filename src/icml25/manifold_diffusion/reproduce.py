"""Reproduction of 'Riemannian Diffusion Adaptation for Distributed Optimization on Manifolds' (ICML 2025)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np

from icml25.core import Report, Scale, reproduction
from icml25.core.plan import Needs, Plan, UnitCost
from icml25.core.registry import reproduction_stub
from icml25.core.validation import check_int, check_positive, check_real

from . import _experiments as ex
from .combination import paper_combination_matrix
from .metrics import to_db

TITLE = "Riemannian Diffusion Adaptation for Distributed Optimization on Manifolds"


@dataclass(frozen=True)
class Config:
    pca_iters: int = 1500  # iterations T of the synthetic PCA comparison (Fig. 2)
    pca_runs: int = 5  # Monte Carlo runs of the PCA comparison
    steady_window: int = 200  # last iterations averaged for steady-state MSD
    d: int = 10  # ambient dimension of synthetic PCA
    r: int = 5  # subspace dimension of synthetic PCA and digits PCA
    mu: float = 0.05  # adaptation step size μ (diffusion, centralized, non-cooperative)
    alpha: float = 1.6  # combine step α (= 2 × the code's step_size_fm = 0.8)
    drsgd_beta: float = 0.05  # DRSGD gradient step β
    drsgd_alpha: float = 0.8  # DRSGD consensus step α_c
    consensus_steps: int = 100  # combine-only iterations of the agreement check
    consensus_angle: float = 0.3  # max geodesic radius (rad) of the initial perturbations
    eff_iters: int = 1500  # iterations of the one-step vs exact Fréchet comparison (Fig. 6)
    eff_runs: int = 3  # runs of the efficiency comparison
    frechet_iters: int = 10  # Karcher iterations of the exact combine
    step_sizes: tuple[float, ...] = (0.05, 0.07, 0.09)  # μ values of the step-size study (Fig. 8)
    step_iters: int = 1500  # iterations of the step-size study
    step_runs: int = 3  # runs of the step-size study
    gmm_iters: int = 1500  # iterations of the synthetic GMM comparison (Fig. 4)
    gmm_runs: int = 3  # Monte Carlo runs of the GMM comparison
    gmm_d: int = 8  # GMM data dimension
    gmm_components: int = 3  # number of mixture components G
    gmm_mu: float = 0.04  # GMM adaptation step (all strategies) and DRSGD β
    gmm_alpha: float = 0.1  # GMM combine step α (= 2 × 0.05)
    gmm_drsgd_alpha: float = 0.05  # GMM DRSGD consensus step
    gmm_alpha_extra: float = 1.0  # extra diffusion combine step reported beside the official 0.1 (no claim)
    gmm_eval_every: int = 50  # iterations between likelihood evaluations
    gmm_eval_samples: int = 3000  # data points (subsample of all agents' data) used for ALL
    digits_passes: int = 10  # passes over each agent's ~89 digits
    digits_mu: float = 0.1  # digits PCA adaptation step (our calibration; data scaled to [0, 1])
    digits_alpha: float = 1.0  # digits PCA combine step
    digits_drsgd_alpha: float = 0.5  # digits DRSGD consensus step (β = digits_mu)
    real_data: str = "digits"  # real data of F10: "digits" (scikit-learn, shipped) or "mnist" (the paper's Fig. 3)
    mnist_path: str = ""  # mnist-original.mat (or IDX/.npy) for real_data="mnist"; empty: the cache folder

    def __post_init__(self) -> None:
        for name in ("pca_iters", "pca_runs", "steady_window", "consensus_steps", "eff_iters", "eff_runs",
                     "frechet_iters", "step_iters", "step_runs", "gmm_iters", "gmm_runs", "gmm_eval_every",
                     "gmm_eval_samples", "digits_passes"):
            check_int(getattr(self, name), name, low=1)
        check_int(self.d, "d", low=2)
        check_int(self.r, "r", low=1, high=self.d - 1)  # Grassmann(d, r) needs 1 <= r < d
        check_int(self.gmm_d, "gmm_d", low=1)
        check_int(self.gmm_components, "gmm_components", low=1)
        for name in ("mu", "alpha", "drsgd_beta", "drsgd_alpha", "gmm_mu", "gmm_alpha", "gmm_drsgd_alpha",
                     "gmm_alpha_extra", "digits_mu", "digits_alpha", "digits_drsgd_alpha"):
            check_positive(getattr(self, name), name)
        check_real(self.consensus_angle, "consensus_angle", low=0.0, low_open=True, high=np.pi / 2)
        if isinstance(self.step_sizes, (str, bytes)) or len(self.step_sizes) < 2:
            raise ValueError(f"step_sizes must hold at least two step sizes (F7 compares them), got {self.step_sizes!r}")
        for v in self.step_sizes:
            check_positive(v, "step_sizes")
        if list(self.step_sizes) != sorted(self.step_sizes):
            raise ValueError(f"step_sizes must be increasing (F7: MSD grows with μ), got {self.step_sizes!r}")
        for name, iters in (("pca_iters", self.pca_iters), ("step_iters", self.step_iters)):
            if self.steady_window > iters:
                raise ValueError(f"steady_window ({self.steady_window}) must be <= {name} ({iters})")
        if self.gmm_eval_every > self.gmm_iters:
            raise ValueError(f"gmm_eval_every ({self.gmm_eval_every}) must be <= gmm_iters ({self.gmm_iters})")
        if self.eff_iters < 3:
            raise ValueError(f"eff_iters must be >= 3 (the last third is the steady state), got {self.eff_iters}")
        if self.real_data not in ("digits", "mnist"):
            raise ValueError(f"real_data must be 'digits' or 'mnist', got {self.real_data!r}")
        if not isinstance(self.mnist_path, str):
            raise TypeError(f"mnist_path must be a string (a file path, or empty), got {self.mnist_path!r}")

    @classmethod
    def quick(cls) -> Config:
        """Sizes for < 60 s on 2 CPU cores."""
        return cls(pca_iters=600, pca_runs=1, steady_window=100, eff_iters=100, eff_runs=1, step_iters=600,
                   step_runs=1, gmm_iters=250, gmm_runs=1, gmm_eval_every=25, gmm_eval_samples=1000,
                   digits_passes=6)

    @classmethod
    def full(cls) -> Config:
        """The spec's full-mode sizes."""
        return cls()

    @classmethod
    def paper(cls) -> Config:
        """The official scripts' sizes (spec §2.6); T, d, r, step sizes and the network are those of full."""
        return replace(cls.full(),
                       pca_runs=100,  # Fig. 2: 100 Monte Carlo runs (full: 5)
                       eff_runs=100,  # Fig. 6: 100 runs (full: 3)
                       step_runs=100,  # Fig. 8: 100 runs (full: 3)
                       gmm_runs=10,  # Fig. 4: 10 runs (full: 3)
                       gmm_eval_samples=30000,  # Fig. 4: ALL on all data, 20 agents × 1500 (full: a 3000 subsample)
                       # gmm_eval_every stays 50: the paper plots every iteration, the claims read the last fifth
                       real_data="mnist")  # Fig. 3: MNIST, 3500 samples per agent, the official step sizes

    def plan(self) -> Plan:
        """The dry-run plan: per-iteration costs timed on this project's 2-core machine, counts from the fields."""
        on = "2-core shared CPU, process time of the experiment functions (300 iterations), 2026-12-03"
        gmm_strategies = 5  # four strategies and diffusion with gmm_alpha_extra
        evals = self.gmm_runs * gmm_strategies * (self.gmm_iters // self.gmm_eval_every + 1) * self.gmm_eval_samples
        costs = [
            UnitCost("synthetic PCA, 4 strategies (Fig. 2)", "iteration", self.pca_runs * self.pca_iters, 5.2e-3, on),
            UnitCost("one-step vs exact Fréchet combine (Fig. 6)", "iteration", self.eff_runs * self.eff_iters,
                     1.76e-2, on),
            UnitCost("step-size study, 3 step sizes (Fig. 8)", "iteration",
                     self.step_runs * self.step_iters * len(self.step_sizes) / 3, 6.9e-3, on),
            UnitCost("synthetic GMM updates, 5 strategies (Fig. 4)", "iteration", self.gmm_runs * self.gmm_iters,
                     2.6e-2, on),
            UnitCost("GMM likelihood evaluations (20 agents)", "data point", evals, 1.23e-5, on),
        ]
        data = ["synthetic PCA streams (d=10, r=5) and GMM samples (d=8, G=3), from the seed"]
        downloads: tuple[str, ...] = ()
        if self.real_data == "mnist":
            costs.append(UnitCost("MNIST PCA, 4 strategies (Fig. 3)", "iteration", 3500, 2.7e-2,
                                  "2-core shared CPU, mnist_pca on 6000 random 784-pixel images, 2026-12-03"))
            costs.append(UnitCost("MNIST loading and its 70 000 × 784 SVD (the target subspace)", "data set", 1, 25.0,
                                  "2-core shared CPU, SVD of a 70 000 × 784 Gaussian matrix, 2026-12-03"))
            data.append("MNIST, 70 000 × 784 (not shipped: mnist-original.mat or the IDX files)")
            downloads = ("MNIST images (~10 MB of IDX files from the CVDF mirror, or the official mnist-original.mat)",)
        else:
            costs.append(UnitCost("digits PCA, 4 strategies (MNIST substitute)", "pass", self.digits_passes, 0.37, on))
            data.append("scikit-learn digits, 1797 × 64 (shipped with scikit-learn)")
        return Plan(
            slug="manifold_diffusion", scale=_preset_name(self),
            stages=["agreement check (combine steps only)",
                    f"synthetic PCA (Fig. 2): {self.pca_runs} runs × T={self.pca_iters}",
                    f"one-step vs exact Fréchet combine (Fig. 6): {self.eff_runs} runs × T={self.eff_iters}",
                    f"step-size study (Fig. 8): {self.step_runs} runs × T={self.step_iters} × μ ∈ {list(self.step_sizes)}",
                    f"synthetic GMM (Fig. 4): {self.gmm_runs} runs × T={self.gmm_iters}, ALL every {self.gmm_eval_every} "
                    f"iterations on {self.gmm_eval_samples} points",
                    "real data: " + ("MNIST PCA (Fig. 3), 3500 samples per agent" if self.real_data == "mnist"
                                     else f"digits PCA, {self.digits_passes} passes"),
                    "claims, tables, figures"],
            models=["Riemannian diffusion, DRSGD, non-cooperative and centralized learners on Grassmann(10, 5), "
                    "SPD(9)^3 × R^2 (numpy)"],
            datasets=data, runs=1, needs=Needs(cpu_cores=1, ram_gb=2.0 if self.real_data == "mnist" else 1.0,
                                               disk_gb=0.1, downloads=downloads), costs=costs,
            notes=["Not run at any scale: the uniform-rule topology (Fig. 7) and GMM on MNIST (Fig. 5)."])


def _preset_name(cfg: Config) -> str:
    """The preset ``cfg`` is closest to (most equal fields; a tie goes to the larger scale): the plan's scale."""
    best = (-1, "quick")
    for name in ("quick", "full", "paper"):
        preset = getattr(Config, name)()
        same = sum(getattr(cfg, f.name) == getattr(preset, f.name) for f in fields(cfg))
        if same >= best[0]:
            best = (same, name)
    return best[1]


def _figure_pca(curves: dict, title: str, xlabel: str = "iteration i", x=None):  # type: ignore[no-untyped-def]
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    for name, c in curves.items():
        xs = np.arange(1, len(c) + 1) if x is None else x
        ax.plot(xs, to_db(c), label=str(name), lw=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("MSD (dB)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    return fig


@reproduction(slug="manifold_diffusion", title=TITLE, arxiv="", extras=("stats", "plot"), config=Config)
def reproduce(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """Run the PCA, agreement, efficiency, step-size, GMM and digits experiments and state the claims."""
    return _run(seed, config, stub=False)


@reproduction_stub(slug="manifold_diffusion")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The reproduction with Riemannian diffusion replaced by its naive baseline: the combine step skipped, i.e.
    non-cooperative learning (spec §6)."""
    return _run(seed, config, stub=True)


#: spec §6 calibration run (own implementation, 2 Monte Carlo runs, T = 1500): steady-state MSD in dB
SPEC_DB = {"non-cooperative": -9.5, "DRSGD": -17.7, "diffusion": -20.0, "centralized": -24.0}
SPEC_REF = "spec §6 calibration run (2 MC runs, T=1500)"


def _run(seed: int, c: Config, stub: bool) -> Report:
    report = Report(slug="manifold_diffusion", title=TITLE)
    if stub:
        report.notes.append("STUB: Riemannian diffusion replaced by non-cooperative learning (no combine step).")
    a = paper_combination_matrix("metropolis")
    mnist = None
    if c.real_data == "mnist":  # fail before any work when the file is missing
        from ._mnist import load_mnist

        mnist = load_mnist(c.mnist_path or None)

    # --- agreement (consensus only) and synthetic PCA comparison (Fig. 2) -----------------------------------
    cons = ex.consensus_only(a, seed, c.consensus_steps, c.d, c.r, c.consensus_angle, stub=stub)
    pca = ex.pca_comparison(a, seed, c.pca_runs, c.pca_iters, c.d, c.r, c.mu, c.alpha, c.drsgd_beta,
                            c.drsgd_alpha, stub=stub)
    # fails if: an update leaves the manifold (e.g. averaging the agents' matrices extrinsically, no retraction)
    report.add_claim("Q4", "Every iterate stays on the Grassmann manifold (max |WᵀW − I|)", None,
                     max(pca["max_orthonormality_error"], cons["max_orthonormality_error"]), "<", 1e-8,
                     kind="mechanism", aggregate="max")
    dis = cons["disagreement"]
    shrink = float(dis[0] / max(dis[-1], 1e-300))
    # fails if: the combine step does not move toward the neighbours' Fréchet mean (wrong log map, wrong sign,
    # weights not from A), or there is no combine step (the stub)
    report.add_claim("Q1", "Combine steps alone drive the agents to agreement (disagreement shrinks >= 50x "
                     f"in {c.consensus_steps} steps, mu=0, alpha=1)", None, shrink, ">=", 50.0, kind="paper",
                     unit="x", requires=["Q4"], headline=True,
                     note="paper: agents approach agreement (theorem); threshold from spec §6 quick; the Euclidean "
                          "analogue contracts the slowest mode by 0.974/step")

    w = c.steady_window
    ss = {name: ex.steady_db(curve, w) for name, curve in pca["curves"].items()}
    report.add_table("pca_steady_state_msd_db", [
        {"strategy": n, "steady_state_msd_db": ss[n], "msd_db_at_i=500": float(to_db(pca["curves"][n][499]))
         if len(pca["curves"][n]) >= 500 else None, "spec_calibration_db": SPEC_DB[n]} for n in ex.ALGOS])
    gain_non = ss["non-cooperative"] - ss["diffusion"]
    gain_drsgd = ss["DRSGD"] - ss["diffusion"]
    gap_cen = ss["diffusion"] - ss["centralized"]
    ref_non = SPEC_DB["non-cooperative"] - SPEC_DB["diffusion"]
    ref_drsgd = SPEC_DB["DRSGD"] - SPEC_DB["diffusion"]
    ref_cen = SPEC_DB["diffusion"] - SPEC_DB["centralized"]
    # fails if: the agents do not cooperate (no combine: gain 0 dB) or the combine mixes badly
    report.add_claim("Q2", "Online PCA: diffusion's steady-state MSD is far below non-cooperative (>= 6 dB, "
                     "mini run)", None, gain_non, ">=", 6.0, kind="paper", unit="dB", requires=["Q4"], headline=True,
                     reference_value=ref_non, reference_source=SPEC_REF,
                     note=f"paper (Fig. 2): diffusion ≪ non-cooperative; mean of last {w} iterations; threshold "
                          "from spec §6")
    # fails if: the combine is no better than DRSGD's extrinsic consensus (or absent: the stub is ~8 dB worse)
    report.add_claim("Q3", "Online PCA: diffusion is not worse than DRSGD", None, gain_drsgd, ">=", 0.0,
                     kind="paper", unit="dB", requires=["Q4"], reference_value=ref_drsgd, reference_source=SPEC_REF,
                     note="paper (Fig. 2): diffusion beats DRSGD; threshold from spec §6")
    # fails if: as Q2, at full size (5 runs, T=1500)
    report.add_claim("F1", "Fig. 2: diffusion <= non-cooperative − 8 dB", None, gain_non, ">=", 8.0,
                     kind="paper", scale=Scale.FULL, unit="dB", requires=["Q4"], reference_value=ref_non,
                     reference_source=SPEC_REF)
    # fails if: the one-step combine is no better than DRSGD by a clear margin
    report.add_claim("F2", "Fig. 2: diffusion beats DRSGD by >= 1 dB", None, gain_drsgd, ">=", 1.0, kind="paper",
                     scale=Scale.FULL, unit="dB", requires=["Q4"], reference_value=ref_drsgd, reference_source=SPEC_REF)
    # fails if: the network does not mix (combine step too small or wrong weights) so diffusion stays far from the
    # fusion centre
    report.add_claim("F3", "Fig. 2: diffusion comes close to centralized (within 6 dB)", None, gap_cen, "<=", 6.0,
                     kind="paper", scale=Scale.FULL, unit="dB", requires=["Q4"], reference_value=ref_cen,
                     reference_source=SPEC_REF)
    # fails if: a strategy diverges or stalls (an unstable α, a wrong gradient sign)
    report.add_claim("F4", "Fig. 2: all four MSD curves decrease in trend", None,
                     all(ex.decreasing_trend(cv) for cv in pca["curves"].values()), "is_true", None, kind="paper",
                     scale=Scale.FULL, aggregate="all", requires=["Q4"],
                     note="5 block means of the dB curve, each <= previous + 1 dB (steady-state noise allowance)")
    if not stub:
        report.add_figure("msd_pca", _figure_pca(pca["curves"], f"Synthetic PCA, K=20 ({c.pca_runs} runs)"))

    # --- efficiency (Fig. 6) ---------------------------------------------------------------------------------
    eff = ex.efficiency(a, seed, c.eff_runs, c.eff_iters, c.d, c.r, c.mu, c.alpha, c.frechet_iters, stub=stub)
    w_eff = min(w, c.eff_iters // 3)
    one, exact = (ex.steady_db(eff["curves"][k], w_eff) for k in ("one_step", "exact_frechet"))
    speed = eff["seconds_per_iter"]["exact_frechet"] / eff["seconds_per_iter"]["one_step"]
    cost = eff["maps_per_iter"]["exact_frechet"] / eff["maps_per_iter"]["one_step"]
    report.add_table("efficiency", [
        {"combine": k, "final_msd_db": ex.steady_db(eff["curves"][k], w_eff),
         "ms_per_iteration_all_agents": 1e3 * eff["seconds_per_iter"][k],
         "log_exp_retr_per_iteration": eff["maps_per_iter"][k]} for k in ("one_step", "exact_frechet")])
    # fails if: the one-step combine is a poor approximation of the Fréchet mean (wrong step, missing weights)
    report.add_claim("F5", "Fig. 6: one-step combine reaches the MSD of the exact Fréchet-mean combine "
                     "(|difference| <= 1.5 dB)", None, abs(one - exact), "<=", 1.5, kind="paper", scale=Scale.FULL,
                     unit="dB")
    # fails if: the one-step combine is implemented with an inner loop (as slow as the exact mean) or the
    # vectorised batch over agents is lost; measured as wall time of the same run (gradients + update)
    report.add_claim("F6", "Fig. 6: one-step combine is much cheaper per iteration (wall time, >= 3x)", None, speed,
                     ">=", 3.0, kind="paper", scale=Scale.FULL, unit="x", timing=True,
                     note=f"wall time per iteration of the strategy steps, both measured in this run "
                          f"({1e3 * eff['seconds_per_iter']['one_step']:.2f} vs "
                          f"{1e3 * eff['seconds_per_iter']['exact_frechet']:.2f} ms for 20 agents); log/exp/"
                          f"retraction evaluations ratio {cost:.1f}x (fixed by frechet_iters={c.frechet_iters}); "
                          "threshold from spec §6")

    # --- step size (Fig. 8) ----------------------------------------------------------------------------------
    steps = ex.step_size_study(a, seed, c.step_runs, c.step_iters, c.d, c.r, c.step_sizes, c.alpha, stub=stub)
    ss_mu = [ex.steady_db(steps[m], w) for m in steps]
    report.add_table("step_size", [{"mu": m, "steady_state_msd_db": v} for m, v in zip(steps, ss_mu, strict=True)])
    # fails if: the step size is not what drives the steady-state error (e.g. μ ignored, or normalised away)
    report.add_claim("F7", "Fig. 8: steady-state MSD increases with the step size μ ∈ {0.05, 0.07, 0.09}", None,
                     bool(all(b > a_ for a_, b in zip(ss_mu, ss_mu[1:], strict=False))), "is_true", None,
                     kind="paper", scale=Scale.FULL, aggregate="all")
    if not stub:
        report.add_figure("msd_step_size", _figure_pca({f"μ={m:g}": cv for m, cv in steps.items()},
                                                      "Diffusion, step-size study"))

    # --- GMM (Fig. 4) ----------------------------------------------------------------------------------------
    gmm = ex.gmm_comparison(a, seed, c.gmm_runs, c.gmm_iters, c.gmm_d, c.gmm_components, c.gmm_mu, c.gmm_alpha,
                            c.gmm_mu, c.gmm_drsgd_alpha, c.gmm_eval_every, c.gmm_eval_samples,
                            alpha_extra=c.gmm_alpha_extra, stub=stub)
    # fails if: an update of the covariances leaves the SPD cone (a Euclidean step without the SPD retraction)
    report.add_claim("Q5", "GMM iterates stay symmetric positive definite", None, gmm["max_spd_error"], "<", 1e-8,
                     kind="mechanism", aggregate="max")
    n_last = max(1, len(gmm["iterations"]) // 5)
    final = {n: float(to_db(np.mean(cv[-n_last:]))) for n, cv in gmm["curves"].items()}
    alphas = {"diffusion": c.gmm_alpha, f"diffusion α={c.gmm_alpha_extra:g}": c.gmm_alpha_extra}
    report.add_table("gmm_final_gap_db", [{"strategy": n, "combine_step": alphas.get(n), "final_ALL*-ALL_db": v}
                                          for n, v in final.items()])
    # fails if: cooperation does not help on the product manifold (no combine, or a combine on one factor only)
    report.add_claim("F8", "Fig. 4: GMM, diffusion's final ALL*−ALL is below non-cooperative's", None,
                     final["non-cooperative"] - final["diffusion"], ">=", 0.0, kind="paper", scale=Scale.FULL,
                     unit="dB", requires=["Q5"], headline=True)
    # fails if: the network does not mix within T iterations at the official combine step
    report.add_claim("F9", "Fig. 4: GMM, diffusion within 3 dB of centralized", None,
                     final["diffusion"] - final["centralized"], "<=", 3.0, kind="paper", scale=Scale.FULL,
                     unit="dB", requires=["Q5"])
    report.notes.append(f"GMM: with the official combine step α={c.gmm_alpha:g} the network mixes slowly "
                        f"(α(1−λ₂(A)) ≈ {c.gmm_alpha * 0.026:.4f} per step); diffusion with α={c.gmm_alpha_extra:g} "
                        f"reaches {final[f'diffusion α={c.gmm_alpha_extra:g}']:.2f} dB vs centralized "
                        f"{final['centralized']:.2f} dB (table gmm_final_gap_db). F9 uses the official α.")
    if not stub:
        fig_g = _figure_pca(gmm["curves"], "Synthetic GMM (d=8, G=3)", x=gmm["iterations"])
        fig_g.axes[0].set_ylabel("ALL* − ALL (dB)")
        report.add_figure("all_gmm", fig_g)

    # --- real data: digits PCA (MNIST, the paper's Fig. 3, at paper scale) -------------------------------------
    if mnist is not None:
        dig = ex.mnist_pca(a, seed, mnist, c.r, stub=stub)
        name, detail = "MNIST, the paper's Fig. 3", f"{dig['samples_per_agent']} images per agent, one pass"
    else:
        dig = ex.digits_pca(a, seed, c.digits_passes, c.r, c.digits_mu, c.digits_alpha, c.digits_mu,
                            c.digits_drsgd_alpha, stub=stub)
        name, detail = "digits, substitute for MNIST", (f"{dig['samples_per_agent']} digits per agent, "
                                                        f"{c.digits_passes} passes")
    final_d = {n: float(to_db(cv[-1])) for n, cv in dig["curves"].items()}
    report.add_table(f"{c.real_data}_pca_final_msd_db", [{"strategy": n, "final_msd_db": final_d[n]}
                                                          for n in ex.ALGOS])
    # fails if: cooperation does not help on real, non-Gaussian data
    report.add_claim("F10", f"Real data ({name}): diffusion <= non-cooperative − 5 dB",
                     None, final_d["non-cooperative"] - final_d["diffusion"], ">=", 5.0, kind="paper",
                     scale=Scale.FULL, unit="dB", headline=True,
                     note=f"paper (Fig. 3, MNIST): same ordering on real data; {detail}; threshold from spec §6")
    if not stub and mnist is None:
        report.add_figure("msd_digits", _figure_pca(dig["curves"], "Digits PCA (r=5)", xlabel="pass over the data",
                                                    x=np.arange(1, c.digits_passes + 1)))
    elif not stub:
        report.add_figure("msd_mnist", _figure_pca(dig["curves"], "MNIST PCA (r=5)", xlabel="iteration",
                                                   x=np.linspace(1, dig["samples_per_agent"], len(dig["curves"]["diffusion"]))))
    report.notes.append("The paper's exact dB values were not retrievable (figures only): no claim has a paper "
                        "value; 'reference' holds the spec's own calibration run (§6) and thresholds are the spec's "
                        "acceptance numbers (§6). "
                        + ("Real data: MNIST (the paper's Fig. 3)." if mnist is not None
                           else "MNIST is replaced by scikit-learn's digits (MNIST at --scale paper)."))
    return report
