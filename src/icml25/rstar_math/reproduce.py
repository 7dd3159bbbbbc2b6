"""Quick/full reproduction of rStar-Math on the synthetic StepArith domain (spec §6).

(a) search, Q-value annotation and data extraction with the noisy rule-based bootstrap solver; (b) the neural
smoke run: a TinyGPT base model pretrained on problem text + sentence->code pairs, SFT on the extracted
trajectories, PPM on the extracted pairs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from icml25.core import Report, Scale, reproduction

# rough values from the paper that frame the claims (Table 2 coverage of round 1; PPM is trained to rank pairs)
PAPER_ROUND1_COVERAGE = 60.17


@dataclass(frozen=True)
class Config:
    n_problems: int = 80  # StepArith training pool searched by MCTS (spec quick: 80)
    levels: tuple = (1, 2, 3, 4)  # difficulty levels of the pool (number of operations)
    n_candidates: int = 4  # candidate steps per expansion (n)
    rollouts: int = 8  # MCTS rollouts per problem (R)
    max_depth: int = 10  # steps deeper than this become failure terminals
    errors_threshold: int = 2  # consecutive code errors that end a branch (bootstrap round: 2)
    single_samples: int = 4  # independent chains per problem to measure single-sample accuracy
    n_pretrain_problems: int = 300  # problems whose sentences form the base-model pretraining corpus
    pretrain_steps: int = 300  # base-model pretraining steps
    sft_steps: int = 150  # policy SFT steps
    ppm_steps: int = 150  # PPM training steps
    batch_size: int = 32  # sequences per LM training step
    ppm_batch_pairs: int = 16  # preference pairs per PPM step (2 sequences each)
    lr: float = 2e-3  # peak AdamW learning rate
    n_embd: int = 64  # transformer width
    n_layer: int = 2  # transformer layers
    n_head: int = 4  # attention heads
    block_size: int = 256  # context length in tokens
    n_heldout: int = 40  # held-out L1 problems for the format check
    ppm_loss: str = "paper"  # "paper" (Eq. 4 mean) or "official" (count-weighted sum)
    torch_threads: int = 1  # torch intra-op threads (1 is faster for these sizes)
    rounds: int = 1  # self-evolution rounds (round 1 = bootstrap search + smoke training above)
    later_candidates: int = 4  # candidates per expansion in rounds >= 2 and in MCTS evaluation
    later_rollouts: int = 4  # rollouts per problem in rounds >= 2
    extra_rollouts: int = 0  # extra rollouts on still-unsolved problems in the last round (round-4 analogue)
    n_test: int = 12  # held-out test problems for the evaluation
    test_levels: tuple = (1, 2)  # levels of the test set
    eval_ns: tuple = (2, 4)  # numbers of trajectories N for maj@N, BoN@N, MCTS+PPM@N (anytime)
    eval_seeds: int = 1  # sampling seeds of the last round's evaluation (means and bootstrap CIs over them)
    ablation_seeds: int = 1  # sampling seeds of the PQM/ORM evaluations (the first ones of the main evaluation)
    rejection_samples: int = 4  # plain samples per pool problem for the rejection-sampling SFT baseline
    ablation_steps: int = 40  # SFT/PQM/ORM steps of the ablation models; 0 = the round's own SFT/PPM budgets
    n_boot: int = 2000
    time_budget_s: float = 0.0  # stop with a clear error once exceeded (0 = none); finished rounds stay in out/  # bootstrap resamples of the test problems for the 95% CIs

    @classmethod
    def quick(cls) -> Config:
        return cls()

    @classmethod
    def full(cls) -> Config:
        return cls(n_problems=240, levels=(1, 2, 3, 4, 5, 6), n_candidates=5, rollouts=8, n_pretrain_problems=1200,
                   pretrain_steps=3000, sft_steps=800, ppm_steps=500, lr=1e-3, n_embd=96, n_layer=3,
                   block_size=320, n_heldout=100, rounds=3, later_candidates=8, later_rollouts=16,
                   extra_rollouts=32, n_test=150, test_levels=(1, 2, 3, 4, 5, 6), eval_ns=(4, 8, 16),
                   eval_seeds=3, rejection_samples=16, ablation_steps=0)


@reproduction(slug="rstar_math", title="rStar-Math: Small LLMs Can Master Math Reasoning with Self-Evolved Deep "
              "Thinking", arxiv="2501.04519", extras=("torch",), config=Config)
def reproduce(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    import torch

    from ._experiment import run_engine, run_neural

    torch.set_num_threads(config.torch_threads)
    report = Report(slug="rstar_math", title="rStar-Math (Guan et al., ICML 2025)")
    t0 = time.perf_counter()
    eng = run_engine(config, seed)
    t1 = time.perf_counter()
    neu = run_neural(config, seed, eng)
    t2 = time.perf_counter()
    from ._evolution_experiment import run_rounds_and_eval
    from ._full_claims import add_full_claims

    budget = config.time_budget_s - (t2 - t0) if config.time_budget_s > 0 else None
    evo = run_rounds_and_eval(config, seed, eng, neu, Path(out) / "self_evolution", budget)
    t3 = time.perf_counter()
    report.add_claim("A1", "MCTS trees satisfy the visit/value invariants (Q in [-1,1], every visit accounted for, "
                     "failure terminals N=1 and W=-1 on themselves only)", None, eng["invariant_violations"] == 0,
                     "is_true", None, scale=Scale.QUICK, note=f"{eng['n_nodes']} nodes, {eng['n_failure']} failure "
                     "terminals")
    report.add_claim("A2", "MCTS coverage exceeds single-sample accuracy of the same generator (L3-L4, points)",
                     None, eng["coverage_gain_l34"], ">=", 10.0, scale=Scale.QUICK, unit="points",
                     note=f"coverage {eng['coverage_l34']:.1f}% vs single-sample {eng['single_l34']:.1f}%")
    report.add_claim("A3", "every extracted SFT trajectory re-executes to the gold answer", None,
                     eng["sft_reexec_rate"], ">=", 1.0, scale=Scale.QUICK,
                     note=f"{eng['n_sft']} trajectories (top-2 per solved problem)")
    report.add_claim("A4", "Q-value pair extraction yields preference pairs (2+2 / 1-vs-4 rule, margin and edit "
                     "filters, final-answer pairs)", None, eng["n_pairs"], ">=", 30, scale=Scale.QUICK,
                     note=f"{eng['n_step_pairs']} step pairs + {eng['n_final_pairs']} final-answer pairs")
    report.add_claim("A5", "the positive step of a pair is the semantically correct one (step pairs whose steps "
                     "differ in ground-truth consistency)", None, eng["pair_semantic_acc"], ">=", 0.9,
                     scale=Scale.QUICK, note=f"{eng['n_decisive']} decisive of {eng['n_step_pairs']} step pairs; "
                     f"{eng['pair_tie_share']:.0%} have both steps consistent")
    report.add_claim("B1", "policy SFT loss falls (last-10 vs first-10 step average)", None, neu["sft_drop"], ">=",
                     0.40, scale=Scale.QUICK, note=f"{neu['sft_first']:.3f} -> {neu['sft_last']:.3f}")
    report.add_claim("B2", "SFT'd policy's greedy first step parses and executes on held-out L1 problems", None,
                     neu["format_rate"], ">=", 0.50, scale=Scale.QUICK,
                     note=f"base model before SFT: {neu['format_rate_base']:.2f}")
    report.add_claim("B3", "PPM pairwise loss falls (last-10 vs first-10 step average)", None, neu["ppm_drop"],
                     ">=", 0.20, scale=Scale.QUICK, note=f"{neu['ppm_first']:.3f} -> {neu['ppm_last']:.3f}")
    report.add_claim("B4", "PPM training-pair accuracy", None, neu["ppm_pair_acc"], ">=", 0.60, scale=Scale.QUICK)

    add_full_claims(report, config, eng, evo)
    report.add_table("rounds", [{k: v for k, v in m.items() if k != "config"} for m in evo["metrics"]])
    report.add_table("coverage_by_level", eng["level_rows"])
    report.add_table("pairs", [eng["pair_row"]])
    report.add_table("timing", [{"part": "search+extraction", "seconds": round(t1 - t0, 2)},
                                {"part": "neural (pretrain+SFT+PPM)", "seconds": round(t2 - t1, 2)},
                                {"part": "pretrain", "seconds": round(neu["t_pretrain"], 2)},
                                {"part": "sft", "seconds": round(neu["t_sft"], 2)},
                                {"part": "ppm", "seconds": round(neu["t_ppm"], 2)},
                                *({"part": part, "seconds": round(sec, 2)} for part, sec in evo["timing"]),
                                {"part": "total", "seconds": round(t3 - t0, 2)}])
    report.add_figure("coverage_vs_single_sample", _coverage_figure(eng["level_rows"]))
    report.add_figure("training_losses", _loss_figure(neu))
    report.add_figure("accuracy_vs_n", _accuracy_figure(evo["last"][0], config.eval_ns))
    report.add_figure("accuracy_per_round", _per_round_figure(evo["per_round"], evo["n_mid"]))
    report.add_figure("coverage_per_round", _rounds_figure(evo["coverage"]))
    return report


def _coverage_figure(rows: list[dict]):
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    rows = [r for r in rows if isinstance(r["level"], int)]
    lv = [r["level"] for r in rows]
    ax.bar([x - 0.2 for x in lv], [r["single_sample_acc_%"] for r in rows], width=0.4, label="single sample")
    ax.bar([x + 0.2 for x in lv], [r["mcts_coverage_%"] for r in rows], width=0.4, label="MCTS coverage")
    ax.set_xlabel("level (number of operations)")
    ax.set_ylabel("problems solved (%)")
    ax.legend()
    return fig


def _accuracy_figure(ev: dict, ns):
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    for method in ("maj", "bon", "mcts"):
        ax.plot(list(ns), [100 * ev[f"{method}@{n}"]["acc"] for n in ns], marker="o", label=method)
    ax.axhline(100 * ev["greedy"]["acc"], color="gray", linestyle="--", label="greedy")
    ax.set_xlabel("trajectories per problem (N)")
    ax.set_ylabel("test accuracy (%)")
    ax.legend()
    return fig


def _per_round_figure(per_round: dict, n: int):
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    ks = sorted(per_round)
    for key, label in (("greedy", "greedy"), (f"maj@{n}", f"maj@{n}"), (f"bon@{n}", f"BoN-PPM@{n}"),
                       (f"mcts@{n}", f"MCTS+PPM@{n}")):
        ax.plot(ks, [100 * per_round[k][key]["acc"] for k in ks], marker="o", label=label)
    ax.set_xlabel("self-evolution round (policy and PPM of that round)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_xticks(ks)
    ax.legend()
    return fig


def _rounds_figure(coverage: list[float]):
    from icml25.core.plotting import new_figure, reference_line

    fig, ax = new_figure()
    ax.plot(range(1, len(coverage) + 1), coverage, marker="o", label="ours (StepArith pool)")
    reference_line(ax, 60.17, label="paper round 1 (747k pool)")
    ax.set_xlabel("self-evolution round")
    ax.set_ylabel("MCTS coverage of the training pool (%)")
    ax.legend()
    return fig


def _loss_figure(neu: dict):
    from icml25.core.plotting import new_figure

    fig, axes = new_figure(ncols=3, width=12)
    for ax, key, title in zip(axes, ("pretrain_losses", "sft_losses", "ppm_losses"),
                              ("base pretraining", "policy SFT", "PPM pairwise")):
        ax.plot(neu[key])
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.set_ylabel("loss (nats)")
    return fig
