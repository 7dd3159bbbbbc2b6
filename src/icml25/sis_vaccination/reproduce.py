"""Reproduction of 'Learn to Vaccinate' (ICML 2025): spec §6 quick checks 1-5 and the full-mode learning curves,
vaccination table and meta-stability map, at sizes set by :class:`Config`."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, fields
from pathlib import Path

import networkx as nx
import numpy as np

from icml25.core import Report, Scale, reproduction
from icml25.core.progress import progress
from icml25.core.registry import reproduction_stub
from icml25.core.seeding import spawn_seeds
from icml25.core.validation import check_int

from . import _experiments as ex
from ._threads import single_blas_thread


@dataclass(frozen=True)
class Config:
    star_reps: int = 50  # replicas of the star-graph prevalence run (quick check 1)
    star_steps: int = 4000  # steps per replica of the star-graph prevalence run
    star_burn_in: int = 200  # steps discarded before measuring prevalence
    hub_reps: int = 400  # replicas of the vaccinated-hub extinction time (quick check 1)
    nu_transitions: int = 200_000  # transitions for the exact ν identity on the 6-vertex graph (check 2)
    learn_T: int = 3000  # observed transitions for practical SISLearn on the flu graph (check 3)
    learn_seeds: int = 3  # seeds of check 3
    srm_instances: int = 10  # random partial 2-trees / random trees for the SRM checks (checks 4-5)
    curve_T: tuple[int, ...] = (500, 1000, 2000, 5000, 10000, 20000)  # learning-curve observation lengths
    curve_seeds: int = 5  # seeds per learning-curve point
    vac_budgets: tuple[int, ...] = (2, 4, 6, 8)  # vaccination budgets k
    vac_seeds: int = 5  # independent learn-and-vaccinate runs
    vac_reps: int = 30  # extinction-time replicas per strategy and run
    vac_cap: int = 5000  # censoring time of extinction times
    vac_T_learn: int = 5000  # transitions observed before vaccinating
    map_runs: int = 20  # runs per (p_inf, p_rec) cell of the meta-stability map
    map_cap: int = 2000  # censoring time of the meta-stability map

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                if not value:
                    raise ValueError(f"{f.name} must hold at least one value, got ()")
                for x in value:
                    check_int(x, f.name, low=1)
            else:
                check_int(value, f.name, low=1)
        if self.star_burn_in >= self.star_steps:
            raise ValueError(f"star_burn_in must be < star_steps ({self.star_steps}), got {self.star_burn_in}")
        if self.nu_transitions < 100:
            raise ValueError(f"nu_transitions must be >= 100 (100 reseeded segments), got {self.nu_transitions}")
        if max(self.vac_budgets) > 40:
            raise ValueError(f"vac_budgets must be <= 40 (vertices of the flu graph), got {max(self.vac_budgets)}")

    @classmethod
    def quick(cls) -> Config:
        return cls(star_reps=20, star_steps=2000, curve_T=(500, 5000), curve_seeds=1, vac_budgets=(4, 8),
                   vac_seeds=1, vac_reps=15, vac_cap=2000, map_runs=8, map_cap=600)

    @classmethod
    def full(cls) -> Config:
        return cls()


def _run(config: Config, seed: int, methods: ex.Methods) -> Report:
    report = Report(slug="sis_vaccination", title="Learn to Vaccinate (ICML 2025)")
    seeds = spawn_seeds(seed, 8)
    timings = {}
    stages = [("star", ex.check_star), ("nu", ex.check_exact_nu), ("learn", ex.check_practical_learning),
              ("srm", ex.check_srm), ("curves", ex.learning_curves), ("vaccination", ex.vaccination_table),
              ("map", ex.metastability_map)]
    with single_blas_thread(), warnings.catch_warnings():
        # learning warnings (reseeded epidemics, exact→heuristic fallback) are expected in the sweeps
        warnings.simplefilter("ignore", UserWarning)
        for i, (name, stage) in enumerate(progress(stages, "sis_vaccination")):
            t0 = time.perf_counter()
            stage(report, config, seeds[i], methods)
            timings[name] = round(time.perf_counter() - t0, 2)
    report.add_table("stage_wall_time_s", [timings])
    report.config["methods"] = methods.name
    report.config["networkx"] = nx.__version__
    report.config["numpy"] = np.__version__
    return report


@reproduction(slug="sis_vaccination", title="Learn to Vaccinate: Combining Structure Learning and Effective "
              "Vaccination for Epidemic and Outbreak Control", arxiv="2506.15397", extras=("graphs", "plot"),
              config=Config)
def reproduce(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """Spec §6 quick checks 1-5 and the full-mode experiments with the paper's methods."""
    return _run(config, seed, ex.PAPER)


@reproduction_stub(slug="sis_vaccination")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The same run with the paper's methods replaced by their naive baselines: the MLE learner of Barbillon et
    al. instead of SISLearn, and random vaccination instead of greedy SRM, the DP and the tree algorithm."""
    return _run(config, seed, ex.BASELINE)
