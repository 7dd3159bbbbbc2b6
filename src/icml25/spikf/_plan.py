"""The dry-run plan of the SpikF reproduction (``icml25 reproduce spikf --dry-run``): no data is read, no torch."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from icml25.core.plan import Needs, Plan, UnitCost, closest_preset

from .data import BENCHMARKS, split_borders

#: (rows, variables) of each benchmark file (spec §5; the standard Autoformer/ETDataset files)
SIZES: dict[str, tuple[int, int]] = {"ETTh1": (17420, 7), "ETTh2": (17420, 7), "ETTm1": (69680, 7),
                                     "ETTm2": (69680, 7), "weather": (52696, 21), "exchange_rate": (7588, 8),
                                     "electricity": (26304, 321), "traffic": (17544, 862),
                                     "national_illness": (966, 7)}
#: model MACs per window and variable (all T steps) -> seconds per training window and variable, one CPU thread:
#: README benchmark (bench_train_step.py, batch 32, D=7, median of 5 steps) for the quick, full and paper sizes
TRAIN_SECONDS = ((252_928, 45.1e-3 / 224), (1_210_368, 119.9e-3 / 224), (26_304_672, 1868.8e-3 / 224))
#: evaluation (no gradient, batch 256) costs this fraction of a training step per window, measured here with a
#: timing snippet on the full and paper sizes (0.34 and 0.42; the loaded machine)
EVAL_FRACTION = 0.4
#: DLinear: 1.0 ms per training batch of 32 windows of 7 variables (README benchmark); evaluation the same
DLINEAR_SECONDS = 1.0e-3 / 224
#: assumed speed-up of one data-centre GPU over one CPU thread for these small convolution/FFT networks
GPU_SPEEDUP = 50.0
MEASURED_ON = "2-core CPU, 1 torch thread (README benchmark table, bench_train_step.py)"
#: neuralforecast peers, measured on ETTh1-96 (fit_peer, 3 epochs at stride 2, 1 thread, the loaded 2-core machine;
#: README "SpikF vs peers"): fit seconds of PatchTST + iTransformer + DLinear together (79.6 + 14.0 + 29.4 s,
#: validation included) per training window x variable x epoch (3 x 4,225 x 7), and the test prediction
#: (cross-validation frames) per peer and test window x variable x horizon step
PEER_TRAIN_SECONDS = 123.0 / (3 * 4225 * 7)
PEER_EVAL_SECONDS = 10.6 / (3 * 2785 * 7 * 96)


def model_macs(T: int, patch_num: int, patch_dim: int, hidden_dim: int, blocks: int, seq_len: int = 96,
               horizon: int = 96) -> float:
    """Dense multiply-accumulates of one window and one variable over all T steps (the cost model of the plan)."""
    N, C, P, Nf = patch_num, patch_dim, seq_len // patch_num, patch_num // 2 + 1
    block = 2 * 2 * N * math.log2(N) * C + C * N * Nf + C * C * 8 * N
    return T * (N * P * C + blocks * block + N * C * hidden_dim + hidden_dim * horizon)


def _train_seconds(macs: float) -> float:
    """Seconds per training window and variable: the nearest measured size, scaled by MACs."""
    ref_macs, ref_s = min(TRAIN_SECONDS, key=lambda r: abs(math.log(r[0] / macs)))
    return ref_s * macs / ref_macs


def _windows(cell: str, seq_len: int) -> tuple[int, int, int, int]:
    """(train, val, test) windows at stride 1 and the variable count of ``cell``."""
    name, horizon = cell.rsplit("-", 1)
    rows, n_vars = SIZES[name]
    b1, b2 = split_borders(rows, seq_len, BENCHMARKS[name][1])
    n = [max(0, b2[i] - b1[i] - seq_len - int(horizon) + 1) for i in range(3)]
    return n[0], n[1], n[2], n_vars


def spikf_plan(cfg: Any) -> Plan:
    """The plan of ``cfg`` (a :class:`icml25.spikf.reproduce.Config`)."""
    from .experiment import PAPER_PER_DATASET

    def cell_cfg(cell: str) -> Any:
        over = PAPER_PER_DATASET.get(cell.rsplit("-", 1)[0], {}) if cfg.per_dataset else {}
        return dataclasses.replace(cfg, **over)

    gpu = cfg.device.startswith("cuda")
    speed = GPU_SPEEDUP if gpu else 1.0
    first = cfg.cells[0]
    jobs = [first] * cfg.n_seeds + list(cfg.cells[1:]) + ([first] if cfg.ablation else [])
    train_s = eval_s = dl_units = 0.0
    train_units = eval_units = 0.0
    for cell in jobs:
        c = cell_cfg(cell)
        n_tr, n_va, n_te, D = _windows(cell, c.seq_len)
        n_te = min(n_te, c.test_limit) if c.test_limit else n_te
        per = _train_seconds(model_macs(c.T, c.patch_num, c.patch_dim, c.hidden_dim, c.blocks, c.seq_len,
                                        int(cell.rsplit("-", 1)[1])))
        tr = c.epochs * math.ceil(n_tr / c.train_stride) * D
        ev = (c.epochs * math.ceil(n_va / c.val_stride) + n_te + min(c.energy_windows or n_te, n_te)) * D
        train_units += tr
        eval_units += ev
        train_s += tr * per / speed
        eval_s += ev * per * EVAL_FRACTION / speed
    for cell in cfg.cells:
        n_tr, n_va, n_te, D = _windows(cell, cfg.seq_len)
        dl_units += cfg.dlinear_epochs * (math.ceil(n_tr / cfg.train_stride) + math.ceil(n_va / cfg.val_stride)) * D
        dl_units += n_te * D
    peer_train = peer_eval = 0.0
    if cfg.peers:
        from .peer_comparison import cell_stride, comparison_cells

        for cell in comparison_cells(cfg):
            c = cell_cfg(cell)
            n_tr, n_va, n_te, D = _windows(cell, c.seq_len)
            stride, H = cell_stride(c, n_tr), int(cell.rsplit("-", 1)[1])
            if not (cell in cfg.cells and stride == c.train_stride):  # a new SpikF run (else reused)
                per = _train_seconds(model_macs(c.T, c.patch_num, c.patch_dim, c.hidden_dim, c.blocks, c.seq_len, H))
                tr = c.epochs * math.ceil(n_tr / stride) * D
                ev = (c.epochs * math.ceil(n_va / stride) + n_te) * D
                train_units += tr
                eval_units += ev
                train_s += tr * per / speed
                eval_s += ev * per * EVAL_FRACTION / speed
            peer_train += cfg.peer_epochs * math.ceil(n_tr / stride) * D
            peer_eval += len(cfg.peers) * n_te * D * H
    note = f"GPU assumed {GPU_SPEEDUP:g}x one CPU thread (not measured: no GPU here)" if gpu else ""
    costs = [UnitCost("SpikF training (upper bound: every epoch runs)", "window x variable x epoch", train_units,
                      train_s / max(train_units, 1), MEASURED_ON + "; other sizes scaled by MACs", note),
             UnitCost("SpikF evaluation (validation each epoch, test, firing rates)", "window x variable",
                      eval_units, eval_s / max(eval_units, 1),
                      MEASURED_ON + f"; evaluation {EVAL_FRACTION:g}x a training step (timing snippet here)", note),
             UnitCost("DLinear training and evaluation", "window x variable", dl_units, DLINEAR_SECONDS / speed,
                      MEASURED_ON, note)]
    if cfg.peers:
        costs += [UnitCost(f"neuralforecast peers training ({', '.join(cfg.peers)}; upper bound)",
                           "window x variable x epoch", peer_train, PEER_TRAIN_SECONDS / speed,
                           "2-core CPU, 1 torch thread (fit_peer on ETTh1-96, the three peers summed, validation included)", note),
                  UnitCost("neuralforecast peers test prediction (cross-validation frames)",
                           "window x variable x horizon step", peer_eval, PEER_EVAL_SECONDS,
                           "2-core CPU (ETTh1-96 preview run)", "")]
    names = sorted({c.rsplit("-", 1)[0] for c in cfg.cells} | set(cfg.peer_datasets), key=list(SIZES).index)
    from icml25.core.data import shipped_path

    shipped = {n for n in names if shipped_path("spikf", BENCHMARKS[n][0]).is_file()}
    by_hand = "place it in $ICML25_CACHE/spikf or ~/.cache/icml25/spikf (Autoformer bundle)"
    downloads = tuple(f"{BENCHMARKS[n][0]} ({'--allow-download from ETDataset' if BENCHMARKS[n][2] else by_hand})"
                      for n in names if n not in shipped
                      and not (cfg.data_dir and (Path(cfg.data_dir) / BENCHMARKS[n][0]).is_file()))
    big = max(SIZES[n][1] for n in names)
    sizes = {(cell_cfg(c).T, cell_cfg(c).patch_num, cell_cfg(c).patch_dim, cell_cfg(c).hidden_dim,
              cell_cfg(c).blocks) for c in cfg.cells}
    models = [f"SpikF T={T}, N={N}, C={C}, Hd={Hd}, K={K}" for T, N, C, Hd, K in sorted(sizes)]
    needs = Needs(cpu_cores=max(1, cfg.threads) + 1, gpus=1 if gpu else 0,
                  gpu_memory_gb=(24.0 if big > 100 else 8.0) if gpu else 0.0,
                  ram_gb=32.0 if big > 100 else 4.0, disk_gb=1.0 if len(names) > 2 else 0.2, downloads=downloads)
    return Plan(slug="spikf", scale=closest_preset(cfg), runs=len(jobs),
                stages=[f"load {', '.join(names)}; Informer/Time-Series-Library splits, scaler fitted on train",
                        f"train SpikF on {len(cfg.cells)} cell(s), {cfg.n_seeds} seed(s) on {first}"
                        + (", and the all-ones-mask ablation" if cfg.ablation else ""),
                        f"train DLinear on every cell ({cfg.dlinear_epochs} epochs, MSE)",
                        "evaluate on the test windows (T-averaged predictions, standardised MAE/MSE)",
                        *([f"SpikF, DLinear and the neuralforecast peers ({', '.join(cfg.peers)}) on "
                           f"{' x '.join(map(str, (len(cfg.peer_datasets), len(cfg.peer_horizons))))} cells, all "
                           "test windows (claim H2)"] if cfg.peers else []),
                        "firing rates, mask statistics and the MAC/AC energy estimate; report"],
                models=[*models, "DLinear (moving average 25, shared Linear L->H)"],
                datasets=[f"{n} ({SIZES[n][0]} rows x {SIZES[n][1]} variables"
                          + (", shipped)" if n in shipped else ")") for n in names],
                needs=needs, costs=costs,
                notes=["epochs are an upper bound: early stopping (patience "
                       f"{cfg.patience}) usually ends runs sooner",
                       (f"claim H2: SpikF vs {', '.join(cfg.peers)} (neuralforecast, extra 'forecast') on "
                        f"{len(cfg.peer_datasets)} data set(s) x {len(cfg.peer_horizons)} horizon(s)" if cfg.peers
                        else "no peer comparison (claim H2 needs Config.peers)")])

