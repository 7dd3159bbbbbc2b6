"""Probe throughput of De-mark on the real model: probes/s batched with a shared-prefix KV cache (ours) against one
probe at a time (the peer: what a naive client of a per-request API does), same run, same probes; and the number
of probe queries per generated token (m (m - 1) for m candidates) with the measured wall time per token.

SmolLM2-135M-Instruct (KGW, delta 2, h 3), ChatML probe template, m random candidate words, 1 torch thread.

    python benchmarks/demark/bench_probes.py [--m 6] [--contexts 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from icml25.demark import HFNextTokenLM, KGWWatermark, RandomSelectionProber, WatermarkedOracle
from icml25.demark.real_model import ChatDeployment
from icml25.llm import load_model


def run(prober: RandomSelectionProber, jobs: list[tuple[list[int], list[int]]]) -> tuple[float, int, np.ndarray]:
    q0, t0 = prober.n_probe_queries, time.perf_counter()
    Rs = [prober.ratio_matrix(c, cand) for c, cand in jobs]
    return time.perf_counter() - t0, prober.n_probe_queries - q0, np.stack(Rs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=6)
    ap.add_argument("--contexts", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = load_model("pretrained:smollm2-135m-instruct", progress=False)
    wm = KGWWatermark(int(model.model.config.vocab_size), delta=2.0, h=3, key=7)
    dep = ChatDeployment.from_hf(model, wm)
    rng = np.random.default_rng(0)
    words = dep.words[:2000]
    jobs = [(rng.choice(words, 3).tolist(), rng.choice(words, args.m, replace=False).tolist())
            for _ in range(args.contexts)]
    batched = RandomSelectionProber(dep.oracle, dep.template, batch_size=32)
    single = RandomSelectionProber(WatermarkedOracle(HFNextTokenLM(model, batch_size=1, share_prefix=False,
                                                                   incremental=0), wm), dep.template, batch_size=1)
    tb, nb, Rb = run(batched, jobs)
    ts, ns, Rs = run(single, jobs)
    print(f"probes: {nb} per run ({args.contexts} contexts x m(m-1) = {args.m * (args.m - 1)})")
    print(f"batched + shared prefix : {nb / tb:7.2f} probes/s ({tb:.1f} s)")
    print(f"one at a time (peer)    : {ns / ts:7.2f} probes/s ({ts:.1f} s)")
    print(f"speed-up                : {ts / tb:7.2f}x   max |R difference| {np.nanmax(np.abs(Rb - Rs)):.2e}")
    for m in (6, 8, 20):
        print(f"m = {m:2d}: {m * (m - 1)} probe queries + 1 ordinary query per generated token; "
              f"~{m * (m - 1) / (nb / tb):.1f} s per token at the batched rate")


if __name__ == "__main__":
    main()
