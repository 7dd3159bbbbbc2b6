"""Training-step time (forward + backward + Adam) of SpikF against the neuralforecast peers, same batch, same run.

Batch of 32 ETTh1 training windows (L = 96, D = 7, horizon 96 or 336); SpikF at the full reproduction's size
(T=4, N=16, C=32, Hd=256, also the quick preset's) and our DLinear; the peers as the full reproduction builds them
(``icml25.spikf.peers.PEER_DEFAULTS``): PatchTST and DLinear are univariate (the batch is 32 x 7 series windows),
iTransformer multivariate (32 windows of 7 variates). The step calls each model's ``forward`` on the batch dict
neuralforecast gives it (no Lightning trainer in the loop), so the ratios compare the networks, not the data
pipelines. Median over repeats after one warm-up step, 1 torch thread.

    python benchmarks/spikf/bench_peers.py [--repeats 7] [--horizon 96]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import torch

from icml25.spikf import DLinear, LTSFDataset, SpikFForecaster, load_benchmark
from icml25.spikf.peers import PEER_DEFAULTS, PEERS, require_neuralforecast

#: SpikF at the full reproduction's size (the quick preset uses the same model)
SPIKF = dict(T=4, patch_num=16, patch_dim=32, hidden_dim=256)


def step_time(model: torch.nn.Module, forward: Any, y: torch.Tensor, loss: str, repeats: int) -> float:
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    model.train()
    times = []
    for k in range(repeats + 1):
        t = time.perf_counter()
        opt.zero_grad()
        out = forward()
        target = y.unsqueeze(0) if out.dim() == 4 else y
        d = out - target
        value = d.abs().mean() if loss == "mae" else (d * d).mean()
        value.backward()
        opt.step()
        if k:  # the first step is a warm-up
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def peer(name: str, horizon: int, n_vars: int) -> torch.nn.Module:
    require_neuralforecast()
    from neuralforecast import models

    kw = dict(PEER_DEFAULTS[name])
    if name == "iTransformer":
        kw["n_series"] = n_vars
    return getattr(models, name)(h=horizon, input_size=96, max_steps=1, enable_progress_bar=False, logger=False,
                                 accelerator="cpu", **kw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--horizon", type=int, default=96)
    args = ap.parse_args()
    torch.set_num_threads(1)
    values, _, split = load_benchmark("ETTh1")
    X, Y = LTSFDataset(values, "train", 96, args.horizon, split).windows(stride=97, limit=32)
    x, y = torch.from_numpy(X), torch.from_numpy(Y)
    B, L, D = x.shape
    uni_x = x.permute(0, 2, 1).reshape(B * D, L, 1)  # univariate peers: one series window per (window, variable)
    uni_y = y.permute(0, 2, 1).reshape(B * D, args.horizon, 1)
    rows: dict[str, tuple[int, float]] = {}
    torch.manual_seed(0)
    m = SpikFForecaster(96, args.horizon, D, **SPIKF)
    rows["SpikF (full size: T4 N16 C32 Hd256)"] = (sum(p.numel() for p in m.parameters()),
                                                   step_time(m, lambda: m(x), y, "mae", args.repeats))
    torch.manual_seed(0)
    dl = DLinear(96, args.horizon, D)
    rows["DLinear (ours)"] = (sum(p.numel() for p in dl.parameters()),
                              step_time(dl, lambda: dl(x), y, "mse", args.repeats))
    for name in PEERS:
        torch.manual_seed(0)
        p = peer(name, args.horizon, D)
        multi = name == "iTransformer"
        batch = {"insample_y": x if multi else uni_x, "insample_mask": torch.ones_like(x if multi else uni_x),
                 "futr_exog": None, "hist_exog": None, "stat_exog": None}
        target = y if multi else uni_y
        rows[f"{name} (neuralforecast)"] = (sum(q.numel() for q in p.parameters()),
                                            step_time(p, lambda p=p, batch=batch: p(batch), target, "mse",
                                                      args.repeats))
    spikf_t = rows["SpikF (full size: T4 N16 C32 Hd256)"][1]
    print(f"batch {B} windows x {D} variables, L=96, H={args.horizon}, 1 thread, median of {args.repeats} steps")
    print("| model | parameters | step (ms) | SpikF step / this step |")
    print("|---|---|---|---|")
    for name, (n_par, t) in rows.items():
        print(f"| {name} | {n_par:,} | {1e3 * t:.1f} | {spikf_t / t:.2f}x |")


if __name__ == "__main__":
    main()
