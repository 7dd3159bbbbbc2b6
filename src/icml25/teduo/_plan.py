"""The dry-run plan of the TEDUO reproduction (``icml25 reproduce teduo --dry-run``): no data is read, no torch."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from icml25.core.plan import Needs, Plan, UnitCost

if TYPE_CHECKING:
    from .reproduce import Config

__all__ = ["teduo_plan"]

#: seconds per unit measured on this project's 2-core machine (loaded, one thread), 2026-12-03: timing snippets of the
#: real code (steps 1-2 per episode of 57 steps incl. labelling and Q-learning, tabular evaluation per episode, TINYLM
#: per training step and evaluated episode, MLP per step) and the README's benchmark (SmolLM2: 0.48 judged pairs/s,
#: LoRA 27 training tokens/s)
_MEASURED = "2-core CPU under load, one thread, 2026-12-03 (timing snippets of the real code; README benchmark)"
#: the few-shot judge and the constrained writer (issue 48): SmolLM2, 100 balanced pairs with 8 shots in 110 s (raw view
#: 83 s, goal view 27 s), 28 goals written in 93 s, one thread under load
_JUDGE = "2-core CPU under load, one thread, 2026-12-03 (issue 48 probe: SmolLM2 few-shot judge and writer)"
_GPU_SPEEDUP = 5000.0  # assumed speed of one data-centre GPU over one loaded CPU thread


def _llm_scale(spec: str) -> tuple[float, str]:
    """Cost factor of the configured LLM relative to SmolLM2-135M on one CPU thread, and how it was obtained."""
    if spec.endswith("smollm2-135m-instruct"):
        return 1.0, ""
    if spec.endswith("gemma-3-270m"):
        return 2.3, "SmolLM2's rate x 2.3 (scoring speed ratio of the pretrained-model speed table)"
    found = re.findall(r"(\d+(?:\.\d+)?)[bB]\b", spec)
    billions = float(found[-1]) if found else 8.0
    ratio = billions * 1e9 / 135e6
    return ratio / _GPU_SPEEDUP, (f"SmolLM2's rate x {ratio:.3g} parameters ({billions:g}B) / GPU assumed "
                                  f"{_GPU_SPEEDUP:g}x one CPU thread")


def teduo_plan(cfg: Config) -> Plan:
    """The dry-run plan of ``cfg`` (:meth:`Config.plan`): stages, models, data sets, needs and per-unit costs."""
    costs = [UnitCost("steps 1-2: collect, abstract, label (rule judge + proxy), tabular Q and GCBC", "episode",
                      cfg.n_seeds * cfg.n_episodes + 2 * cfg.f2_episodes, 0.060, _MEASURED),
             UnitCost("evaluation of random / GCBC / GCRL", "episode",
                      3 * cfg.n_seeds * cfg.eval_rooms + 2 * cfg.eval_rooms * bool(cfg.f2_episodes)
                      + 6 * cfg.tinylm_eval_rooms, 0.0054, _MEASURED)]
    if cfg.tinylm_steps:
        costs += [UnitCost("TINYLM training", "step", cfg.tinylm_steps, 0.124, _MEASURED),
                  UnitCost("TINYLM evaluation", "episode", 2 * cfg.tinylm_eval_rooms, 0.024, _MEASURED)]
    if cfg.mlp_steps:
        costs.append(UnitCost("one-hot MLP training", "step", cfg.mlp_steps, 0.0026, _MEASURED))
    gpu = cfg.device != "cpu"
    if cfg.llm:
        f, note = _llm_scale(cfg.llm)
        for spec in [cfg.llm] + [m.strip() for m in cfg.llm_extra.split(",") if m.strip()]:
            fm, mnote = _llm_scale(spec)
            # Gemma-3: the ~700-token raw-view prompts ran > 4.8 s per pair (60 pairs did not finish in 290 s), the
            # goal view 0.5 s; SmolLM2: 0.8 + 0.3 s
            per_pair = 5.3 if spec.endswith("gemma-3-270m") else 1.1 * fm
            costs += [UnitCost(f"{spec} as few-shot judge ({cfg.llm_shots} shots; raw and goal views)", "pair",
                               cfg.llm_judgements, per_pair, _JUDGE, mnote),
                      UnitCost(f"{spec} as constrained abstraction writer (18 literals per goal)", "goal", 28,
                               3.3 * fm, _JUDGE, mnote)]
        costs.append(UnitCost(f"{cfg.llm} writes abstraction code by free generation (~200 tokens)", "goal",
                              cfg.llm_abstraction_goals, 200 * 0.05 * f,
                              "the project's pretrained-model speed table (SmolLM2, ~20 tokens/s)", note))
        if cfg.lora_steps:
            costs.append(UnitCost(f"{cfg.llm} LoRA fine-tuning (~150 tokens per example)", "training token",
                                  cfg.lora_steps * cfg.lora_batch * 150, f / 27, _MEASURED, note))
        n_eval = 2 * cfg.lora_eval_rooms * cfg.horizon * ((1 if cfg.lora_steps else 0) + cfg.llm_baseline)
        if n_eval:
            costs.append(UnitCost(f"{cfg.llm} as policy: one prompt per episode step (LoRA"
                                  f"{' and out of the box' if cfg.llm_baseline else ''})", "prompt", n_eval,
                                  f / 0.48, _MEASURED, note))
    stages = [f"steps 1-2 on BabyAI-PickupLoc: {cfg.n_episodes} random episodes x {cfg.episode_length} steps, "
              f"{cfg.n_seeds} seed(s); rule judge on {cfg.label_fraction:g} of the pairs + proxy; tabular Q vs GCBC vs "
              f"random on {cfg.eval_rooms} unseen rooms",
              f"D_SFT from {cfg.sft_starts} starts; TINYLM {cfg.tinylm_steps} steps, MLP {cfg.mlp_steps} steps"]
    if cfg.llm:
        stages.append(f"{cfg.llm}: judge ({cfg.llm_judgements} pairs), abstraction code ({cfg.llm_abstraction_goals} "
                      f"goals), LoRA policy ({cfg.lora_steps} steps x {cfg.lora_batch}) evaluated on "
                      f"{cfg.lora_eval_rooms} rooms per cell" + (", vanilla LLM baseline" if cfg.llm_baseline else ""))
    local = (cfg.llm,) if cfg.llm.startswith("hf:") else ()
    return Plan(slug="teduo", scale="config", stages=stages,
                models=("TINYLM and one-hot MLP (trained here)", *((cfg.llm,) if cfg.llm else ())),
                datasets=("BabyAI-PickupLoc random-policy trajectories (generated by minigrid)",), runs=1,
                needs=Needs(cpu_cores=2, gpus=1 if gpu else 0, gpu_memory_gb=80.0 if gpu else 0.0,
                            ram_gb=32.0 if gpu else 4.0, disk_gb=20.0 if local else 1.0, weights=local),
                costs=costs,
                notes=("Steps 1-2 use the rule judge's labels at every scale; the LLM's judging and abstraction code "
                       "are measured (claims L1, L2), not used to build the MDPs.",))
