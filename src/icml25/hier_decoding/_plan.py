"""The dry-run plan of the hierarchical-decoding reproduction (``icml25 reproduce hier_decoding --dry-run``)."""

from __future__ import annotations

from typing import Any

from icml25.core.plan import Needs, Plan, UnitCost, closest_preset

#: CPU seconds per unit, from a timing snippet of the real code on this (loaded) 2-core machine: one random tree of
#: the exactness check, one synthetic sample at one blur level (decode 8 metrics x optimal + 7 heuristics, score,
#: bootstrap), one ImCLEF07A training row of one run (noise copies, L-BFGS softmax regression, temperature, decode),
#: and the fixed timing block of F3
TREE_S = 0.022
SAMPLE_S = 3.2e-3
ROW_S = 8.6e-3
TIMING_S = 4.9
MEASURED = "2-core CPU (loaded), process CPU time of a timing snippet of the real code"
CORES = 2


def hier_decoding_plan(cfg: Any) -> Plan:
    """The plan of ``cfg`` (a :class:`icml25.hier_decoding.reproduce.Config`)."""
    par = min(cfg.n_workers, CORES)
    note = f"F1 trees and F2 runs in {cfg.n_workers} processes on {CORES} cores: /{par}" if par > 1 else ""
    f1 = len(cfg.f1_trees) * cfg.f1_samples * len(cfg.f1_blurs) * cfg.f1_seeds
    reuse = cfg.f2_train_rows == cfg.q3_train_rows and cfg.f2_seeds == 1
    f2 = cfg.f2_train_rows * cfg.f2_seeds * sum(1 for s in cfg.f2_sigmas if not (reuse and s == 2.0))
    costs = [UnitCost("Q1 exactness against exhaustive search", "random tree", cfg.n_trees * cfg.dists_per_tree / 2,
                      TREE_S, MEASURED),
             UnitCost("Q2 synthetic posteriors (tieredImageNet-H)", "sample x blur",
                      cfg.q2_samples * len(cfg.q2_blurs), SAMPLE_S, MEASURED),
             UnitCost("Q3 ImCLEF07A at sigma = 2", "training row", cfg.q3_train_rows, ROW_S, MEASURED),
             UnitCost("F1 synthetic posteriors with bootstrap CIs", "sample x blur x seed x tree", f1,
                      SAMPLE_S / par, MEASURED + " (with 300 bootstrap resamples)", note),
             UnitCost("F2 ImCLEF07A runs", "training row x run", f2, ROW_S / par, MEASURED, note),
             UnitCost("F3 timings", "run", 1, TIMING_S, MEASURED)]
    return Plan(slug="hier_decoding", scale=closest_preset(cfg), runs=1 + cfg.f2_seeds * len(cfg.f2_sigmas),
                stages=[f"Q1: optimal decoders vs exhaustive search on {cfg.n_trees} random trees (<= "
                        f"{cfg.max_tree_nodes} nodes)",
                        f"Q2: synthetic posteriors on tieredImageNet-H, blurs {list(cfg.q2_blurs)}",
                        f"Q3: ImCLEF07A softmax regression ({cfg.q3_train_rows} rows, sigma = 2), calibration, decode",
                        f"F1: {', '.join(cfg.f1_trees)}, {cfg.f1_samples} samples x {len(cfg.f1_blurs)} blurs x "
                        f"{cfg.f1_seeds} seeds, {cfg.n_bootstrap} bootstrap resamples",
                        f"F2: ImCLEF07A, {cfg.f2_train_rows} rows, sigmas {list(cfg.f2_sigmas)}, {cfg.f2_seeds} "
                        "seed(s); F3: timings"],
                models=["post-hoc decoders D1-D5 and heuristics H1-H7",
                        "softmax regression (scikit-learn) on ImCLEF07A"],
                datasets=["tieredImageNet-H and iNat19 hierarchies (shipped; posteriors synthetic)",
                          "ImCLEF07A (shipped)"],
                needs=Needs(cpu_cores=CORES, ram_gb=4.0 if cfg.f1_samples <= 5000 else 8.0, disk_gb=0.1),
                costs=costs,
                notes=["the paper's posteriors come from 9 torchvision models on the real test images, which do not "
                       "ship: F1 uses synthetic blurred posteriors at every scale"])

