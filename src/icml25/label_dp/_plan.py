"""The dry-run plan of the label-DP reproduction (``icml25 reproduce label_dp --dry-run``): nothing is computed."""

from __future__ import annotations

import math
from typing import Any

from icml25.core.plan import Needs, Plan, UnitCost, closest_preset

#: seconds per simulated or resampled data set of n records: privatise, fit the RR-MLE, the naive and the debiased
#: estimators. The per-record slope is from a timing snippet of ``_fit_many`` on this 2-core machine; the per-
#: repetition part is set so that the full preset's estimate equals the README's full run (327 s, 7,200 repetitions)
PER_REP_S = 0.042
PER_RECORD_S = 3e-7
#: design checks (E1: grid search, convexity, audit), data loading and Pima: a timing snippet (CPU time)
FIXED_S = 1.0
MEASURED = "2-core CPU: full run of the README (327 s) and a timing snippet of the real code"


def _kept(n: int, eps: float) -> bool:
    """Grid cells with n s^2 < 500 are skipped by the reproduction (too little signal to cover)."""
    s = (math.exp(eps) - 1) / (math.exp(eps) + 1)
    return n * s * s >= 500


def label_dp_plan(cfg: Any) -> Plan:
    """The plan of ``cfg`` (a :class:`icml25.label_dp.reproduce.Config`)."""
    cells = [(n, e) for n in cfg.grid_ns for e in cfg.grid_eps if _kept(n, e)] * (len(cfg.grid_links)
                                                                                  * len(cfg.grid_intercepts))
    parts = {"E2 headline simulation": (cfg.sim_reps, cfg.sim_reps * cfg.sim_n),
             "E3 simulation grid": (len(cells) * cfg.grid_reps, sum(n for n, _ in cells) * cfg.grid_reps),
             "E4 (eps, delta) designs": (9 * cfg.delta_reps, 9 * cfg.delta_reps * cfg.delta_n),
             "E5 Adult subsamples": (len(cfg.adult_ns) * len(cfg.adult_eps) * cfg.adult_reps,
                                     sum(cfg.adult_ns) * len(cfg.adult_eps) * cfg.adult_reps)}
    costs = [UnitCost("E1 design checks, data loading, Pima", "run", 1, FIXED_S, MEASURED)]
    for what, (reps, records) in parts.items():
        costs.append(UnitCost(what, "fitted repetition", reps,
                              PER_REP_S + PER_RECORD_S * records / max(reps, 1), MEASURED,
                              f"{PER_REP_S:g} s per repetition + {PER_RECORD_S:g} s per record"))
    return Plan(slug="label_dp", scale=closest_preset(cfg), runs=1,
                stages=["E1: vertex characterisation, grid search, convexity, (eps, delta) designs, privacy audit",
                        f"E2: RR-MLE vs naive vs debiased, n = {cfg.sim_n}, eps = {cfg.sim_eps:g}, "
                        f"{cfg.sim_reps} repetitions",
                        f"E3: grid of {len(cells)} cells (links {list(cfg.grid_links)}, intercepts "
                        f"{list(cfg.grid_intercepts)}, n {list(cfg.grid_ns)}, eps {list(cfg.grid_eps)}), "
                        f"{cfg.grid_reps} repetitions each",
                        f"E4: (eps, delta) designs, {cfg.delta_reps} repetitions; E5: Adult n {list(cfg.adult_ns)}, "
                        f"eps {list(cfg.adult_eps)}, {cfg.adult_reps} subsamples; Pima",
                        "claims, tables, figure"],
                models=["randomized-response binary regression (Fisher scoring), naive and debiased baselines"],
                datasets=["simulated covariates (1, N(0, I2))", "UCI Adult (shipped)", "Pima Indians diabetes (shipped)"],
                needs=Needs(cpu_cores=1, ram_gb=2.0, disk_gb=0.1), costs=costs,
                notes=["only the paper's abstract was readable: the paper preset's sizes are our choice"])

