"""The dry-run plan of the Sorbet reproduction (``icml25 reproduce sorbet --dry-run``): nothing is loaded."""

from __future__ import annotations

from typing import Any

from icml25.core.plan import Needs, Plan, UnitCost, closest_preset

#: CPU seconds per (training sentence x encoder layer) of one epoch, and per (dev sentence x layer) of the exact
#: spiking inference (T = 16; window-summed spike counts since issue 42, step by step on 8 sentences), for
#: MiniLM-sized layers (hidden 384, FFN 1536) at max_length 64: training solved from the quick (77 s CPU: 8,000 and
#: 872 units) and full (486 s CPU: 60,000 and 2,616 units) runs in the README; spiking from the quick run's
#: spiking stage after issue 42 (~4 CPU-s for 872 sentences, 1 layer)
TRAIN_S = 7.1e-3
SPIKING_S = 0.005
#: SST-2 dev sentences (the spiking inference and every evaluation run on them)
DEV = {"sst2": 872, "mrpc": 408, "rte": 277, "cola": 1043, "stsb": 1500}
TRAIN = {"sst2": 67349, "mrpc": 3668, "rte": 2490, "cola": 8551, "stsb": 5749}
#: padded tokens per training example against SST-2's (an estimate from the tasks' typical lengths, max length 64)
LENGTH = {"sst2": 1.0, "mrpc": 1.6, "rte": 1.7, "cola": 0.6, "stsb": 1.0}
#: assumed speed-up of one data-centre GPU over the one CPU thread of the measurements
GPU_SPEEDUP = 50.0
MEASURED = "2-core CPU, 1 thread: quick and full runs of the README (CPU time)"


def _width(encoder: str) -> tuple[int, str]:
    """(MAC factor against MiniLM's layers, model name) from the encoder string (nothing is loaded)."""
    name = encoder.split(":", 1)[-1].rstrip("/").rsplit("/", 1)[-1]
    if "large" in name.lower():
        return 11, f"{name} (BERT-large-sized: hidden 1024, FFN 4096)"
    if "bert-base" in name.lower() or name.lower().startswith("bert"):
        return 4, f"{name} (BERT-base: 12 layers, hidden 768, FFN 3072)"
    return 1, f"{name} (MiniLM-sized: hidden 384, FFN 1536)"


def sorbet_plan(cfg: Any) -> Plan:
    """The plan of ``cfg`` (a :class:`icml25.sorbet.reproduce.Config`)."""
    width, model = _width(cfg.encoder)
    n = min(cfg.n_train, TRAIN[cfg.task])
    kd = 1.5  # a KD epoch also runs the teacher forward
    epochs = (cfg.teacher_epochs + kd * cfg.kd1_epochs + kd * cfg.kd2_epochs * cfg.n_seeds
              + (kd * cfg.kd2_epochs + cfg.kd1_epochs + cfg.kd2_epochs if cfg.baselines else 0))
    length = cfg.max_length / 64
    gpu = cfg.device.startswith("cuda")
    speed = GPU_SPEEDUP if gpu else 1.0
    note = f"x{width} MACs per layer vs MiniLM; GPU assumed {GPU_SPEEDUP:g}x one CPU thread (not measured)" if gpu \
        else (f"x{width} MACs per layer vs MiniLM" if width > 1 else "")
    units = n * cfg.num_layers * epochs
    others = [t for t in getattr(cfg, "glue_tasks", ()) if t != cfg.task]
    # the per-task GLUE table: the same pipeline, one step-2 seed, no baselines; pair tasks are longer (LENGTH)
    glue_units = sum(min(cfg.glue_n_train, TRAIN[t]) * LENGTH[t] for t in others) * cfg.num_layers * (
        cfg.teacher_epochs + kd * cfg.kd1_epochs + kd * cfg.kd2_epochs)
    glue_units += sum(DEV[t] * LENGTH[t] for t in others) * cfg.num_layers  # 3 dev evaluations ~ 1 training pass
    spiking = DEV[cfg.task] * cfg.num_layers
    costs = [UnitCost("teacher fine-tuning, KD steps 1-2" + (" and baselines" if cfg.baselines else ""),
                      "sentence x layer x epoch", units, TRAIN_S * width * length / speed, MEASURED, note),
             UnitCost("exact spiking inference (T = 16) on the dev set", "sentence x layer", spiking,
                      SPIKING_S * width * length / speed, MEASURED, note)]
    if others:
        costs.append(UnitCost(f"per-task GLUE table: {', '.join(others)} (same pipeline, 1 seed)",
                              "sentence x layer x epoch (SST-2-length equivalent)", glue_units,
                              TRAIN_S * width * length / speed, MEASURED,
                              "pair tasks weighted by their token length against SST-2 (LENGTH; an estimate)"))
    weights = () if cfg.encoder.startswith("pretrained:") else (
        f"{cfg.encoder} (a local transformers folder of BERT-base; pass --set encoder=hf:/path)",)
    return Plan(slug="sorbet", scale=closest_preset(cfg), runs=cfg.n_seeds,
                stages=[f"load {model}, keep {cfg.num_layers} layer(s); tokenise {n} {cfg.task} training sentences",
                        f"step 0: fine-tune the teacher ({cfg.teacher_epochs} epoch(s))",
                        f"step 1: KD to ReLU + PTsoftmax + BSPN ({cfg.kd1_epochs} epoch(s))",
                        f"step 2: KD to W1A4, {cfg.n_seeds} seed(s) ({cfg.kd2_epochs} epoch(s))",
                        "exact spiking inference (T = 16) on the dev set; energy per sentence"
                        + ("; BiT-like and labels-only baselines" if cfg.baselines else ""),
                        *([f"per-task GLUE table: {', '.join(others)} ({cfg.glue_n_train} training examples each)"]
                          if others else [])],
                models=[model], datasets=[f"GLUE {t} (shipped)" for t in [cfg.task, *others]],
                needs=Needs(cpu_cores=2, gpus=1 if gpu else 0, gpu_memory_gb=16.0 if gpu else 0.0,
                            ram_gb=8.0 if width == 1 else 16.0, disk_gb=0.1 if width == 1 else 1.0, weights=weights),
                costs=costs,
                notes=["one GLUE task per run (--set task=...); MNLI/QQP/QNLI are not shipped"])

