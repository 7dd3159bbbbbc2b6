"""The dry-run plan of the SDP-CROWN reproduction (``icml25 reproduce sdp_crown --dry-run``) and the Table 1 model
lists the presets use: no weights or images are read, torch is not imported."""

from __future__ import annotations

from typing import TYPE_CHECKING

from icml25.core.plan import Needs, Plan, UnitCost, closest_preset

if TYPE_CHECKING:
    from .reproduce import Config

#: Table 1 conv models run in the full reproduction and their default number of images N, chosen from measured
#: per-image times (README, "Results") so that the default full run stays under an hour on 2 CPU cores
_SHIPPED_N = {"mnist_convsmall": 60, "cifar10_cnn_a": 50, "cifar10_cnn_c": 60, "cifar10_convsmall": 60,
              "cifar10_convdeep": 30}
#: every conv model of Table 1: the shipped ones and the three whose weights the user provides (paper scale; N = 200)
_TABLE1_N = {**_SHIPPED_N, "mnist_convlarge": 200, "cifar10_cnn_b": 200, "cifar10_convlarge": 200}


#: measured CPU seconds (one torch thread, this project's shared 2-core machine) per unit of each section; see README
#: "Paper scale" for where each number comes from
_COST = {
    # quick run of 2026-12-03 (seed 0, load ~7 on 2 cores), CPU seconds of its sections (report table "timings"):
    "theorems": 0.0041,  # per draw × 10k sampled points (4.1 s for 1,000 draws)
    "mlp": 0.0304,  # per MLP image × iteration × timing repeat, 4 bound methods + PGD (45.6 s for 10 × 30 × 5; a
    # batch of 10: larger batches cost less per image)
    "sweep": 0.022,  # per sweep image × radius × iteration, α-CROWN + SDP-CROWN + PGD (7.1 s for 4 × 8 × 10)
    "tight_image": 10.8,  # per digits image at 50 iterations, with the digits-MLP training (10.8 s for 1 image)
    "tight_sdp": 35.0,  # per full-network SDP instance (cvxpy/Clarabel; README benchmark: 33.9 s on 64-8-8-10)
}
#: per conv model, CPU seconds per image (README "N per model" table; CNN-B and ConvLarge timed here with random
#: weights of the release's architecture): PGD 200 steps × 6 starts, one CROWN pass, α-CROWN and SDP-CROWN at 20
#: iterations with fixed intermediate bounds
_CONV_COST = {
    "mnist_convsmall": (2.8, 0.20, 0.38, 0.80), "cifar10_cnn_a": (4.7, 0.44, 0.57, 1.32),
    "cifar10_cnn_c": (2.3, 0.17, 0.22, 0.60), "cifar10_convsmall": (3.0, 0.22, 0.29, 0.79),
    "cifar10_convdeep": (3.0, 2.2, 1.98, 3.36),  # PGD not timed alone: taken as ConvSmall's
    # not shipped, timed here with random weights (1 image; PGD: 20 steps x 1 start, x 60); α and SDP-CROWN scaled
    # from the CROWN pass by CNN-A's ratios (1.3x, 3.0x)
    "cifar10_cnn_b": (35.0, 14.8, 19.2, 44.4),  # CROWN pass 14.8 s
    "cifar10_convlarge": (68.0, 180.0, 234.0, 540.0),  # CROWN pass unfinished after 180 s of CPU: a lower bound
    "mnist_convlarge": (52.0, 140.0, 182.0, 420.0),  # CIFAR ConvLarge's times x 0.77 (its neuron/MAC ratio)
}
#: optimising every layer's α/λ (``optimize_all``) costs, per iteration and method, this many CROWN passes (measured
#: on CIFAR CNN-C, 2 images, 3 iterations: 1.32 s per image-iteration vs a 0.17 s CROWN pass)
_OPT_ALL_PASSES = 8.0
#: assumed speed of a GPU over one CPU thread for the bound propagation (not measured: no GPU in this session)
_GPU_SPEEDUP = 20.0


def sdp_crown_plan(cfg: Config) -> Plan:
    """The dry-run plan of ``cfg``: per-section unit costs from :data:`_COST` and :data:`_CONV_COST`."""
    gpu = cfg.device != "cpu"
    speed = _GPU_SPEEDUP if gpu else 1.0
    note = f"GPU assumed {_GPU_SPEEDUP:g}x one CPU thread (not measured)" if gpu else ""
    where = "2-core CPU, one torch thread, quick run (README 'Paper scale')"
    n_mlp = cfg.n_images or cfg.mlp_images
    costs = [
        UnitCost("Thm 4.1/5.2 checks", "draw x 10k points", cfg.n_draws * cfg.n_points / 1e4, _COST["theorems"], where),
        UnitCost("MNIST MLP: 4 bound methods", "image x iteration x repeat", n_mlp * max(cfg.mlp_iters, 1)
                 * cfg.timing_repeats, _COST["mlp"] / speed, where, note),
        UnitCost("Fig. 3 radius sweep", "image x radius x iteration", cfg.sweep_images * len(cfg.sweep_radii)
                 * max(cfg.sweep_iters, 1), _COST["sweep"] / speed, where, note),
        UnitCost("tightness vs exact (digits MLP)", "image", cfg.tight_images,
                 _COST["tight_image"] * max(cfg.tight_iters, 1) / 50, where),
    ]
    if cfg.tight_sdp:
        costs.append(UnitCost("tightness: full-network SDP", "instance", cfg.tight_sdp, _COST["tight_sdp"],
                              "2-core CPU, README benchmark (cvxpy/Clarabel)"))
    for name in cfg.table1_models:
        pgd, crown, alpha, sdp = _CONV_COST[name]
        pgd *= cfg.pgd_steps * (cfg.pgd_restarts + 1) / (200 * 6)
        if cfg.optimize_all:  # every iteration re-optimises every layer's bounds, for α-CROWN and for SDP-CROWN
            per = pgd + crown * (1 + 2 * _OPT_ALL_PASSES * cfg.table1_iters)
        else:
            per = pgd + crown + (alpha + sdp) * cfg.table1_iters / 20
        costs.append(UnitCost(f"Table 1: {name}", "image", cfg.n_images or _TABLE1_N[name], per / speed,
                              "2-core CPU, one thread, 10-image batches (README per-model table)", note))
    user = [m for m in cfg.table1_models if m not in _SHIPPED_N]  # models.USER_MODELS (not imported: torch)
    notes = ["CIFAR ConvLarge (65,536 neurons with the inputs, 2,466,858 parameters) carries the abstract's numbers "
             "(claim convlarge); its per-image CPU cost was timed here with random weights"]
    if cfg.optimize_all:
        notes.append(f"optimize_all: every layer's α/λ optimised each iteration (≈{_OPT_ALL_PASSES:g} CROWN passes "
                     "per iteration and method, measured on CNN-C); --set optimize_all=false fixes the intermediate "
                     "bounds as the full preset does")
    return Plan(
        slug="sdp_crown", scale=closest_preset(cfg),
        stages=["Appendix B.3 example and Theorem 4.1/5.2 checks",
                f"MNIST MLP, ρ = {cfg.mlp_radius:g}: CROWN, α-CROWN, SDP-CROWN (+hybrid), LipNaive, PGD on {n_mlp} "
                f"images, {cfg.mlp_iters} iterations",
                f"Fig. 3 radius sweep: {cfg.sweep_images} images × {len(cfg.sweep_radii)} radii, {cfg.sweep_iters} "
                "iterations",
                f"Table 1 conv models: {', '.join(cfg.table1_models) or 'clean accuracy only'}"
                + (f", {cfg.n_images or 'N per model'} images, {cfg.table1_iters} iterations" if cfg.table1_models
                   else ""),
                f"tightness vs exact minimum (SCIP) and full SDP on a digits MLP {cfg.tight_hidden}: "
                f"{cfg.tight_images} images"],
        models=["MNIST MLP 784-100-100-10 (shipped)",
                *(f"{m} ({'shipped' if m in _SHIPPED_N else 'weights provided by the user'})"
                  for m in cfg.table1_models), f"digits MLP 64-{'-'.join(map(str, cfg.tight_hidden))}-10 (trained here)"],
        datasets=["the paper's first 200 MNIST and CIFAR-10 test images (shipped)", "scikit-learn digits (bundled)"],
        runs=1,
        needs=Needs(cpu_cores=2, gpus=1 if gpu else 0, gpu_memory_gb=32.0 if gpu else 0.0,
                    ram_gb=16.0 if user else 4.0, disk_gb=0.5,
                    weights=tuple(f"{m}.pth from the SDP-CROWN release (--set weights_dir=<folder> or "
                                  "--allow-download)" for m in user)),
        costs=costs, notes=notes)


