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

    notes: list[str] = []
    if cfg.policy_backend == "lora":
        stages, models, costs = _lora_parts(cfg, UnitCost)
        needs: dict[str, Any] = {"cpu_cores": 1, "ram_gb": 8.0, "disk_gb": 1.0}
        notes.append("per-unit costs of SmolLM2-135M-Instruct + LoRA measured on this 2-core machine with one torch "
                     "thread while two other jobs ran (README: 'The pretrained policy as the full run')")
    else:
        stages, models, costs = _tinygpt_parts(cfg, UnitCost)
        needs = {"cpu_cores": 2, "ram_gb": 4.0, "disk_gb": 0.5}
    datasets = ["StepArith (generated)"]
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
        notes.append("training the 7B policy and PPM (4 rounds on 747k problems) is not implemented; the paper's "
                     "numbers are measured by evaluating the user's copies of its models")
    return Plan(slug="rstar_math", scale=closest_preset(cfg), stages=stages, models=models, datasets=datasets,
                runs=1, needs=Needs(**needs), costs=costs, notes=notes)


def _tinygpt_parts(cfg: Any, UnitCost: Any) -> tuple[list[str], list[str], list[Any]]:
    """Stages, models and unit costs of ``policy_backend="tinygpt"`` (per-unit costs in :data:`_FULL`)."""
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
    return stages, [f"TinyGPT policy and PPM, n_embd {cfg.n_embd}, {cfg.n_layer} layers (trained here)"], costs


#: seconds per unit of the LoRA path (SmolLM2-135M-Instruct, r=16, one torch thread, this 2-core machine while two
#: other full runs kept the load at 4; probes of the README section "The pretrained policy as the full run"):
#: model load + the backend's weight copy; policy SFT per step of 4 sequences (12 steps: 176 s); PPM training per
#: step of 8 pairs (6 steps: 280 s); a greedy chain (6 L1-L3 problems, 3.3 steps each: 25.8 s) and a sampled one
#: (T = 1, 12 chains: 26.5 s); MCTS per problem x rollout x candidate (6 pool problems, R = 2, n = 3) terminal-guided
#: (81.5 s) and PPM-augmented (87.9 s); PPM scoring per sequence (24 sequences: 19.9 s)
_LORA = {"load": 10.4, "sft": 14.7, "ppm": 46.6, "greedy": 4.30, "sample": 2.21, "search": 2.27,
         "search_ppm": 2.44, "score": 0.83}
_LORA_WHERE = "2-core CPU shared with 2 jobs, 1 torch thread (README: the pretrained policy)"


def _lora_parts(cfg: Any, UnitCost: Any) -> tuple[list[str], list[str], list[Any]]:
    """Stages, models and unit costs of ``policy_backend="lora"`` (per-unit costs in :data:`_LORA`)."""
    c, w = _LORA, _LORA_WHERE
    R, n_mid, n_max = cfg.rounds, cfg.eval_ns[min(1, len(cfg.eval_ns) - 1)], max(cfg.eval_ns)
    # pairs scored for accuracies: per round the round's training pairs (~3 per pool problem: 696 for 240 in the
    # README full run) and the held-out step pairs (~2 per tree: 197 for 120), plus round 1's B4 held-out pairs
    scored_pairs = R * (3 * cfg.n_problems + 2 * max(8, cfg.n_problems // 2)) + 3 * cfg.n_problems
    terminal = cfg.n_problems * cfg.later_rollouts * cfg.later_candidates * min(R - 1, 1)
    ppm_rounds = cfg.n_problems * cfg.later_rollouts * cfg.later_candidates * max(R - 2, 0)
    # evaluation: rounds 1..R-1 at the middle N with one seed, the last round at the largest N with every seed
    evals = [(n_mid, 1)] * (R - 1) + [(n_max, cfg.eval_seeds)]
    greedy = sum(s * cfg.n_test for _, s in evals)
    samples = sum(s * cfg.n_test * n for n, s in evals)  # maj@N / BoN@N samples
    scored = sum(s * cfg.n_test * n for n, s in evals)  # BoN scores every sample
    mcts = sum(s * cfg.n_test * n * cfg.later_candidates for n, s in evals)
    runs, roll, _ = cfg.vote
    extra = cfg.n_test * (runs * roll * cfg.later_candidates + (n_mid * n_mid if cfg.beam_eval else 0)
                          * cfg.eval_seeds)
    costs = [
        UnitCost("load the pretrained model, copy its weights for the adapters", "run", 1, c["load"], w),
        UnitCost("round-1 search + extraction (bootstrap solver)", "pool problem", cfg.n_problems,
                 _FULL["engine"], "2-core CPU, README full run (seed 0, 52 min)"),
        UnitCost("B2 format check (greedy, base and SLM-r1)", "held-out problem", 2 * cfg.n_heldout, c["greedy"],
                 w),
        UnitCost("policy LoRA SFT (every round)", "step", cfg.sft_steps * R, c["sft"] * cfg.batch_size / 4, w,
                 f"x batch_size/4 ({cfg.batch_size})"),
        UnitCost("PPM LoRA + head training (every round)", "step", cfg.ppm_steps * R,
                 c["ppm"] * cfg.ppm_batch_pairs / 8, w, f"x ppm_batch_pairs/8 ({cfg.ppm_batch_pairs})"),
        UnitCost("MCTS search of round 2 (terminal-guided)", "problem x rollout x candidate", terminal,
                 c["search"], w),
        UnitCost("MCTS search of rounds >= 3 (PPM-augmented)", "problem x rollout x candidate",
                 ppm_rounds + cfg.n_problems * cfg.extra_rollouts * cfg.later_candidates * (R >= 3),
                 c["search_ppm"], w, "extra rollouts counted as if every problem were unsolved"),
        UnitCost("evaluation: greedy decoding", "chain", greedy, c["greedy"], w),
        UnitCost("evaluation: sampled chains of maj@N and BoN@N", "chain", samples, c["sample"], w),
        UnitCost("evaluation: BoN scoring, PPM train/held-out pair accuracy", "scored sequence",
                 scored + 2 * scored_pairs, c["score"], w),
        UnitCost("evaluation: MCTS+PPM, beam search and the multi-run vote", "problem x rollout x candidate",
                 mcts + extra, c["search_ppm"], w),
    ]
    stages = [f"round 1: bootstrap-solver MCTS on {cfg.n_problems} StepArith problems, extraction",
              f"{cfg.policy_model} + LoRA r={cfg.lora_r}: SFT and PPM every round; {R} self-evolution round(s)",
              f"evaluation of every round on {cfg.n_test} unseen problems (N in {list(cfg.eval_ns)})"]
    return stages, [f"{cfg.policy_model} (pretrained, LoRA-fine-tuned here; PPM from the same trunk)"], costs
