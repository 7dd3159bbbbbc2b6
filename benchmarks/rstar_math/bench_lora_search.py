"""Search cost per generated step with the pretrained policy of the full run (SmolLM2-135M-Instruct + LoRA).

The policy is a LoRA adapter SFT'd for a few steps on bootstrap-solver trajectories (so that it writes
step-format code steps). Measured, one torch thread:

1. one expansion wave (the question prompts of ``n_problems`` pool problems, ``n`` candidates each): the
   candidates of every node in one ``generate(prompts, n=n)`` call (what ``LMStepPolicy`` does: each prompt is
   encoded once and its KV cache rows copied to its ``n`` samples) against one ``generate`` call per candidate
   (each re-encodes its prompt); seconds per generated step;
2. the MCTS of the full run's rounds 2 and 3 on the same problems (``rollouts`` x ``n``), terminal-guided and
   PPM-augmented (every new step scored by the round's LoRA PPM): seconds per generated step and per
   problem x rollout x candidate (the dry run's unit).

Run: .venv/bin/python benchmarks/rstar_math/bench_lora_search.py  (about 2-3 min on one core)
"""

from __future__ import annotations

import time

import torch

from icml25.llm import load_model
from icml25.rstar_math.domain.step_format import StepFormat
from icml25.rstar_math.execution.code_executors import SafeArithExecutor
from icml25.rstar_math.experiment import stages as ex
from icml25.rstar_math.models.lora_backend import LoRABackend
from icml25.rstar_math.models.sft import sft_examples
from icml25.rstar_math.reproduce import Config
from icml25.rstar_math.search.mcts import MCTS, MCTSConfig


def main(n_problems: int = 3, n: int = 3, rollouts: int = 2, sft_steps: int = 3, step_tokens: int = 48) -> None:
    """Print the costs of the module docstring."""
    torch.set_num_threads(1)
    fmt, exe = StepFormat(), SafeArithExecutor(allow_float=False)
    eng = ex.run_engine(Config(n_problems=24, levels=(1, 2, 3), n_candidates=5, rollouts=8), 0)
    backend = LoRABackend(load_model("pretrained:smollm2-135m-instruct"), r=16, alpha=32.0, max_length=512,
                          warmup=1)
    policy = backend.fresh_policy()
    t = time.perf_counter()
    backend.train_policy(policy, sft_examples(eng["sft"], fmt), steps=sft_steps, batch_size=2, lr=2e-3, seed=0)
    print(f"policy: SmolLM2-135M-Instruct + LoRA r=16, {sft_steps} SFT steps x 2 sequences "
          f"({time.perf_counter() - t:.0f} s)")
    step_policy = backend.step_policy(policy)
    pool = eng["pool"][:n_problems]
    prompts = [fmt.prompt(p.question) for p in pool]
    kw = dict(temperature=1.0, stop=list(fmt.stop), max_tokens=step_tokens)

    t = time.perf_counter()
    step_policy.sample_steps(prompts, n=n, seed=0, **kw)
    batched = (time.perf_counter() - t) / (len(prompts) * n)
    t = time.perf_counter()
    for j in range(n):
        for i, p in enumerate(prompts):
            step_policy.sample_steps([p], n=1, seed=1000 * j + i, **kw)
    single = (time.perf_counter() - t) / (len(prompts) * n)
    print(f"expansion wave, {len(prompts)} nodes x {n} candidates: one generate(n={n}) call {batched:.2f} s per "
          f"step; one call per candidate {single:.2f} s per step ({single / batched:.1f}x)")

    ppm = backend.make_ppm(policy)
    ppm.eval()
    for mode, scorer in (("terminal", None), ("ppm_init", ppm)):
        cfg = MCTSConfig(n_candidates=n, rollouts=rollouts, max_depth=10, errors_threshold=1, mode=mode,
                         max_tokens=step_tokens, seed=0)
        t = time.perf_counter()
        trees = MCTS(step_policy, exe, scorer=scorer, config=cfg, fmt=fmt).search(pool)
        dt = time.perf_counter() - t
        steps = sum(tr.meta["generated_steps"] for tr in trees)
        print(f"MCTS {mode:>8}: {len(pool)} problems x R={rollouts} x n={n}: {dt:.1f} s, {steps} generated steps, "
              f"{dt / steps:.2f} s per step, {dt / (len(pool) * rollouts * n):.2f} s per problem x rollout x "
              f"candidate; coverage {sum(tr.solved() for tr in trees)}/{len(pool)}")


if __name__ == "__main__":
    main()
