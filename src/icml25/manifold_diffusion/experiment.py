"""The experiments of the reproduction: the Monte Carlo drivers (data generation, strategy runs) and the stages
that ``reproduce()`` calls, each running a driver from the config or adding its claims, tables and figures to the
report. Not part of the public API.

Every driver takes ``stub``: non-cooperative learning (the combine step skipped) in place of Riemannian diffusion.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core import Report, Scale
from icml25.core.progress import progress

from .diffusion import DRSGD, Centralized, DiffusionAdaptation, NonCooperative
from .gmm import average_log_likelihood, gmm_loss_grad, gmm_manifold, gmm_params_to_manifold
from .gmm_data import kmeans_plusplus_gmm, random_gmm_parameters, sample_gmm
from .grassmann_stiefel import Grassmann
from .metrics import disagreement, msd, to_db
from .pca import pca_loss_grad, principal_subspace, synthetic_pca_stream
from .simulate import simulate

if TYPE_CHECKING:
    from .reproduce import Config

ALGOS = ("non-cooperative", "DRSGD", "diffusion", "centralized")


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), *keys])


def _diffusion(manifold: Any, a: np.ndarray, mu: float, alpha: float, stub: bool = False) -> Any:
    """Riemannian diffusion (adapt then one-step combine), or for the ``stub`` its naive baseline: the same
    adaptation with the combine step skipped, i.e. non-cooperative learning (spec §6)."""
    return NonCooperative(manifold, mu) if stub else DiffusionAdaptation(manifold, a, mu, alpha)


def _strategies(manifold: Any, a: np.ndarray, mu: float, alpha: float, beta: float, alpha_c: float,
                mu_non: float | None = None, stub: bool = False) -> dict[str, Any]:
    return {
        "non-cooperative": NonCooperative(manifold, mu if mu_non is None else mu_non),
        "DRSGD": DRSGD(manifold, a, beta, alpha_c),
        "diffusion": _diffusion(manifold, a, mu, alpha, stub),
        "centralized": Centralized(manifold, mu),
    }


def pca_comparison(a: np.ndarray, seed: int, runs: int, n_iter: int, d: int, r: int, mu: float, alpha: float,
                   beta: float, alpha_c: float, stub: bool = False) -> dict[str, Any]:
    """Fig. 2 replica: MSD curves (linear scale, averaged over runs) of the four strategies."""
    g = Grassmann(d, r)
    curves = {name: np.zeros(n_iter) for name in ALGOS}
    max_err = 0.0
    for run in progress(range(runs), "PCA Monte Carlo runs"):
        rng = _rng(seed, 1, run)
        stream, target = synthetic_pca_stream(a.shape[0], n_iter, d, r, rng=rng)
        init = g.random_point(rng)
        for name, algo in _strategies(g, a, mu, alpha, beta, alpha_c, stub=stub).items():
            res = simulate(algo, stream, pca_loss_grad, init, metrics={"msd": lambda p, t=target: msd(g, p, t)})
            curves[name] += res.history["msd"] / runs
            max_err = max(max_err, float(np.max(g._point_error(res.points))))
    return {"curves": curves, "max_orthonormality_error": max_err}


def consensus_only(a: np.ndarray, seed: int, steps: int, d: int, r: int, angle: float, stub: bool = False
                   ) -> dict[str, Any]:
    """μ = 0, α = 1, agents start at small perturbations of one point: disagreement per iteration.

    ``stub``: no combine step (non-cooperative), the points never move."""
    g = Grassmann(d, r)
    rng = _rng(seed, 2)
    k = a.shape[0]
    base = g.random_point(rng)
    v = g.proj(np.repeat(base[None], k, 0), rng.standard_normal((k, d, r)))
    v *= (angle * rng.uniform(0.5, 1.0, size=k) / g.norm(np.repeat(base[None], k, 0), v))[:, None, None]
    points = g.exp(np.repeat(base[None], k, 0), v)
    algo = DiffusionAdaptation(g, a, step_size=1.0, combine_step=1.0)
    values = [disagreement(g, points)]
    for _ in range(int(steps)):
        points = points if stub else algo.combine_points(points)
        values.append(disagreement(g, points))
    return {"disagreement": np.asarray(values), "max_orthonormality_error": float(np.max(g._point_error(points)))}


class _CountingGrassmann(Grassmann):
    """Grassmann that counts the matrices passed through log, exp and retr (a deterministic cost measure)."""

    evaluations = 0

    def _count(self, x: np.ndarray) -> None:
        self.evaluations += int(np.prod(np.shape(x)[:-2], dtype=int))

    def log(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        self._count(x)
        return super().log(x, y)

    def exp(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        self._count(x)
        return super().exp(x, v)

    def retr(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        self._count(x)
        return super().retr(x, v)


def efficiency(a: np.ndarray, seed: int, runs: int, n_iter: int, d: int, r: int, mu: float, alpha: float,
               frechet_iters: int, stub: bool = False) -> dict[str, Any]:
    """Fig. 6 replica: one-step combine vs exact Fréchet mean (MSD curves and seconds per iteration).

    ``stub``: the one-step combine is skipped (non-cooperative); the exact-Fréchet baseline is unchanged."""
    g = Grassmann(d, r)
    out = {"one_step": np.zeros(n_iter), "exact_frechet": np.zeros(n_iter)}
    secs = {"one_step": 0.0, "exact_frechet": 0.0}
    maps = {"one_step": 0.0, "exact_frechet": 0.0}
    for run in progress(range(runs), "efficiency runs"):
        rng = _rng(seed, 3, run)
        stream, target = synthetic_pca_stream(a.shape[0], n_iter, d, r, rng=rng)
        init = g.random_point(rng)
        for combine in out:
            counted = _CountingGrassmann(d, r)
            if stub and combine == "one_step":
                algo = NonCooperative(counted, mu)
            else:
                algo = DiffusionAdaptation(counted, a, mu, alpha if combine == "one_step" else 1.0, combine=combine,
                                           frechet_iters=frechet_iters)
            res = simulate(algo, stream, pca_loss_grad, init, metrics={"msd": lambda p, t=target: msd(g, p, t)})
            out[combine] += res.history["msd"] / runs
            secs[combine] += res.seconds_per_iter / runs
            maps[combine] += counted.evaluations / n_iter / runs
    return {"curves": out, "seconds_per_iter": secs, "maps_per_iter": maps}


def step_size_study(a: np.ndarray, seed: int, runs: int, n_iter: int, d: int, r: int, step_sizes: tuple,
                    alpha: float, stub: bool = False) -> dict[str, np.ndarray]:
    """Fig. 8 replica: diffusion MSD curves for several adaptation step sizes."""
    g = Grassmann(d, r)
    curves = {float(m): np.zeros(n_iter) for m in step_sizes}
    for run in progress(range(runs), "step-size runs"):
        rng = _rng(seed, 4, run)
        stream, target = synthetic_pca_stream(a.shape[0], n_iter, d, r, rng=rng)
        init = g.random_point(rng)
        for m in curves:
            res = simulate(_diffusion(g, a, m, alpha, stub), stream, pca_loss_grad, init,
                           metrics={"msd": lambda p, t=target: msd(g, p, t)})
            curves[m] += res.history["msd"] / runs
    return curves


def gmm_comparison(a: np.ndarray, seed: int, runs: int, n_iter: int, d: int, n_components: int, mu: float,
                   alpha: float, beta: float, alpha_c: float, eval_every: int, eval_samples: int,
                   alpha_extra: float | None = None, stub: bool = False) -> dict[str, Any]:
    """Fig. 4 replica: ALL* − ALL (linear, averaged over runs and agents) of the four strategies.

    With ``alpha_extra`` a fifth curve, diffusion with that combine step, is added (sensitivity to α).
    """
    m = gmm_manifold(d, n_components)
    k = a.shape[0]
    gaps: dict[str, np.ndarray] = {}
    iters = None
    max_err = 0.0
    for run in progress(range(runs), "GMM Monte Carlo runs"):
        rng = _rng(seed, 5, run)
        means, covs, weights = random_gmm_parameters(d, n_components, rng)
        x = sample_gmm(means, covs, weights, k * n_iter, rng)
        init = gmm_params_to_manifold(*kmeans_plusplus_gmm(x, n_components, random_state=1))
        rng.shuffle(x, axis=0)
        stream = x.reshape(k, n_iter, d)
        sub = x[rng.choice(len(x), size=min(int(eval_samples), len(x)), replace=False)]
        best = float(average_log_likelihood(gmm_params_to_manifold(means, covs, weights), sub))
        algos = _strategies(m, a, mu, alpha, beta, alpha_c, stub=stub)
        if alpha_extra is not None:
            algos[f"diffusion α={alpha_extra:g}"] = _diffusion(m, a, mu, alpha_extra, stub)
        for name, algo in algos.items():
            res = simulate(algo, stream, gmm_loss_grad, init, record_every=eval_every,
                           metrics={"gap": lambda p, b=best, s=sub: b - float(np.mean(average_log_likelihood(p, s)))})
            gaps[name] = gaps.get(name, 0.0) + res.history["gap"] / runs
            iters = res.iterations
            max_err = max(max_err, float(np.max(m._point_error(res.points))))
    return {"curves": gaps, "iterations": iters, "max_spd_error": max_err}


def _pca_stream(x: np.ndarray, k: int, r: int, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray, Grassmann, np.ndarray]:
    """Centre and shuffle the images ``x`` [n, d], split them over ``k`` agents (the remainder dropped) and return the
    stream [k, n // k, d], the principal ``r``-subspace of the kept images, the Grassmann manifold and a random start."""
    x = x - x.mean(axis=0)
    rng.shuffle(x, axis=0)
    t_len = len(x) // k
    x = x[: k * t_len]
    g = Grassmann(x.shape[1], r)
    return x.reshape(k, t_len, x.shape[1]), principal_subspace(x, r), g, g.random_point(rng)


def digits_pca(a: np.ndarray, seed: int, passes: int, r: int, mu: float, alpha: float, beta: float,
               alpha_c: float, stub: bool = False) -> dict[str, Any]:
    """PCA on scikit-learn's digits (1797 × 64, /16, centred) split over the agents and streamed ``passes`` times."""
    from .data import load_digits_images

    stream, target, g, init = _pca_stream(load_digits_images() / 16.0, a.shape[0], r, _rng(seed, 6))
    t_len = stream.shape[1]
    curves = {}
    for name, algo in _strategies(g, a, mu, alpha, beta, alpha_c, stub=stub).items():
        res = simulate(algo, stream, pca_loss_grad, init, n_iter=passes * t_len, record_every=t_len,
                       metrics={"msd": lambda p, t=target: msd(g, p, t)})
        curves[name] = res.history["msd"]
    return {"curves": curves, "samples_per_agent": t_len}


#: step sizes of the official MNIST PCA script (spec §2.6, Fig. 3): diffusion μ and α = 2 × step_size_fm,
#: non-cooperative μ, DRSGD β and α_c; centralized uses the diffusion μ
MNIST_STEPS = {"mu": 2e-3, "alpha": 2 * 5e-3, "mu_non": 2.5e-3, "beta": 2e-3, "alpha_c": 1e-3}


def mnist_pca(a: np.ndarray, seed: int, images: np.ndarray, r: int, record_every: int = 35, stub: bool = False
              ) -> dict[str, Any]:
    """The paper's Fig. 3: PCA on MNIST (/255, centred, shuffled), 3 500 samples per agent streamed once, with the
    official script's step sizes (:data:`MNIST_STEPS`). All agents start from one random point (see README)."""
    stream, target, g, init = _pca_stream(np.asarray(images, dtype=float) / 255.0, a.shape[0], r, _rng(seed, 7))
    t_len = stream.shape[1]
    st = MNIST_STEPS
    curves = {}
    algos = _strategies(g, a, st["mu"], st["alpha"], st["beta"], st["alpha_c"], mu_non=st["mu_non"], stub=stub)
    for name, algo in progress(list(algos.items()), "MNIST PCA strategies"):
        res = simulate(algo, stream, pca_loss_grad, init, record_every=record_every,
                       metrics={"msd": lambda p, t=target: msd(g, p, t)})
        curves[name] = res.history["msd"]
    return {"curves": curves, "samples_per_agent": t_len}


def steady_db(curve: np.ndarray, window: int) -> float:
    """Steady-state level: 10 log10 of the mean of the last ``window`` values."""
    return float(to_db(np.mean(np.asarray(curve)[-int(window):])))


def decreasing_trend(curve: np.ndarray, blocks: int = 5, tol_db: float = 1.0) -> bool:
    """True when the block means of the dB curve never rise by more than ``tol_db`` from block to block."""
    c = to_db(np.asarray(curve))
    means = [float(np.mean(b)) for b in np.array_split(c, blocks)]
    return all(b <= a + tol_db for a, b in zip(means, means[1:], strict=False))


# --- the stages of the reproduction: run (config -> results) and claims (results -> report) --------------------

#: spec §6 calibration run (own implementation, 2 Monte Carlo runs, T = 1500): steady-state MSD in dB
SPEC_DB = {"non-cooperative": -9.5, "DRSGD": -17.7, "diffusion": -20.0, "centralized": -24.0}
SPEC_REF = "spec §6 calibration run (2 MC runs, T=1500)"


def new_report(title: str, stub: bool) -> Report:
    """The empty report, with the stub's note first when ``stub``."""
    report = Report(slug="manifold_diffusion", title=title)
    if stub:
        report.notes.append("STUB: Riemannian diffusion replaced by non-cooperative learning (no combine step).")
    return report


def load_real_data(c: Config) -> np.ndarray | None:
    """The MNIST images when ``c.real_data == "mnist"`` (loaded first: a missing file fails before any work), else
    None (the digits are loaded by :func:`digits_pca`)."""
    if c.real_data != "mnist":
        return None
    from .data import load_mnist

    return load_mnist(c.mnist_path or None)


def run_agreement_and_pca(c: Config, a: np.ndarray, seed: int, stub: bool) -> tuple[dict, dict]:
    """The consensus-only run (combine steps alone) and the synthetic PCA comparison (Fig. 2)."""
    cons = consensus_only(a, seed, c.consensus_steps, c.d, c.r, c.consensus_angle, stub=stub)
    pca = pca_comparison(a, seed, c.pca_runs, c.pca_iters, c.d, c.r, c.mu, c.alpha, c.drsgd_beta,
                         c.drsgd_alpha, stub=stub)
    return cons, pca


def add_agreement_claims(report: Report, c: Config, cons: dict, pca: dict) -> None:
    """Q4 (iterates stay on the Grassmann manifold) and Q1 (combine steps alone drive the agents to agreement)."""
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


def add_pca_claims(report: Report, c: Config, pca: dict, stub: bool) -> None:
    """Fig. 2: the steady-state MSD table and claims Q2, Q3, F1-F4, and the MSD figure."""
    w = c.steady_window
    ss = {name: steady_db(curve, w) for name, curve in pca["curves"].items()}
    report.add_table("pca_steady_state_msd_db", [
        {"strategy": n, "steady_state_msd_db": ss[n], "msd_db_at_i=500": float(to_db(pca["curves"][n][499]))
         if len(pca["curves"][n]) >= 500 else None, "spec_calibration_db": SPEC_DB[n]} for n in ALGOS])
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
                     all(decreasing_trend(cv) for cv in pca["curves"].values()), "is_true", None, kind="paper",
                     scale=Scale.FULL, aggregate="all", requires=["Q4"],
                     note="5 block means of the dB curve, each <= previous + 1 dB (steady-state noise allowance)")
    if not stub:
        report.add_figure("msd_pca", _figure_pca(pca["curves"], f"Synthetic PCA, K=20 ({c.pca_runs} runs)"))


def run_efficiency(c: Config, a: np.ndarray, seed: int, stub: bool) -> dict:
    """Fig. 6: the one-step combine against the exact Fréchet-mean combine (MSD, wall time, map evaluations)."""
    return efficiency(a, seed, c.eff_runs, c.eff_iters, c.d, c.r, c.mu, c.alpha, c.frechet_iters, stub=stub)


def add_efficiency_claims(report: Report, c: Config, eff: dict) -> None:
    """Fig. 6: the efficiency table and claims F5 (same MSD) and F6 (much cheaper per iteration, timing)."""
    w = c.steady_window
    w_eff = min(w, c.eff_iters // 3)
    one, exact = (steady_db(eff["curves"][k], w_eff) for k in ("one_step", "exact_frechet"))
    speed = eff["seconds_per_iter"]["exact_frechet"] / eff["seconds_per_iter"]["one_step"]
    cost = eff["maps_per_iter"]["exact_frechet"] / eff["maps_per_iter"]["one_step"]
    report.add_table("efficiency", [
        {"combine": k, "final_msd_db": steady_db(eff["curves"][k], w_eff),
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


def run_step_sizes(c: Config, a: np.ndarray, seed: int, stub: bool) -> dict:
    """Fig. 8: diffusion's MSD curves for each step size μ."""
    return step_size_study(a, seed, c.step_runs, c.step_iters, c.d, c.r, c.step_sizes, c.alpha, stub=stub)


def add_step_size_claims(report: Report, c: Config, steps: dict, stub: bool) -> None:
    """Fig. 8: the step-size table, claim F7 (steady-state MSD grows with μ) and the figure."""
    w = c.steady_window
    ss_mu = [steady_db(steps[m], w) for m in steps]
    report.add_table("step_size", [{"mu": m, "steady_state_msd_db": v} for m, v in zip(steps, ss_mu, strict=True)])
    # fails if: the step size is not what drives the steady-state error (e.g. μ ignored, or normalised away)
    report.add_claim("F7", "Fig. 8: steady-state MSD increases with the step size μ ∈ {0.05, 0.07, 0.09}", None,
                     bool(all(b > a_ for a_, b in zip(ss_mu, ss_mu[1:], strict=False))), "is_true", None,
                     kind="paper", scale=Scale.FULL, aggregate="all")
    if not stub:
        report.add_figure("msd_step_size", _figure_pca({f"μ={m:g}": cv for m, cv in steps.items()},
                                                      "Diffusion, step-size study"))


def run_gmm(c: Config, a: np.ndarray, seed: int, stub: bool) -> dict:
    """Fig. 4: the four strategies on a synthetic Gaussian mixture (product of SPD and Euclidean manifolds)."""
    return gmm_comparison(a, seed, c.gmm_runs, c.gmm_iters, c.gmm_d, c.gmm_components, c.gmm_mu, c.gmm_alpha,
                          c.gmm_mu, c.gmm_drsgd_alpha, c.gmm_eval_every, c.gmm_eval_samples,
                          alpha_extra=c.gmm_alpha_extra, stub=stub)


def add_gmm_claims(report: Report, c: Config, gmm: dict, stub: bool) -> None:
    """Fig. 4: claims Q5 (SPD iterates), F8 (below non-cooperative), F9 (near centralized), table, note, figure."""
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


def run_real_data_pca(c: Config, a: np.ndarray, seed: int, mnist: np.ndarray | None, stub: bool) -> dict:
    """Real-data PCA: MNIST (the paper's Fig. 3) when loaded, else scikit-learn's digits as its substitute."""
    if mnist is not None:
        return mnist_pca(a, seed, mnist, c.r, stub=stub)
    return digits_pca(a, seed, c.digits_passes, c.r, c.digits_mu, c.digits_alpha, c.digits_mu,
                      c.digits_drsgd_alpha, stub=stub)


def add_real_data_claims(report: Report, c: Config, dig: dict, stub: bool) -> None:
    """Claim F10 (diffusion beats non-cooperative on real data), its table and figure, and the closing note."""
    on_mnist = c.real_data == "mnist"  # load_real_data loaded MNIST exactly then
    if on_mnist:
        name, detail = "MNIST, the paper's Fig. 3", f"{dig['samples_per_agent']} images per agent, one pass"
    else:
        name, detail = "digits, substitute for MNIST", (f"{dig['samples_per_agent']} digits per agent, "
                                                        f"{c.digits_passes} passes")
    final_d = {n: float(to_db(cv[-1])) for n, cv in dig["curves"].items()}
    report.add_table(f"{c.real_data}_pca_final_msd_db", [{"strategy": n, "final_msd_db": final_d[n]}
                                                          for n in ALGOS])
    # fails if: cooperation does not help on real, non-Gaussian data
    report.add_claim("F10", f"Real data ({name}): diffusion <= non-cooperative − 5 dB",
                     None, final_d["non-cooperative"] - final_d["diffusion"], ">=", 5.0, kind="paper",
                     scale=Scale.FULL, unit="dB", headline=True,
                     note=f"paper (Fig. 3, MNIST): same ordering on real data; {detail}; threshold from spec §6")
    if not stub and not on_mnist:
        report.add_figure("msd_digits", _figure_pca(dig["curves"], "Digits PCA (r=5)", xlabel="pass over the data",
                                                    x=np.arange(1, c.digits_passes + 1)))
    elif not stub:
        report.add_figure("msd_mnist", _figure_pca(dig["curves"], "MNIST PCA (r=5)", xlabel="iteration",
                                                   x=np.linspace(1, dig["samples_per_agent"],
                                                                 len(dig["curves"]["diffusion"]))))
    report.notes.append("The paper's exact dB values were not retrievable (figures only): no claim has a paper "
                        "value; 'reference' holds the spec's own calibration run (§6) and thresholds are the spec's "
                        "acceptance numbers (§6). "
                        + ("Real data: MNIST (the paper's Fig. 3)." if on_mnist
                           else "MNIST is replaced by scikit-learn's digits (MNIST at --scale paper)."))


def _figure_pca(curves: dict, title: str, xlabel: str = "iteration i", x=None):  # type: ignore[no-untyped-def]
    """MSD curves in dB, one line per strategy (or step size)."""
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
