"""The dry-run plan of the Ehrlich reproduction (``icml25 reproduce mcmc_extrapolation --dry-run``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from icml25.core.plan import Needs, Plan, UnitCost

if TYPE_CHECKING:
    from .reproduce import Config

#: per-unit costs measured on this project's 2-core machine (loaded, one thread), 2026-12-03, timing snippets of the
#: real code: MH chain-steps (200 chains x 50 steps) at (v, L, c, k) = (12, 16, 1, 4) 4.8e-6 s, (20, 32, 2, 4)
#: 6.1e-6 s, (32, 256, 4, 8) 7.3e-5 s; q_θ of the full preset (2 layers, width 96, L = 32): 2.8e-3 s per
#: transition-epoch (batch 64), 1.6e-3 s per sampled sequence (batch 160)
_MEASURED = "2-core CPU under load, one thread, timing snippets of the real code, 2026-12-03"
_GPU_SPEEDUP = 50.0  # assumed speed-up of q_θ's training and sampling on one data-centre GPU over one CPU thread
#: transitions per chain of each selection (spec §6 calibration: improve ~3.9 per 1,500-step chain; the others
#: keep up to k_max - 1 transitions)
_PER_CHAIN = {"improve": 3.9, "improve_topk": 3.9, "uniform": None, "random": None, "endpoints": 1.0}


def _mh_seconds(cfg: Config) -> float:
    """Seconds per MH chain-step: a linear fit in L * c to the three measurements above."""
    return 2.0e-6 + 7.0e-8 * cfg.dim * cfg.num_motifs


def _qtheta_scale(cfg: Config) -> float:
    """FLOPs of one q_θ sequence relative to the full preset's (matrix products + attention), at least 1."""
    def flops(n_layer: int, d: int, L: int) -> float:
        T = 2 * L + 2
        return n_layer * (12 * d * d * T + 2 * d * T * T)

    return max(1.0, flops(cfg.n_layer, cfg.n_embd, cfg.dim) / flops(2, 96, 32))


#: one forward pass of sentence-transformers all-MiniLM-L6-v2 (6 layers x 384) over a 56-token text, batch 32, one
#: loaded CPU thread, 2026-12-03: 0.0179 s. A RoBERTa-base / GPT-2-small body (12 layers x 768) has 8x its matrix
#: FLOPs per token; GPT-2's 50k-token output layer adds 0.45x more.
_MINILM_TEXT = 0.0179
_BASE_TEXT = 8 * _MINILM_TEXT * 64 / 56  # one RoBERTa-base-size forward over a 64-token text, one CPU thread
_TEXT_MEASURED = "all-MiniLM-L6-v2 forward on this 2-core CPU (one thread, loaded), 2026-12-03, scaled by FLOPs"


def _model_status(cfg: Config, field: str) -> str:
    from ..llm.transformers_models import model_folder

    spec = getattr(cfg, field)
    if spec.startswith("pretrained:"):  # installed or not; its cache is built on first use, not by the dry run
        from icml25.llm.pretrained import is_installed

        try:
            ok = is_installed(spec.partition(":")[2])
        except (KeyError, ValueError):
            ok = False
        return f"{field} = {spec} ({'found' if ok else 'missing: install its wheel (icml25 models)'})"
    try:
        model_folder(spec, field)
    except (FileNotFoundError, TypeError):
        return f"{field} = {spec} (missing: pass --set {field}=hf:/path/to/local/folder)"
    return f"{field} = {spec} (found)"


def _yelp_status(cfg: Config) -> str:
    from icml25.core.data import cache_dir

    from .text_data import YELP_URL

    if cfg.yelp_path:
        ok = Path(cfg.yelp_path).expanduser().exists()
        return f"yelp_review_full at {cfg.yelp_path} ({'found' if ok else 'missing'})"
    cached = cache_dir("mcmc_extrapolation") / "yelp_review_full_csv"
    if (cached / "train.csv").is_file() and (cached / "test.csv").is_file():
        return f"yelp_review_full in the cache {cached} (found)"
    return (f"yelp_review_full (missing: put train.csv, test.csv in {cached}, pass --set yelp_path=<folder>, or "
            f"run with --allow-download to fetch {YELP_URL}, 196 MB, MD5-checked)")


def _text_plan(cfg: Config, speed: float) -> tuple[list[str], list[str], list[str], list[UnitCost], list[str]]:
    """Stages, models, data sets, costs and weights of the text tasks of ``cfg`` (empty when it runs none)."""
    from .text_experiment import model_fields

    stages, models, data, costs, weights = [], [], [], [], []
    budget = cfg.text_steps * cfg.text_candidates
    where = f"GPU assumed {_GPU_SPEEDUP:g}x one CPU thread" if speed > 1 else "one CPU thread"
    note = f"RoBERTa-base-size forwards (GPT-2 small: x1.45), {where}"
    for task in cfg.text_tasks:
        fields = model_fields(task)
        stages.append(f"{task}: {cfg.text_n_chains} MH chains x {cfg.text_chain_steps} steps (mask-and-infill, "
                      f"{cfg.text_n_positions} tokens, beta {cfg.text_beta:g}), q_θ LoRA {cfg.qtheta_steps} steps, "
                      f"{cfg.text_n_test} test inputs: q_θ {cfg.text_steps} steps x best-of-{cfg.text_candidates} vs "
                      f"MH at {budget} / {cfg.text_chain_steps} guide calls, judged by the oracle (claim "
                      f"{'X2' if task == 'sentiment' else 'X3'})")
        models += [f"{task}: " + _model_status(cfg, f) for f in fields]
        weights += [f"{getattr(cfg, f)} ({f})" for f in fields]
        if task == "sentiment":
            data.append(f"{task}: " + _yelp_status(cfg))
        else:
            found = bool(cfg.authorship_path) and Path(cfg.authorship_path).expanduser().is_file()
            data.append(f"{task}: authorship CSV (text, author) at authorship_path = {cfg.authorship_path!r} "
                        f"({'found' if found else 'missing'})")
        per_step = 2.0 + (0.125 if task == "anonymisation" else 0.0)  # MLM + guide (+ MiniLM similarity)
        costs += [
            UnitCost(f"{task}: MH chains (training data and test references)", "chain-step",
                     (cfg.text_n_chains + cfg.text_n_test) * cfg.text_chain_steps, per_step * _BASE_TEXT / speed,
                     _TEXT_MEASURED, note),
            UnitCost(f"{task}: q_θ LoRA fine-tuning", "optimiser step", cfg.qtheta_steps,
                     cfg.qtheta_batch * 3 * (cfg.qtheta_history + 1) * 1.45 * _BASE_TEXT / speed, _TEXT_MEASURED,
                     note + "; forward + backward = 3 forwards over history + 1 texts per example"),
            UnitCost(f"{task}: q_θ candidates (generation + guide call)", "candidate",
                     cfg.text_n_test * budget, ((cfg.qtheta_history + 2) * 1.45 + per_step - 1) * _BASE_TEXT / speed,
                     _TEXT_MEASURED, note + "; a candidate costs about a forward over prompt + output"),
        ]
    return stages, models, data, costs, weights


def mcmc_extrapolation_plan(cfg: Config) -> Plan:
    """The plan of ``cfg`` (a :class:`icml25.mcmc_extrapolation.reproduce.Config`)."""
    sels = (*cfg.selections, *cfg.ablation_selections)
    per_chain = [(_PER_CHAIN[s] if _PER_CHAIN[s] is not None else cfg.k_max - 1) for s in sels]
    train_units = cfg.n_chains * sum(per_chain) * cfg.epochs
    budget = cfg.steps * cfg.n_candidates
    sample_units = cfg.n_test * cfg.steps * (len(sels) * (cfg.n_candidates + 1) + cfg.n_candidates)
    gpu = cfg.device != "cpu"
    speed = _GPU_SPEEDUP if gpu else 1.0
    note = (f"{'GPU assumed ' + format(_GPU_SPEEDUP, 'g') + 'x one CPU thread; ' if gpu else ''}"
            f"q_θ cost scaled by FLOPs from the full preset's model (x{_qtheta_scale(cfg):.3g})")
    costs = [
        UnitCost("MH exactness check (v=3, L=4)", "chain-step", cfg.exact_chains * cfg.exact_steps, 4.8e-6,
                 _MEASURED),
        UnitCost("MH chains (training data) and MH references on the test inputs", "chain-step",
                 cfg.n_chains * cfg.chain_steps + cfg.n_test * cfg.mh_long_steps, _mh_seconds(cfg), _MEASURED,
                 "linear fit in L x c to measurements at L x c = 16, 64, 1024"),
        UnitCost("q_θ training", "transition-epoch", train_units, 2.8e-3 * _qtheta_scale(cfg) / speed, _MEASURED,
                 note + f"; transitions per chain: {dict(zip(sels, per_chain))}"),
        UnitCost("q_θ transformations (best-of-n, unguided, untrained reference)", "sampled sequence", sample_units,
                 1.6e-3 * _qtheta_scale(cfg) / speed, _MEASURED, note),
    ]
    ehrlich = (f"Ehrlich(v={cfg.num_states}, L={cfg.dim}, c={cfg.num_motifs}, k={cfg.motif_length}, "
               f"instance seed {cfg.instance_seed})")
    t_stages, t_models, t_data, t_costs, t_weights = _text_plan(cfg, speed)
    params = cfg.n_layer * 12 * cfg.n_embd ** 2
    gpu_mem = 2.0 + 4 * 64 * (2 * cfg.dim + 2) * cfg.n_embd * cfg.n_layer * 16 / 1e9 if gpu else 0.0
    return Plan(
        slug="mcmc_extrapolation", scale="config",
        stages=(f"MH exactness on an 81-state space ({cfg.exact_chains} chains x {cfg.exact_steps} steps)",
                f"{cfg.n_chains} MH chains x {cfg.chain_steps} steps on {ehrlich} (beta {cfg.beta:g}, "
                f"{cfg.n_sites} sites per proposal), f <= {cfg.train_max:g} starts",
                f"episodes by selection ({', '.join(sels)}), q_θ trained {cfg.epochs} epochs per selection",
                f"{cfg.n_test} test inputs: q_θ {cfg.steps} steps x best-of-{cfg.n_candidates} = {budget} "
                f"evaluations vs MH at {budget} / {cfg.long_budget} / {cfg.mh_long_steps} and hill climbing",
                *t_stages),
        models=(f"q_θ: GPT trained from scratch, {cfg.n_layer} layer(s), {cfg.n_head} heads, width {cfg.n_embd} "
                f"(~{params / 1e6:.2g} M parameters), context {2 * cfg.dim + 2}, on {cfg.device}", *t_models),
        datasets=(f"{ehrlich}: closed form, generated from its seed (stands in for the paper's ACE2 data, which "
                  "is not implemented)", *t_data),
        runs=1,
        needs=Needs(cpu_cores=2, gpus=1 if gpu else 0,
                    gpu_memory_gb=round(gpu_mem + (4.0 if cfg.text_tasks else 0.0), 1),
                    ram_gb=(4.0 if gpu else 2.0) + (8.0 if cfg.text_tasks else 0.0),
                    disk_gb=0.1 + (1.5 if "sentiment" in cfg.text_tasks else 0.0),
                    weights=tuple(dict.fromkeys(t_weights)),
                    downloads=(("yelp_review_full_csv.tgz (196 MB) with --allow-download",)
                               if "sentiment" in cfg.text_tasks and "missing" in _yelp_status(cfg) else ())),
        costs=(*costs, *t_costs),
        notes=("Not measurable by any preset: the paper's protein task (ACE2, FoldX ddG; claim X1). The text tasks "
               "(claims X2, X3) run with --scale paper (text_tasks) when their models and data are given; a task "
               "whose models or data are missing is reported as not measured, with what is missing.",
               "Use --seeds 3 for the three seeds of the spec's full protocol."))
