"""The dry-run plan of the task-superposition reproduction (``Config.plan``): stages, models, needs and a time
estimate from per-unit costs measured on this project's machine. Nothing heavy is imported."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from icml25.core.plan import Needs, Plan, UnitCost

from ._validation import REAL_MODELS, parse_family

if TYPE_CHECKING:
    from .reproduce import Config

#: seconds per unit measured on this project's 2-core machine (loaded, one torch thread), 2026-12-03: TinyGPT training
#: steps (README lever tables: S 22 s / 2,000 steps, L 251 s / 2,000 steps incl. checks; M timed here, 30 steps),
#: TinyGPT answer scoring (60 prompts per size), SmolLM2-135M scoring of m = 16 AB prompts (0.78 s) and greedy
#: single-task answers (0.69 s); Gemma-3-270M about 1.5 s per m = 20 prompt (README "Can I use?" and benchmark)
_MEASURED = "2-core CPU under load, one torch thread, 2026-12-03 (timing snippets of the real code and the README's runs)"
_TRAIN_S = {"S": 0.011, "M": 0.045, "L": 0.13}
_SCORE_S = {"S": 0.0005, "M": 0.001, "L": 0.004}
_REAL_S = {"smollm2-135m-instruct": 0.75 / 16, "gemma-3-270m": 1.5 / 20}  # seconds per in-context example
#: other models (a vLLM server or local weights on a GPU): SmolLM2's measured CPU rate x the parameter ratio
#: (parameters read from the name, e.g. "70B"; 7B when it has none) / an assumed GPU speed-up over one CPU thread
_GPU_SPEEDUP = 5000.0


def _per_example(name: str) -> tuple[float, str, str]:
    """(seconds per in-context example of a scored prompt, measured_on, scale_note) for one model."""
    key = name.split(":", 1)[-1] if name.startswith("pretrained:") else name
    if key in _REAL_S:
        return _REAL_S[key], _MEASURED, ""
    found = re.findall(r"(\d+(?:\.\d+)?)[bB]\b", name)
    billions = float(found[-1]) if found else 7.0
    ratio = billions * 1e9 / 135e6
    return (_REAL_S["smollm2-135m-instruct"] * ratio / _GPU_SPEEDUP, "SmolLM2-135M on " + _MEASURED,
            f"x {ratio:.3g} parameters ({billions:g}B) / GPU assumed {_GPU_SPEEDUP:g}x one CPU thread")


def task_superposition_plan(cfg: Config) -> Plan:
    """The plan of ``cfg`` (see :meth:`Config.plan`)."""
    sizes = [cfg.size, *[x for x in cfg.scale_sizes if x != cfg.size]] if cfg.scratch else []
    K = len(cfg.tasks)
    points = len(range(0, cfg.m_eval + 1, max(1, cfg.m_eval // 4))) + (4 if K == 3 else 0)
    costs = []
    for size in sizes:
        costs.append(UnitCost(f"from scratch: train TinyGPT {size} ({cfg.n_seeds} seed(s))", "training step",
                              cfg.n_seeds * cfg.steps, _TRAIN_S[size], _MEASURED))
        n_tv = (2 * cfg.tv_prompts * 10) if cfg.tv_size == size else 0
        costs.append(UnitCost(f"from scratch: score TinyGPT {size} on {points} grid points", "prompt",
                              cfg.n_seeds * (points * cfg.grid_prompts + K * cfg.acc_prompts) + n_tv, _SCORE_S[size],
                              _MEASURED))
    served = [m for m in cfg.real_models if m not in REAL_MODELS and not m.startswith("pretrained:")]
    n_comp = sum(parse_family(c).K for c in cfg.competence_settings)
    # with competence settings, each can add one two-task setting per model (an upper bound: only competent pairs)
    n_settings = len(cfg.real_settings) + len(cfg.competence_settings)
    for m in cfg.real_models:
        per_ex, where, note = _per_example(m)
        if n_comp:
            costs.append(UnitCost(f"real model {m}: competence, {n_comp} tasks x {cfg.competence_prompts} greedy "
                                  "single-task prompts", "prompt", n_comp * cfg.competence_prompts,
                                  per_ex * cfg.real_m, where, note))
        n = len(cfg.real_settings) * cfg.real_prompts * 2 + n_settings * cfg.real_prompts * len(cfg.real_lams)
        costs.append(UnitCost(f"real model {m}: <= {n_settings} setting(s), grid of {len(cfg.real_lams)} "
                              "(+ 2 single-task accuracies per explicit setting)", "prompt", n, per_ex * cfg.real_m,
                              where, note))
    if cfg.tv_model:
        per_ex, where, note = _per_example(cfg.tv_model)
        layers = 18 if not note else 32  # Gemma-3-270M has 18 decoder layers; a Llama-3-8B-size model 32
        n = cfg.tv_prompts * (2 + 2 * layers + 5 + 3)
        costs.append(UnitCost(f"task vectors on {cfg.tv_model} (~{layers} layers swept)", "prompt", n,
                              per_ex * cfg.tv_m, where, note))
    gpu = cfg.device != "cpu" or bool(served)
    weights = tuple(m for m in (*cfg.real_models, cfg.tv_model) if m.startswith("hf:"))
    servers = ", ".join(m.split(":", 1)[1] for m in cfg.real_models if m.startswith("openai:"))
    stages = [f"from scratch: TinyGPT {'/'.join(sizes)} on single-task F-AB {'/'.join(cfg.tasks)} prompts, "
              f"{cfg.steps} steps x {cfg.n_seeds} seed(s); grid of {points} points x {cfg.grid_prompts} prompts"] \
        if sizes else []
    if cfg.competence_settings:
        stages.append(f"competence: greedy single-task accuracy of every task of {', '.join(cfg.competence_settings)}"
                      f" (m = {cfg.real_m}, {cfg.competence_prompts} prompts per task), per model")
    where = ", ".join((*cfg.real_settings, *(["the competent pair of each competence setting"]
                                              if cfg.competence_settings else [])))
    stages += [f"real models ({len(cfg.real_models)}): two-task grids lambda in {list(cfg.real_lams)} on "
               f"{where} (m = {cfg.real_m}, {cfg.real_prompts} prompts per point)"]
    if cfg.tv_model:
        stages.append(f"task vectors on {cfg.tv_model} ({cfg.tv_setting}, m = {cfg.tv_m})")
    return Plan(
        slug="task_superposition", scale="config", stages=stages,
        models=tuple(dict.fromkeys((*(f"TinyGPT {x} (trained here)" for x in sizes), *cfg.real_models,
                                    *((cfg.tv_model,) if cfg.tv_model else ())))),
        datasets=("official task settings from the shipped lookup tables (countries, number words, wonderwords "
                  "nouns); synthetic F-AB prompts",),
        runs=1,
        needs=Needs(cpu_cores=2, gpus=8 if served else (1 if gpu else 0), gpu_memory_gb=80.0 if gpu else 0.0,
                    ram_gb=16.0 if gpu else 4.0, disk_gb=300.0 if gpu else 1.0, weights=weights,
                    server=(f"vLLM OpenAI-compatible servers with echo + prompt log-probs: {servers}" if servers
                            else "")),
        costs=costs,
        notes=("Model strings are --set real_models=..., scale_models=..., tv_model=... (hf:/path or "
               "openai:http://host:port/v1#name); the 70B/72B servers need tensor parallelism over several GPUs.",)
        if gpu else ())

