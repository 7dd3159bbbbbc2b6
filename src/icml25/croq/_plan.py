"""The dry-run plan of the CROQ reproduction (``icml25 reproduce croq --dry-run``); imports no torch."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from icml25.core.plan import Needs, Plan, UnitCost

if TYPE_CHECKING:
    from .reproduce import Config

#: per-unit costs measured on this project's 2-core machine (loaded, one torch thread), 2026-12-03: Q1 split-CP
#: 1.1e-3 s per split (n_cal = n_test = 1000), Q2 4.05 s per (split, alpha) with 200 CP-OPT epochs (timing snippets of
#: the real code); CP-OPT 1.0 s for 40 questions x 600 features x 200 epochs; SmolLM2 1.26 10-option questions per
#: CPU-second batched (benchmarks/croq/bench_llm_answerer.py, README); Gemma-3-270M about 1.2 s per question (README)
_MEASURED = "2-core CPU under load, one torch thread, 2026-12-03 (timing snippets and the README's benchmark)"
_PER_QUESTION = {"smollm2-135m-instruct": 0.79, "gemma-3-270m": 1.2}  # seconds per 10-option question on CPU
_FEATURES = {"smollm2-135m-instruct": 576, "gemma-3-270m": 640}
_N_QUESTIONS = {"mmlu": 1487, "truthfulqa": 817, "toolalpaca": 200, "countries": 168,  # 10-option questions
                "capitals": 470, "continents": 470, "demonyms": 426, "translations": 313}  # data/knowledge
_GPU_SPEEDUP = 5000.0  # assumed speed of one data-centre GPU (batched, bf16/fp32) over one loaded CPU thread
#: share of the (test question, alpha, score) second passes that are actually asked: sets of size 0, 1 or m skip the
#: second pass and CachingAnswerer asks a revised question once across alphas and scores; calibrated so that the
#: full preset comes to the README's "about 50 min of one CPU core"
_SECOND_PASS_SHARE = 0.3


def _model_rate(model: str) -> tuple[float, str, int]:
    """(seconds per 10-option question, scale note, feature width) of a model."""
    if model in _PER_QUESTION:
        return _PER_QUESTION[model], "", _FEATURES[model]
    name = model.lower()
    found = re.findall(r"(\d+(?:\.\d+)?)b\b", name)
    billions = float(found[-1]) if found else (3.8 if "mini" in name else 7.0)
    ratio = billions * 1e9 / 135e6
    return (_PER_QUESTION["smollm2-135m-instruct"] * ratio / _GPU_SPEEDUP,
            f"SmolLM2's rate x {ratio:.3g} parameters ({billions:g}B) / GPU assumed {_GPU_SPEEDUP:g}x one CPU thread",
            4096)


def croq_plan(cfg: Config) -> Plan:
    """The plan of ``cfg`` (a :class:`icml25.croq.reproduce.Config`)."""
    from .experiment.real_claims import option_counts, split_sizes

    counts = option_counts(cfg)
    costs = [UnitCost("Q1: split CP on synthetic scores", "split", 3 * cfg.q1_splits,
                      1.1e-3 * (cfg.q1_n_cal + cfg.q1_n_test) / 2000, _MEASURED),
             UnitCost("Q2/F6: CP-OPT vs the LLaMA-13B probabilities", "split x alpha",
                      cfg.q2_splits * len(cfg.q2_alphas), 4.05 * cfg.q2_epochs / 200, _MEASURED)]
    cpopt = 0.0
    for model in cfg.models:
        rate, note, width = _model_rate(model)
        asked = 0.0
        for ds in cfg.datasets:
            n_all = 5233 if ds == "mmlu" and cfg.mmlu_subjects == "all" else _N_QUESTIONS[ds]
            for k in counts:
                tr, ca, te = split_sizes(cfg, n_all)
                second = _SECOND_PASS_SHARE * te * len(cfg.alphas) * (2 if tr else 1)
                premise = te if 0 < cfg.premise_keep < k else 0
                asked += (tr + ca + te + second + premise + cfg.n_single_check) * (k + 3) / 13
                if tr:  # 0.9 s of overhead + the MLP's full-batch FLOPs at an assumed 2e10 FLOP/s on one thread
                    cpopt += len(cfg.alphas) * (0.9 + tr * width * 64 * 6 * cfg.cpopt_epochs / 2e10)
        costs.append(UnitCost(f"{model}: first and second passes on {len(cfg.datasets)} data set(s) x "
                              f"{len(counts)} option count(s)", "10-option-question equivalent", round(asked),
                              rate, _MEASURED, note))
    if cpopt:
        costs.append(UnitCost("CP-OPT on LLM features, per setting and alpha", "CPU-second", round(cpopt, 1), 1.0,
                              _MEASURED, "measured 1.0 s for 40 questions x 600 features x 200 epochs; larger "
                              "problems: 0.9 s + FLOPs at 2e10 per second"))
    local = [m for m in cfg.models if m.startswith("hf:")]
    gpu = cfg.device != "cpu"
    downloads = (("MMLU-Redux: the 41 subjects not shipped (raw.githubusercontent.com/aryopg/mmlu-redux)",)
                 if cfg.mmlu_subjects == "all" and "mmlu" in cfg.datasets else ())
    return Plan(
        slug="croq", scale="config",
        stages=(f"Q1: split-CP validity on synthetic Dirichlet scores ({cfg.q1_splits} splits x 3 alphas)",
                f"Q2/F6: CP-OPT vs the mean-probability score on LLaMA-13B MMLU probabilities ({cfg.q2_splits} "
                f"splits x alphas {list(cfg.q2_alphas)})",
                f"CROQ: {len(cfg.models)} model(s) x {len(cfg.datasets)} data set(s) x options {list(counts)}: first "
                f"pass, conformal sets (logits, CP-OPT), revised questions at alphas {list(cfg.alphas)}, premise "
                f"check with {cfg.premise_keep} options" if cfg.premise_keep else "CROQ on the configured models"),
        models=tuple(cfg.models),
        datasets=tuple(f"{d}" + (" (57 subjects)" if d == "mmlu" and cfg.mmlu_subjects == "all" else "")
                       for d in cfg.datasets),
        runs=1,
        needs=Needs(cpu_cores=2, gpus=1 if gpu else 0, gpu_memory_gb=80.0 if gpu else 0.0,
                    ram_gb=48.0 if gpu else 4.0, disk_gb=60.0 if local else 1.0, weights=tuple(local),
                    downloads=downloads),
        costs=costs,
        notes=("Model strings: --set models=hf:/path/to/folder,... (local transformers weights) or "
               "openai:http://host:8000/v1#<name> (top-k log-probs only: CP-OPT then has no hidden state).",)
        if local else ())
