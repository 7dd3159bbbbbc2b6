"""Experiment drivers of the reproduction (data generation, Monte Carlo loops); not part of the public API."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.progress import progress

from .diffusion import DRSGD, Centralized, DiffusionAdaptation, NonCooperative
from .gmm import average_log_likelihood, gmm_loss_grad, gmm_manifold, gmm_params_to_manifold
from .gmm_data import kmeans_plusplus_gmm, random_gmm_parameters, sample_gmm
from .grassmann_stiefel import Grassmann
from .metrics import disagreement, msd, to_db
from .pca import pca_loss_grad, principal_subspace, synthetic_pca_stream
from .simulate import simulate

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


def digits_pca(a: np.ndarray, seed: int, passes: int, r: int, mu: float, alpha: float, beta: float,
               alpha_c: float, stub: bool = False) -> dict[str, Any]:
    """PCA on scikit-learn's digits (1797 × 64, /16, centred) split over the agents and streamed ``passes`` times."""
    from icml25.core.optional import require

    require("sklearn", extra="stats")
    from sklearn.datasets import load_digits

    x = load_digits().data / 16.0
    x = x - x.mean(axis=0)
    rng = _rng(seed, 6)
    rng.shuffle(x, axis=0)
    k = a.shape[0]
    t_len = len(x) // k
    x = x[: k * t_len]
    target = principal_subspace(x, r)
    stream = x.reshape(k, t_len, x.shape[1])
    g = Grassmann(x.shape[1], r)
    init = g.random_point(rng)
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
    x = np.asarray(images, dtype=float) / 255.0
    x = x - x.mean(axis=0)
    rng = _rng(seed, 7)
    rng.shuffle(x, axis=0)
    k = a.shape[0]
    t_len = len(x) // k
    x = x[: k * t_len]
    target = principal_subspace(x, r)
    stream = x.reshape(k, t_len, x.shape[1])
    g = Grassmann(x.shape[1], r)
    init = g.random_point(rng)
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
