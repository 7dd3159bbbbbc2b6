"""The dry-run plan of the De-mark reproduction (``Config.plan()``): stages, models, needs and a time estimate from
per-unit costs measured on this project's machine; nothing heavy is imported or run."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from icml25.core.plan import Needs, Plan, UnitCost

if TYPE_CHECKING:
    from .reproduce import Config

#: seconds per unit measured on this project's 2-core machine (loaded, one thread), 2026-12-03: the quick simulated
#: oracle (20 trials, 3.4 s), the quick simulated deployment (21.5 s for ~80k probe and ordinary queries), SmolLM2's
#: batched probes (1.32 per second, benchmarks/demark/bench_probes.py, README)
_MEASURED = "2-core CPU under load, one thread, 2026-12-03 (timing snippets of the real code; README benchmark)"
_GPU_SPEEDUP = 5000.0  # assumed speed of one data-centre GPU over one loaded CPU thread (batched probes)


def _model_probe_seconds(spec: str) -> tuple[float, str]:
    """Seconds per probe query of a real model and how it was obtained."""
    if spec.endswith("smollm2-135m-instruct"):
        return 1 / 1.32, ""
    if spec.endswith("gemma-3-270m"):  # CPU: 1.8x SmolLM2's per-probe time in the same-day lever runs (issue 48)
        return 1.8 / 1.32, "SmolLM2's CPU rate x 1.8 (benchmarks/demark/chooser_levers.py runs, 2026-12-03)"
    found = re.findall(r"(\d+(?:\.\d+)?)[bB]\b", spec)
    billions = float(found[-1]) if found else 8.0
    ratio = billions * 1e9 / 135e6
    return (ratio / 1.32 / _GPU_SPEEDUP,
            f"SmolLM2's rate x {ratio:.3g} parameters ({billions:g}B) / GPU assumed {_GPU_SPEEDUP:g}x one CPU thread")


def _costs(cfg: Config) -> list[UnitCost]:
    """The per-unit costs of the simulated parts and, when ``cfg.real``, of the real model."""
    q1_work = cfg.sim_h_max * cfg.sim_m_h ** 2 + (cfg.sim_delta_contexts + cfg.sim_green_sets) * cfg.top_k ** 2
    q1 = 3.4 / 20 * q1_work / 47000  # per trial, relative to the quick config's work
    m2 = cfg.top_k * (cfg.top_k - 1)
    probes = (cfg.h_max * cfg.m_h * (cfg.m_h - 1) + cfg.delta_contexts * m2
              + cfg.n_prompts * cfg.new_tokens * (m2 + 1)
              + cfg.blackbox_prompts * cfg.new_tokens * m2 * cfg.blackbox_n / 10
              + cfg.spoof_prompts * cfg.new_tokens * (m2 + 1)
              + (3 * cfg.n_prompts + cfg.n_null) * cfg.new_tokens)
    costs = [UnitCost("simulated oracle (Q1) and the chooser-bias curve", "trial",
                      cfg.sim_trials * (1 + len(cfg.sigma_curve)), q1, _MEASURED),
             UnitCost("simulated deployment: estimation, generation, removal, black-box, spoofing", "query", probes,
                      2.7e-4, _MEASURED)]
    rm = cfg.real_m * (cfg.real_m - 1)
    if cfg.real:
        sec, note = _model_probe_seconds(cfg.real_model)
        real_q = (2 * cfg.real_pairs + cfg.real_steps * rm
                  + (cfg.real_h_max * rm + cfg.real_delta_contexts * rm if cfg.real_estimate else 0)
                  + cfg.real_remove_prompts * cfg.real_gen_tokens * rm) * (1 + cfg.real_reference_contexts)
        costs.append(UnitCost(f"real model {cfg.real_model}: chooser bias, green lists, estimation, removal",
                              "probe query", real_q, sec, _MEASURED, note))
        # generated tokens (watermarked, clean, De-marked) are incremental next-token queries: SmolLM2 about
        # 20 tokens/s for one sequence (shared/specs/pretrained-models.md speed table, batch 8 at 73 tokens/s)
        costs.append(UnitCost(f"real model {cfg.real_model}: generated tokens", "token",
                              (2 * cfg.real_gen_prompts + cfg.real_remove_prompts) * cfg.real_gen_tokens,
                              sec * 0.05 / (1 / 1.32), "the project's pretrained-model speed table (SmolLM2, 1 thread)",
                              note))
        if cfg.real_surrogate:
            s2, n2 = _model_probe_seconds(cfg.real_surrogate)
            costs.append(UnitCost(f"real spoofing with {cfg.real_surrogate} (target probes + surrogate steps)",
                                  "query", cfg.real_gen_prompts * cfg.real_gen_tokens * rm, sec, _MEASURED, note))
            costs.append(UnitCost("surrogate generation", "query", 2 * cfg.real_gen_prompts * cfg.real_gen_tokens,
                                  s2, _MEASURED, n2))
    return costs


def demark_plan(cfg: Config) -> Plan:
    """The dry run: stages, models, needs and a time estimate from per-unit costs measured here."""
    costs = _costs(cfg)
    local = tuple(m for m in (cfg.real_model, cfg.real_surrogate) if m.startswith("hf:")) if cfg.real else ()
    gpu = cfg.device != "cpu"
    stages = [f"simulated oracle: {cfg.sim_trials} trials (h, delta, green lists){' + chooser-bias curve' if cfg.sigma_curve else ''}",
              f"simulated deployment (3-gram model, KGW delta {cfg.wm_delta:g}, h {cfg.wm_h}): estimation, "
              f"{cfg.n_prompts} prompts x {cfg.new_tokens} tokens removed (m = {cfg.top_k}), {cfg.n_null} null texts"
              + (f"; seeding {cfg.wm_prf}, detected by ours and by MarkLLM's scorer (if installed)"
                 if cfg.wm_prf.startswith("markllm-") else "")
              + ("; symmetrised probing (logmean)" if cfg.probe_combine == "logmean" else "")]
    if cfg.real:
        stages.append(f"real model {cfg.real_model} with KGW (h {cfg.real_h}): chooser bias ({cfg.real_pairs} pairs), "
                      f"{cfg.real_gen_prompts} MMW prompts x {cfg.real_gen_tokens} tokens, green lists at "
                      f"{cfg.real_steps} steps, {'estimation, ' if cfg.real_estimate else ''}removal of "
                      f"{cfg.real_remove_prompts} prompt(s) (m = {cfg.real_m})"
                      + (f", spoofing with {cfg.real_surrogate}" if cfg.real_surrogate else ""))
    return Plan(
        slug="demark", scale="config", stages=stages,
        models=("word 3-gram text model (trained here on tinyshakespeare)",
                *((cfg.real_model, "pretrained:gemma-3-270m (perplexity judge)") if cfg.real else ()),
                *((cfg.real_surrogate,) if cfg.real and cfg.real_surrogate else ())),
        datasets=("tinyshakespeare (shipped)", "MMW book-report prompts (shipped)"),
        runs=1,
        needs=Needs(cpu_cores=2, gpus=1 if gpu else 0, gpu_memory_gb=80.0 if gpu else 0.0,
                    ram_gb=48.0 if gpu else 4.0, disk_gb=25.0 if local else 1.0, weights=local),
        costs=costs,
        notes=("real_model / real_surrogate must be local chat models (hf:<folder>): the watermark is applied "
               "in-process to their logits, as in the official code; a served API cannot be watermarked here.",)
        if local else ())
