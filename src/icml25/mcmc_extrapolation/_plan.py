"""The dry-run plan of the Ehrlich reproduction (``icml25 reproduce mcmc_extrapolation --dry-run``)."""

from __future__ import annotations

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
    params = cfg.n_layer * 12 * cfg.n_embd ** 2
    gpu_mem = 2.0 + 4 * 64 * (2 * cfg.dim + 2) * cfg.n_embd * cfg.n_layer * 16 / 1e9 if gpu else 0.0
    return Plan(
        slug="mcmc_extrapolation", scale="config",
        stages=(f"MH exactness on an 81-state space ({cfg.exact_chains} chains x {cfg.exact_steps} steps)",
                f"{cfg.n_chains} MH chains x {cfg.chain_steps} steps on {ehrlich} (beta {cfg.beta:g}, "
                f"{cfg.n_sites} sites per proposal), f <= {cfg.train_max:g} starts",
                f"episodes by selection ({', '.join(sels)}), q_θ trained {cfg.epochs} epochs per selection",
                f"{cfg.n_test} test inputs: q_θ {cfg.steps} steps x best-of-{cfg.n_candidates} = {budget} "
                f"evaluations vs MH at {budget} / {cfg.long_budget} / {cfg.mh_long_steps} and hill climbing"),
        models=(f"q_θ: GPT trained from scratch, {cfg.n_layer} layer(s), {cfg.n_head} heads, width {cfg.n_embd} "
                f"(~{params / 1e6:.2g} M parameters), context {2 * cfg.dim + 2}, on {cfg.device}",),
        datasets=(f"{ehrlich}: closed form, generated from its seed (stands in for the paper's ACE2 / Yelp / "
                  "anonymisation data, which are not implemented)",),
        runs=1,
        needs=Needs(cpu_cores=2, gpus=1 if gpu else 0, gpu_memory_gb=round(gpu_mem, 1), ram_gb=4.0 if gpu else 2.0,
                    disk_gb=0.1),
        costs=costs,
        notes=("Not measurable by any preset: the paper's protein (ACE2, FoldX ddG), sentiment (Yelp) and "
               "anonymisation tasks, which need their data, pretrained MLM proposals and pretrained q_θ backbones "
               "(claims X1-X3 are registered as not measured).",
               "Use --seeds 3 for the three seeds of the spec's full protocol."))
