"""TEDUO benchmark: LLM hindsight-labelling throughput, batched calls vs one prompt at a time (same model, same
pairs, same run), and LoRA fine-tuning throughput (training tokens/s) of SmolLM2-135M-Instruct on D_SFT prompts.

    PYTHONPATH=src python benchmarks/teduo/bench_labelling_lora.py --pairs 32 --batch 16 --lora-steps 3
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="pretrained:smollm2-135m-instruct")
    ap.add_argument("--pairs", type=int, default=32)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lora-steps", type=int, default=3)
    ap.add_argument("--lora-batch", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from icml25.llm import load_model
    from icml25.teduo import LLMAnnotator, LoRAPolicy, OfflineDataset, SFTExample

    model = load_model(args.model, progress=False)
    ds = OfflineDataset.collect(4, seed=0)
    states = ds.transitions()["states"][: args.pairs]
    goals = [f"pick up the {s.objects[0][0]} {s.objects[0][1]}" for s in states]

    t0 = time.perf_counter()
    batched = LLMAnnotator(model, batch_size=args.batch).judge(states, goals)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    single = LLMAnnotator(model, batch_size=1).judge(states, goals)
    t_single = time.perf_counter() - t0
    print(f"labelling {args.pairs} (state, goal) pairs: batched (batch {args.batch}) {args.pairs / t_batched:.2f} "
          f"pairs/s, one at a time {args.pairs / t_single:.2f} pairs/s, ratio {t_single / t_batched:.2f}x; "
          f"answers agree on {np.mean(batched == single):.0%}")

    rng = np.random.default_rng(0)
    ex = [SFTExample(g, s, int(rng.integers(4)), 1) for s, g in zip(states, goals)]
    pol = LoRAPolicy(model, steps=args.lora_steps, batch_size=args.lora_batch)
    t0 = time.perf_counter()
    pol.fit(ex)
    dt = time.perf_counter() - t0
    print(f"LoRA (r=16) fine-tuning: {pol.tokens_trained_} tokens in {dt:.1f} s = {pol.tokens_trained_ / dt:.0f} "
          f"tokens/s ({args.lora_steps} steps x {args.lora_batch} examples, {args.threads} thread(s))")


if __name__ == "__main__":
    main()
