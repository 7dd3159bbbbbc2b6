"""Answer scoring on a real model: the shared-prefix batched teacher forcing of
``icml25.task_superposition.answer_probabilities`` against one (prompt, answer) pair at a time through
``HFModel.logprobs`` (the plain per-pair teacher forcing of icml25.llm), and against ``HFModel.logprobs`` batched over
all pairs (left padding, ``logits_to_keep``), in the same run. Prompts: the official country setting, K = 3 answers
(capital / continent / upper case), m examples. Reports prompts/s, the ratio and the largest |delta log P|.

    python benchmarks/task_superposition/bench_scoring.py [--model gemma-3-270m] [--prompts 6] [--m 20]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from icml25.llm import load_model
from icml25.task_superposition import MixturePromptBuilder, answer_probabilities, official_setting


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gemma-3-270m")
    ap.add_argument("--prompts", type=int, default=6)
    ap.add_argument("--m", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = load_model(f"pretrained:{args.model}")
    items = MixturePromptBuilder(official_setting("country"), m=args.m, random_state=0).sample(args.prompts)
    ps = [it.prompt for it in items for _ in it.answers]
    cs = [a + "\n" for it in items for a in it.answers]
    answer_probabilities(model, items[:1])  # warm-up

    t = time.perf_counter()
    shared = np.log(answer_probabilities(model, items))
    t_shared = time.perf_counter() - t
    t = time.perf_counter()
    single = np.array([model.logprobs([p], [c], fast=False)[0].sum() for p, c in zip(ps, cs)]).reshape(shared.shape)
    t_single = time.perf_counter() - t
    t = time.perf_counter()
    batched = np.array([x.sum() for x in model.logprobs(ps, cs)]).reshape(shared.shape)
    t_batched = time.perf_counter() - t

    n = len(items)
    print(f"{args.model}, country setting, K=3 answers, m={args.m}, {n} prompts, {args.threads} thread(s)")
    print(f"{'method':58s} {'prompts/s':>10s} {'max |dlogP| vs ours':>20s}")
    print(f"{'ours: shared prefix (KV cache), K answers batched':58s} {n / t_shared:10.2f} {0.0:20.2e}")
    print(f"{'icml25.llm HFModel.logprobs, one pair at a time (plain)':58s} {n / t_single:10.2f} "
          f"{np.abs(single - shared).max():20.2e}")
    print(f"{'icml25.llm HFModel.logprobs, all pairs batched (fast)':58s} {n / t_batched:10.2f} "
          f"{np.abs(batched - shared).max():20.2e}")
    print(f"speed-up of ours: {t_single / t_shared:.2f}x vs one at a time, {t_batched / t_shared:.2f}x vs batched")


if __name__ == "__main__":
    main()
