"""``icml25 sdp-crown verify``: certified ℓ2 robustness of a shipped (or user) model on the paper's images."""

from __future__ import annotations

import argparse
import time

from icml25.core.threads import thread_limits

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = argparse.ArgumentParser(prog="icml25 sdp-crown", description="SDP-CROWN ℓ2 verification tools")
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verified accuracy of a model on the paper's first n test images")
    v.add_argument("--model", default="mnist_mlp", help="mnist_mlp | mnist_convsmall | cifar10_cnn_a | cifar10_cnn_c "
                   "| cifar10_convsmall | cifar10_convdeep (shipped) | mnist_convlarge | cifar10_cnn_b | "
                   "cifar10_convlarge (weights given with --weights)")
    v.add_argument("--weights", default=None, help="path to a .npz (or the release's .pth) state dict replacing the "
                   "shipped weights")
    v.add_argument("--radius", type=float, default=None,
                   help="ℓ2 radius ρ in raw [0, 1] pixel units (default: the paper's, e.g. 1.0 or 24/255)")
    v.add_argument("--n", type=int, default=20, help="number of images (1..200)")
    v.add_argument("--method", default="sdp-crown",
                   choices=["crown", "alpha-crown", "sdp-crown", "sdp-crown-hybrid", "lipnaive"])
    v.add_argument("--iters", type=int, default=30, help="Adam iterations (paper: 300)")
    v.add_argument("--lambda-mode", default="adam", choices=["adam", "exact"])
    v.add_argument("--batch", type=int, default=20, help="images per batch")
    args = parser.parse_args(argv)
    with thread_limits(1):  # one torch/BLAS thread: the fastest for these models on CPU
        return _verify(parser, args)


def _verify(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from .models import MODEL_INFO, load_images, load_model
    from .network import BoundedNet
    from .verification import verify

    if args.model not in MODEL_INFO:
        parser.error(f"--model must be one of {', '.join(MODEL_INFO)}, got {args.model!r}")
    dataset, shape, paper_radius = MODEL_INFO[args.model]
    args.radius = paper_radius if args.radius is None else args.radius
    from icml25.core.data import DataNotFoundError

    try:
        model = load_model(args.model, path=args.weights)
    except DataNotFoundError as exc:
        parser.error(str(exc))
    net = BoundedNet(model, shape)
    X, y = load_images(dataset, args.n)
    kw = {} if args.method in ("lipnaive", "crown") else {"iters": args.iters, "lambda_mode": args.lambda_mode}
    if args.method != "lipnaive" and net.is_conv:
        kw["optimize_from_layer"] = len(net.blocks) - 1
    t0 = time.perf_counter()
    verified = correct = 0
    for i in range(0, args.n, args.batch):
        out = verify(net, X[i:i + args.batch], y[i:i + args.batch], args.radius, method=args.method, **kw)
        verified += int(out["verified"].sum())
        correct += int(out["clean_correct"].sum())
    dt = time.perf_counter() - t0
    print(f"{args.model} ρ={args.radius:.4g} {args.method}: verified {verified}/{args.n} "
          f"({100 * verified / args.n:.1f} %), clean {correct}/{args.n}, {dt / args.n:.2f} s/image")
    return 0
