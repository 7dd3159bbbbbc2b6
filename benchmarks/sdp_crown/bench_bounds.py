"""Per-image wall time of α-CROWN and SDP-CROWN on the paper's MNIST MLP (batched vs one image at a time), and the
full-network SDP (cvxpy/Clarabel) on a small digits MLP for the time-vs-tightness picture.

Run: .venv/bin/python benchmarks/sdp_crown/bench_bounds.py [--batch 20 --iters 40 --single 5]
"""

from __future__ import annotations

import argparse
import time

import torch

from icml25.sdp_crown import (
    BoundedNet,
    compute_bounds,
    digits_data,
    load_images,
    load_model,
    spec_matrix,
    train_digits_mlp,
)
from icml25.sdp_crown.oracles import exact_min, sdp_full


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--single", type=int, default=5, help="images timed one at a time")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    net = BoundedNet(load_model("mnist_mlp"), (1, 28, 28))
    X, y = load_images("mnist", args.batch)
    print(f"MNIST MLP, ρ = 1.0, {args.iters} iterations, {args.threads} thread(s)")
    for method in ("alpha-crown", "sdp-crown"):
        t = time.perf_counter()
        lb, _ = compute_bounds(net, X, 1.0, y, method=method, iters=args.iters)
        batched = (time.perf_counter() - t) / args.batch
        t = time.perf_counter()
        for i in range(args.single):
            compute_bounds(net, X[i:i + 1], 1.0, y[i:i + 1], method=method, iters=args.iters)
        single = (time.perf_counter() - t) / args.single
        print(f"  {method:12s} batched {batched:.3f} s/image, one at a time {single:.3f} s/image, "
              f"speed-up {single / batched:.1f}x, mean bound {lb.mean():.3f}")

    data = digits_data(0)
    dnet = BoundedNet(train_digits_mlp((8, 8), data=data), (64,))
    x, yy = data[2][:1], data[3][:1]
    C = spec_matrix(yy, 10)
    c = C[0, 0].numpy()
    t = time.perf_counter()
    sdp_val = sdp_full(dnet, x[0], 0.5, c)
    t_sdp = time.perf_counter() - t
    t = time.perf_counter()
    exact = exact_min(dnet, x[0], 0.5, c)
    t_exact = time.perf_counter() - t
    t = time.perf_counter()
    ours = compute_bounds(dnet, x, 0.5, C[:, :1], method="sdp-crown-hybrid", iters=50)[0].item()
    t_ours = time.perf_counter() - t
    print(f"digits MLP 64-8-8-10, ρ = 0.5, one spec: exact {exact:.4f} ({t_exact:.2f} s), full SDP {sdp_val:.4f} "
          f"({t_sdp:.2f} s), SDP-CROWN hybrid {ours:.4f} ({t_ours:.2f} s); SDP/SDP-CROWN time ratio "
          f"{t_sdp / t_ours:.1f}x")


if __name__ == "__main__":
    main()
