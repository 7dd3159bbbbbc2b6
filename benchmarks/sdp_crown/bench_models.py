"""Per-image CPU time of CROWN, α-CROWN and SDP-CROWN on every shipped model of Table 1 (same run, same images),
and conv layers as operators (conv2d / conv_transpose2d) vs the same layers as dense matrices on MNIST ConvSmall.

Run: .venv/bin/python benchmarks/sdp_crown/bench_models.py [--batch 10 --iters 20 --models all]
CPU seconds (one thread) are reported: on a shared machine wall time mostly measures the neighbours.
"""

from __future__ import annotations

import argparse
import time

import torch

from icml25.sdp_crown import BoundedNet, compute_bounds, load_images, load_model, spec_matrix
from icml25.sdp_crown.models import MODEL_INFO, MODELS

#: the paper's SDP-CROWN seconds per image (Table 1, V100, 300 iterations)
PAPER_S = {"mnist_mlp": 2.5, "mnist_convsmall": 12.0, "cifar10_cnn_a": 12.0, "cifar10_cnn_c": 10.0,
           "cifar10_convsmall": 9.0, "cifar10_convdeep": 25.0}


def _cpu(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--models", default="all", help="comma-separated names or 'all'")
    ap.add_argument("--dense-images", type=int, default=2, help="images for the operator-vs-dense comparison")
    args = ap.parse_args()
    torch.set_num_threads(1)
    names = MODELS if args.models == "all" else tuple(args.models.split(","))
    print(f"{args.batch} images per model, {args.iters} iterations (only the final specification optimised on conv "
          "nets), CPU s/image")
    print(f"{'model':18s} {'crown':>7s} {'α-CROWN':>8s} {'SDP-CROWN':>9s} {'SDP/α':>6s} {'paper SDP (V100)':>17s}")
    for name in names:
        dataset, shape, radius = MODEL_INFO[name]
        net = BoundedNet(load_model(name), shape)
        net.spectral_norms()
        X, y = load_images(dataset, args.batch)
        C = spec_matrix(y, 10)
        kw = {"optimize_from_layer": len(net.blocks) - 1} if net.is_conv else {}
        t = {}
        for m in ("crown", "alpha-crown", "sdp-crown"):
            t0 = time.process_time()
            compute_bounds(net, X, radius, C, method=m, iters=0 if m == "crown" else args.iters, **kw)
            t[m] = time.process_time() - t0
        b = args.batch
        print(f"{name:18s} {t['crown'] / b:7.2f} {t['alpha-crown'] / b:8.2f} {t['sdp-crown'] / b:9.2f} "
              f"{t['sdp-crown'] / t['alpha-crown']:6.2f} {PAPER_S[name]:17.1f}")

    # operators vs dense matrices (the previous implementation) on MNIST ConvSmall, CROWN and SDP-CROWN init pass
    X, y = load_images("mnist", args.dense_images)
    model = load_model("mnist_convsmall")
    print(f"\nMNIST ConvSmall, {args.dense_images} images, CPU s/image (initial pass, no optimisation)")
    for dense in (False, True):
        net, t_build = _cpu(lambda dense=dense: BoundedNet(model, (1, 28, 28), dense=dense))
        net.spectral_norms()
        res = {}
        for m in ("crown", "sdp-crown"):
            (lb, _), t = _cpu(lambda m=m, net=net: compute_bounds(net, X, 0.3, y, method=m, iters=0))
            res[m] = (t / len(y), float(lb.mean()))
        print(f"  {'dense ' if dense else 'operator'}: build {t_build:.1f} s, CROWN {res['crown'][0]:.2f} s/image "
              f"(mean bound {res['crown'][1]:.4f}), SDP-CROWN exact-λ {res['sdp-crown'][0]:.2f} s/image "
              f"(mean bound {res['sdp-crown'][1]:.4f})")


if __name__ == "__main__":
    main()
