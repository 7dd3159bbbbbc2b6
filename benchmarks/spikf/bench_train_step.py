"""Training-step time (forward + backward + Adam) of SpikF at 1 vs 2 torch threads, against DLinear, same run.

Batch 32 of ETTh1 windows (L = H = 96, D = 7). Models: the quick reproduction's SpikF (T=4, N=16, C=16, Hd=64), the
full reproduction's (T=4, N=16, C=32, Hd=256) and the paper-size one (T=16, N=48, C=32, Hd=720); DLinear
(moving average 25) is the peer under the identical protocol. Median over repeats after one warm-up step.

    python benchmarks/spikf/bench_train_step.py [--repeats 5] [--no-paper-size]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from icml25.spikf import DLinear, LTSFDataset, SpikFForecaster, load_benchmark

SIZES = {"SpikF quick (T4 N16 C16 Hd64)": dict(T=4, patch_num=16, patch_dim=16, hidden_dim=64),
         "SpikF full (T4 N16 C32 Hd256)": dict(T=4, patch_num=16, patch_dim=32, hidden_dim=256),
         "SpikF paper (T16 N48 C32 Hd720)": dict(T=16, patch_num=48, patch_dim=32, hidden_dim=720)}


def step_time(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, repeats: int) -> float:
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    times = []
    for k in range(repeats + 1):
        t = time.perf_counter()
        opt.zero_grad()
        out = model(x)
        loss = (out - (y.unsqueeze(0) if out.dim() == 4 else y)).abs().mean()
        loss.backward()
        opt.step()
        if k:  # the first step is a warm-up
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-paper-size", action="store_true")
    args = ap.parse_args()
    values, _, split = load_benchmark("ETTh1")
    X, Y = LTSFDataset(values, "train", 96, 96, split).windows(stride=97, limit=32)
    x, y = torch.from_numpy(X), torch.from_numpy(Y)
    models = {name: kw for name, kw in SIZES.items() if not (args.no_paper_size and "paper" in name)}
    print("| model | parameters | step, 1 thread (ms) | step, 2 threads (ms) | 1 thread / DLinear (1 thread) |")
    print("|---|---|---|---|---|")
    rows = {}
    for name in ["DLinear", *models]:
        res = []
        for threads in (1, 2):
            torch.set_num_threads(threads)
            torch.manual_seed(0)
            m = DLinear(96, 96, 7) if name == "DLinear" else SpikFForecaster(96, 96, 7, **models[name])
            reps = max(1, args.repeats // 2) if "paper" in name else args.repeats
            res.append(step_time(m, x, y, reps))
        n_par = sum(p.numel() for p in m.parameters())
        rows[name] = (n_par, *res)
    base = rows["DLinear"][1]
    for name, (n_par, t1, t2) in rows.items():
        print(f"| {name} | {n_par:,} | {1e3 * t1:.1f} | {1e3 * t2:.1f} | {t1 / base:.0f}x |")
    torch.set_num_threads(1)


if __name__ == "__main__":
    main()
