"""The dry-run plan of the EGPlace reproduction (``icml25 reproduce egplace --dry-run``) and the ISPD2005 circuits
the presets name: nothing is decoded, no netlist is read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from icml25.core.plan import Needs, Plan, UnitCost, closest_preset

if TYPE_CHECKING:
    from .reproduce import Config

#: WireMask-BBO's grid G per ISPD2005 circuit (its common.py, spec §2.1) for the circuits the paper runs on all macros
#: (bigblue2/4 use 1,024-macro subsets selected by EGPlace, which are not published)
ISPD_GRID = {"adaptec1": 160, "adaptec2": 158, "adaptec3": 113, "adaptec4": 108, "bigblue1": 160, "bigblue3": 234}
#: their macro counts (terminals; MaskPlace/WireMask-BBO tables, adaptec1 checked on the shipped partial copy), used
#: only by the dry-run estimate
ISPD_MACROS = {"adaptec1": 543, "adaptec2": 566, "adaptec3": 723, "adaptec4": 1329, "bigblue1": 560, "bigblue3": 1293}

#: CPU seconds of one full decode of M macros on a G×G grid, fitted as M·(a + b·G²) to thread-clock timings of ibm01
#: (M = 246) at G = 64 (0.050 s) and G = 128 (0.091 s) on this project's loaded 2-core machine; checked on a
#: synthetic M = 100, G = 64 netlist (0.020 s measured, 0.020 s fitted)
_DECODE_A, _DECODE_B = 1.48e-4, 1.366e-8
#: CPU seconds of one decode with the official loop masks (``GreedyDecoder.decode_loop``), fitted as c·M² + d·P·G
#: (P pins; the stamping loop over placed macros and the column loops over pins) to thread-clock timings of ibm01 and
#: synthetic M = 100 / 400 netlists at G = 64 and 128 on the loaded 2-core machine (0.06-0.61 s, within 25 %)
_LOOP_C, _LOOP_D = 1.54e-6, 1.34e-6
#: pins per macro assumed for the ISPD2005 circuits in the loop estimate (ibm01's 1,928 / 246)
_PINS_PER_MACRO = 7.8
#: CPU seconds of the decoder/mask/incremental checks (D1-D4, S1-S3) at the quick sizes, timed here (thread clock)
_CHECKS_S = 5.0


def _decode_s(macros: int, grid: int) -> float:
    return macros * (_DECODE_A + _DECODE_B * grid**2)


def _speedup_sample_s(macros: int, grid: int, pins: float) -> float:
    """CPU seconds of one sampled genotype of the speed-up estimate: loop and vectorised decode, interleaved."""
    from .experiment import SPEEDUP_REPEATS

    return SPEEDUP_REPEATS * (_LOOP_C * macros**2 + _LOOP_D * pins * grid + _decode_s(macros, grid))


def _efficientplace_status(cfg: Config) -> str:
    """The dry run's line for the user's EfficientPlace results file: found, missing or not given."""
    from pathlib import Path

    path = cfg.efficientplace_results
    if not path:
        return ("EfficientPlace results (not given: --set efficientplace_results=<.csv/.json> from your run of the "
                "official code; the two EfficientPlace claims stay not measured)")
    return f"EfficientPlace results {path} ({'found' if Path(path).expanduser().is_file() else 'missing'})"


def egplace_plan(cfg: Config) -> Any:
    """The dry-run plan: evaluations (decodes) per stage times the fitted decode cost (an upper bound for EGPlace,
    whose incremental decodes cost about half)."""
    where = "2-core CPU, thread clock, ibm01 decodes fitted as M(a + bG^2)"
    ibm = 246
    costs = [UnitCost("decoder, mask and incremental checks", "run", 1, _CHECKS_S, "2-core CPU, thread clock"),
             UnitCost(f"ibm01 search (G={cfg.search_grid})", "evaluation", 2 * cfg.n_seeds * cfg.search_evals,
                      _decode_s(ibm, cfg.search_grid), where)]
    if cfg.speedup_samples:
        costs.append(UnitCost(f"loop-mask WireMask-EA time estimate (ibm01, G={cfg.search_grid})", "sampled genotype",
                              cfg.n_seeds * cfg.speedup_samples, _speedup_sample_s(ibm, cfg.search_grid, 1928),
                              "2-core CPU, thread clock, loop decodes fitted as cM^2 + dPG"))
    if cfg.ablation_seeds:
        costs.append(UnitCost("ablations (ibm01)", "evaluation", 3 * cfg.ablation_seeds * cfg.ablation_evals,
                              _decode_s(ibm, cfg.search_grid), where))
    if cfg.transfer_instances:
        costs.append(UnitCost(f"synthetic transfer (M={cfg.transfer_macros}, G={cfg.transfer_grid})", "evaluation",
                              2 * cfg.transfer_instances * cfg.transfer_evals,
                              _decode_s(cfg.transfer_macros, cfg.transfer_grid), where))
    for c in cfg.ispd_circuits:
        costs.append(UnitCost(f"ISPD2005 {c} (M≈{ISPD_MACROS[c]}, G={ISPD_GRID[c]})", "evaluation",
                              2 * cfg.n_seeds * cfg.search_evals, _decode_s(ISPD_MACROS[c], ISPD_GRID[c]), where,
                              "macro count from the MaskPlace/WireMask-BBO tables"))
        if cfg.speedup_samples:
            costs.append(UnitCost(f"ISPD2005 {c}: loop-mask WireMask-EA time estimate", "sampled genotype",
                                  cfg.n_seeds * cfg.speedup_samples,
                                  _speedup_sample_s(ISPD_MACROS[c], ISPD_GRID[c], _PINS_PER_MACRO * ISPD_MACROS[c]),
                                  "2-core CPU, thread clock, loop decodes fitted as cM^2 + dPG",
                                  f"{_PINS_PER_MACRO} pins per macro assumed (ibm01's)"))
    scale = closest_preset(cfg)
    stages = ["decoder equivalence, incremental decoding, mask speed (synthetic + ibm01)",
              f"ibm01: WireMask-EA vs EGPlace, {cfg.n_seeds} seeds x {cfg.search_evals} evaluations, G={cfg.search_grid}"]
    if cfg.speedup_samples:
        stages.append(f"the abstract's speed-up: {cfg.speedup_samples} WireMask-EA genotypes per seed re-decoded with "
                      "the official loop masks (time estimate of the loop-mask WireMask-EA run)")
    if cfg.ablation_seeds:
        stages.append(f"ablations: no incremental decoding, m=1 ({cfg.ablation_seeds} seeds)")
    if cfg.transfer_instances:
        stages.append(f"{cfg.transfer_instances} synthetic M={cfg.transfer_macros} instances")
    if cfg.ispd_circuits:
        stages.append(f"ISPD2005 {', '.join(cfg.ispd_circuits)}: WireMask-EA vs EGPlace, {cfg.n_seeds} seeds x "
                      f"{cfg.search_evals} evaluations at WireMask's grids")
    return Plan(slug="egplace", scale=scale, stages=stages, models=[],
                datasets=["IBM-MS ibm01 (shipped)", *(f"ISPD2005 {c} (provided by the user)" for c in cfg.ispd_circuits),
                          *([_efficientplace_status(cfg)] if cfg.ispd_circuits else [])],
                runs=cfg.n_seeds,
                needs=Needs(cpu_cores=1, ram_gb=2.0 if cfg.ispd_circuits else 1.0, disk_gb=0.5,
                            downloads=tuple(f"ISPD2005 {c} bookshelf (placed by hand in ispd_dir)"
                                            for c in cfg.ispd_circuits)),
                costs=costs,
                notes=["EfficientPlace (the abstract's −9.3 % / 2.8x; RL + MCTS on a GPU) is not re-implemented: "
                       "those claims compare EGPlace's runs here with the results of the user's own run of the "
                       "official code (efficientplace_results), and stay not measured without it"]
                if cfg.ispd_circuits else [])
