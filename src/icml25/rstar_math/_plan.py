"""The dry-run plan of the reproduction (``icml25 reproduce rstar_math --dry-run``): stages and the estimate from
per-unit costs measured on this project's 2-core machine (the default full run of the README, 3,124 s in all)."""

from __future__ import annotations

from typing import Any

#: CPU seconds per unit, from the README's full run (seed 0, idle 2-core machine, 2 torch threads): engine 8 s for
#: 240 problems; base pretraining 212 s for 3,000 steps, SFT 204 s for 1,600, PPM 55 s for 500 (n_embd 96, 3 layers,
#: block 320); searches of rounds 2-4 639 s for 3 x 240 problems x 16 rollouts x 8 candidates; the evaluation 538 s
#: for 4 rounds x 120 problems; the ablations 606 s
_FULL = {"engine": 8 / 240, "pretrain": 212 / 3000, "sft": 204 / 1600, "ppm": 55 / 500,
         "search": 639 / (3 * 240 * 16 * 8), "eval": 538 / (4 * 120), "ablations": 606.0}
_FULL_SIZE = 96 ** 2 * 3 * 320  # n_embd^2 * n_layer * block_size of the full preset (per-step costs scale with it)
#: the paper's models on a GPU (not measured: no GPU and no 7B weights in this session): tokens generated per
#: benchmark problem by MCTS with 64 trajectories (each rollout expands ~6 steps of n = 8 candidates of ~100 tokens)
#: and the assumed aggregate vLLM rate of one 7B policy on one GPU
_TOKENS_PER_TRAJECTORY, _GPU_TOKENS_PER_S = 8 * 6 * 100, 2000.0


def plan(cfg: Any) -> Any:
    """The :class:`icml25.core.plan.Plan` of ``cfg`` (no heavy import)."""

    from icml25.core.plan import Needs, Plan, UnitCost, closest_preset


    size = cfg.n_embd ** 2 * cfg.n_layer * cfg.block_size / _FULL_SIZE
    where = "2-core CPU, README full run (seed 0, 52 min)"
    note = f"scaled by n_embd^2 x n_layer x block_size ({size:.2g}x the full model)"
    per_round_search = cfg.n_problems * cfg.later_rollouts * cfg.later_candidates
    costs = [
        UnitCost("round-1 search + extraction (bootstrap solver)", "pool problem", cfg.n_problems, _FULL["engine"],
                 where),
        UnitCost("base-model pretraining", "step", cfg.pretrain_steps, _FULL["pretrain"] * size, where, note),
        UnitCost("policy SFT (every round)", "step", cfg.sft_steps * cfg.rounds, _FULL["sft"] * size, where, note),
        UnitCost("PPM training (every round)", "step", cfg.ppm_steps * cfg.rounds, _FULL["ppm"] * size, where, note),
        UnitCost("MCTS search of rounds >= 2", "problem x rollout x candidate", per_round_search * (cfg.rounds - 1),
                 _FULL["search"] * size, where, note),
        UnitCost("evaluation of every round", "round x test problem", cfg.rounds * cfg.n_test * cfg.eval_seeds,
                 _FULL["eval"] * size * max(cfg.eval_ns) / 8, where, note + "; x max(eval_ns)/8"),
    ]
    if cfg.ablations:
        costs.append(UnitCost("reward-model and SFT-data ablations", "run", 1, _FULL["ablations"] * size, where, note))
    stages = [f"round 1: bootstrap-solver MCTS on {cfg.n_problems} StepArith problems, extraction",
              f"TinyGPT ({cfg.n_embd}x{cfg.n_layer}) pretraining, SFT, PPM; {cfg.rounds} self-evolution round(s)",
              f"evaluation of every round on {cfg.n_test} unseen problems (N in {list(cfg.eval_ns)})"]
    models = [f"TinyGPT policy and PPM, n_embd {cfg.n_embd}, {cfg.n_layer} layers (trained here)"]
    datasets = ["StepArith (generated)"]
    needs: dict[str, Any] = {"cpu_cores": 2, "ram_gb": 4.0, "disk_gb": 0.5}
    if cfg.bench:
        from .domain.benchmarks_data import BENCHMARK_FILES

        sizes = {"math500": 500, "aime2024": 30, "gsm8k": 1319, "amc23": 40}
        n_problems = sum(min(sizes.get(b, 500), cfg.bench_limit or 10**9) for b in cfg.bench)
        kilotokens = n_problems * cfg.bench_n * _TOKENS_PER_TRAJECTORY / 1000
        costs.insert(0, UnitCost("the paper's models: MCTS on " + ", ".join(cfg.bench), "1k generated tokens",
                                 kilotokens, 1000 / _GPU_TOKENS_PER_S, "assumed (no GPU, no 7B weights here)",
                                 f"vLLM 7B policy at {_GPU_TOKENS_PER_S:g} tokens/s on one GPU, "
                                 f"~{_TOKENS_PER_TRAJECTORY} tokens per trajectory; PPM scoring not counted"))
        stages.insert(0, f"the paper's policy ({cfg.policy}) and PPM ({cfg.ppm}): MCTS with {cfg.bench_n} "
                         f"trajectories on {', '.join(cfg.bench)} ({n_problems} problems)")
        models.insert(0, f"policy {cfg.policy} and PPM {cfg.ppm} (Qwen2.5-Math-7B based, provided by the user)")
        datasets = [*(f"{b} ({BENCHMARK_FILES[b]}, shipped)" for b in cfg.bench), *datasets]
        needs.update(gpus=1, gpu_memory_gb=80.0, ram_gb=32.0, disk_gb=40.0,
                     weights=(f"PPM folder {cfg.ppm} (7B backbone + value_head.bin)",),
                     server=f"OpenAI-compatible server for {cfg.policy} (e.g. vLLM)")
    scale = closest_preset(cfg)
    return Plan(slug="rstar_math", scale=scale, stages=stages, models=models, datasets=datasets, runs=1,
                needs=Needs(**needs), costs=costs,
                notes=["training the 7B policy and PPM (4 rounds on 747k problems) is not implemented; the paper's "
                       "numbers are measured by evaluating the user's copies of its models"] if cfg.bench else [])
