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
from icml25.core.registry import reproduction_stub

# Table 2 of the paper: MCTS coverage of the training pool in round 1 (drawn as a reference line)
PAPER_ROUND1_COVERAGE = 60.17

_POSITIVE_INTS = ("n_problems", "n_candidates", "rollouts", "max_depth", "errors_threshold", "single_samples",
                  "n_pretrain_problems", "pretrain_steps", "sft_steps", "ppm_steps", "batch_size", "ppm_batch_pairs",
                  "n_embd", "n_layer", "n_head", "block_size", "n_heldout", "torch_threads", "rounds",
                  "later_candidates", "later_rollouts", "n_test", "eval_seeds", "ablation_seeds",
                  "rejection_samples", "n_boot")


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
    n_boot: int = 2000  # bootstrap resamples of the test problems for the 95% CIs
    time_budget_s: float = 0.0  # stop with a clear error once exceeded (0 = none); finished rounds stay in out/
    fresh: bool = False  # start over: delete <out>/self_evolution instead of resuming the rounds finished there
    rename_copies: int = 8  # entity-renamed copies of every SFT trajectory (a CPU lever against memorisation)
    pair_edit_unit: str = "code_token"  # pair edit filter on code tokens (or "char"acters: official, 20)
    pair_min_edit: int = 1  # minimum edit distance of a step pair in pair_edit_unit (official: 20 characters)
    accumulate_sft: bool = True  # rounds >= 2 keep earlier rounds' trajectories of problems they did not solve
    ablations: bool = True  # run the reward-model (D1-D4) and SFT-data (E1) ablations on the last round
    vote: tuple = (2, 2, 2)  # multi-run MCTS+PPM of the last round: (runs, rollouts per run, top-K of the vote)
    pretrain_in_context: bool = True  # base pretraining also on question copies and question <sep> sentence <sep> step

    def __post_init__(self) -> None:
        """Check every field's type and range (and the relations between fields), naming the field."""
        from icml25.core.validation import check_int, check_option, check_positive

        for name in _POSITIVE_INTS:
            check_int(getattr(self, name), name, low=1)
        for name in ("extra_rollouts", "ablation_steps", "rename_copies", "pair_min_edit"):
            check_int(getattr(self, name), name, low=0)
        check_positive(self.lr, "lr")
        check_positive(self.time_budget_s, "time_budget_s", allow_zero=True)
        check_option(self.ppm_loss, "ppm_loss", ("paper", "official"))
        check_option(self.pair_edit_unit, "pair_edit_unit", ("char", "code_token"))
        for name in ("fresh", "accumulate_sft", "pretrain_in_context", "ablations"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")
        for name in ("levels", "test_levels", "eval_ns", "vote"):
            value = getattr(self, name)
            if not isinstance(value, (tuple, list)) or not value:
                raise ValueError(f"{name} must be a non-empty tuple of integers, got {value!r}")
            high = 6 if name in ("levels", "test_levels") else None
            for v in value:
                check_int(v, f"{name} entries", low=1, high=high)
        if len(self.vote) != 3:
            raise ValueError(f"vote must be (runs, rollouts, top_k), got {self.vote!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd must be divisible by n_head, got n_embd={self.n_embd}, n_head={self.n_head}")
        if self.ablation_seeds > self.eval_seeds:
            raise ValueError(f"ablation_seeds must be <= eval_seeds ({self.eval_seeds}), got {self.ablation_seeds}")

    @classmethod
    def quick(cls) -> Config:
        return cls()

    @classmethod
    def full(cls) -> Config:
        return cls(n_problems=240, levels=(1, 2, 3, 4, 5, 6), n_candidates=5, rollouts=8, n_pretrain_problems=1200,
                   pretrain_steps=3000, sft_steps=800, ppm_steps=500, lr=1e-3, n_embd=96, n_layer=3,
                   block_size=320, n_heldout=100, rounds=4, later_candidates=8, later_rollouts=16,
                   extra_rollouts=32, n_test=150, test_levels=(1, 2, 3, 4, 5, 6), eval_ns=(4, 8, 16),
                   eval_seeds=3, rejection_samples=16, ablation_steps=0, vote=(8, 2, 4))


@reproduction(slug="rstar_math", title="rStar-Math: Small LLMs Can Master Math Reasoning with Self-Evolved Deep "
              "Thinking", arxiv="2501.04519", extras=("torch",), config=Config)
def reproduce(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The quick/full reproduction: search + extraction, the neural smoke run, later rounds and the evaluation."""
    return _run(seed, out, config, baseline=False)


@reproduction_stub(slug="rstar_math")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The stub: the same reproduction with the paper's trained models replaced by the naive baseline, the
    pretrained base model never SFT'd as the policy and a PPM whose head is never trained."""
    return _run(seed, out, config, baseline=True)


def _run(seed: int, out: Path, config: Config, baseline: bool) -> Report:
    import torch

    from ._experiment import run_engine, run_neural

    torch.set_num_threads(config.torch_threads)
    report = Report(slug="rstar_math", title="rStar-Math (Guan et al., ICML 2025)")
    t0 = time.perf_counter()
    workdir = prepare_workdir(Path(out) / "self_evolution", config, seed, baseline)
    eng = run_engine(config, seed)
    t1 = time.perf_counter()
    neu = run_neural(config, seed, eng, baseline=baseline, workdir=workdir)
    t2 = time.perf_counter()
    from ._evolution_experiment import run_rounds_and_eval
    from ._full_claims import add_full_claims

    budget = config.time_budget_s - (t2 - t0) if config.time_budget_s > 0 else None
    evo = run_rounds_and_eval(config, seed, eng, neu, workdir, budget)
    t3 = time.perf_counter()
    # fails if: a back-up sends a failure terminal's -1 to its ancestors, or visits are double counted
    report.add_claim("A1", "MCTS trees satisfy the visit/value invariants (Q in [-1,1], every visit accounted for, "
                     "failure terminals N=1 and W=-1 on themselves only)", None, eng["invariant_violations"] == 0,
                     "is_true", None, scale=Scale.QUICK, kind="check", aggregate="all",
                     note=f"{eng['n_nodes']} nodes, {eng['n_failure']} failure terminals")
    # fails if: the tree search only re-samples the root (no UCT descent / no back-up), so coverage = one chain
    report.add_claim("A2", "MCTS coverage exceeds single-sample accuracy of the same generator (L3-L4, points)",
                     None, eng["coverage_gain_l34"], ">=", 10.0, scale=Scale.QUICK, unit="points", kind="mechanism",
                     note=f"coverage {eng['coverage_l34']:.1f}% vs single-sample {eng['single_l34']:.1f}% "
                          "(threshold: spec quick mode)")
    # fails if: trajectories are extracted without checking the terminal's correctness, or the accumulated-code
    # rule drops ancestor code so that the saved response does not re-run
    report.add_claim("A3", "every extracted SFT trajectory re-executes to the gold answer", None,
                     eng["sft_reexec_rate"], ">=", 1.0, scale=Scale.QUICK, kind="check", aggregate="min",
                     note=f"{eng['n_sft']} trajectories (top-2 per solved problem)")
    # fails if: the 2+2 / 1-vs-4 rule or the Q-margin filter rejects everything (e.g. Q-values never backed up)
    report.add_claim("A4", "Q-value pair extraction yields preference pairs (2+2 / 1-vs-4 rule, margin and edit "
                     "filters, final-answer pairs)", None, eng["n_pairs"], ">=", 30, scale=Scale.QUICK,
                     kind="mechanism", note=f"{eng['n_step_pairs']} step pairs + {eng['n_final_pairs']} final-answer "
                     "pairs (threshold: spec quick mode)")
    # fails if: Q-values are not backed up along the path (or with the wrong sign), so pairs rank steps at random
    report.add_claim("A5", "the positive step of a pair is the semantically correct one (step pairs whose steps "
                     "differ in ground-truth consistency)", None, eng["pair_semantic_acc"], ">=", 0.9,
                     scale=Scale.QUICK, kind="mechanism", note=f"{eng['n_decisive']} decisive of "
                     f"{eng['n_step_pairs']} step pairs; {eng['pair_tie_share']:.0%} have both steps consistent")
    # fails if: SFT targets are fully masked (no gradient) or the optimiser is not stepped
    report.add_claim("B1", "policy SFT loss falls (last-10 vs first-10 step average)", None, neu["sft_drop"], ">=",
                     0.40, scale=Scale.QUICK, kind="check",
                     note=f"{neu['sft_first']:.3f} -> {neu['sft_last']:.3f}")
    # fails if: SFT does not teach the solution format (the base model, pretrained only on sentence -> code pairs,
    # scores 0 here: it never saw the <code> block, the print step or the boxed answer step)
    report.add_claim("B2", "SFT'd policy writes complete step-format solutions (code steps, print step, boxed "
                     "answer; right or wrong) greedily on held-out L1 problems", None, neu["format_rate"], ">=", 0.50,
                     scale=Scale.QUICK, kind="mechanism",
                     note=f"base model before SFT: {neu['format_rate_base']:.2f}; {config.n_heldout} problems; "
                          "threshold: spec quick mode (format learning)")
    # fails if: the pairwise loss has the wrong sign or the PPM head receives no gradient
    report.add_claim("B3", "PPM pairwise loss falls (last-10 vs first-10 step average)", None, neu["ppm_drop"],
                     ">=", 0.20, scale=Scale.QUICK, kind="check",
                     note=f"{neu['ppm_first']:.3f} -> {neu['ppm_last']:.3f}")
    # fails if: the PPM only memorises its training pairs, or is untrained (chance 0.5; the stub scores ~0.5)
    report.add_claim("B4", "the PPM ranks held-out preference pairs (from search trees of unseen problems, never "
                     "trained on) correctly", None, neu["ppm_heldout_pair_acc"], ">=", 0.60, scale=Scale.FULL,
                     kind="paper", note=f"{neu['n_heldout_pairs']} held-out pairs (step + final-answer); training-pair "
                     f"accuracy {neu['ppm_pair_acc']:.2f}; threshold: the spec's quick PPM threshold (0.6), full-scale "
                     "step-pair threshold 0.8 is C6")

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


# fields that do not change what a finished round holds (a resumed run may change them)
_RESUME_FREE = ("time_budget_s", "fresh", "n_test", "test_levels", "eval_ns", "eval_seeds", "ablation_seeds",
                "rejection_samples", "ablation_steps", "n_boot", "torch_threads", "vote", "ablations")


def prepare_workdir(workdir: Path, config: Config, seed: int, baseline: bool) -> Path:
    """The checkpoint folder of the reproduction: kept and resumed when a previous run with the same settings
    wrote it, emptied first with ``fresh=True``; a folder written with other settings is an error (so that
    rounds of two configurations are never mixed)."""
    import json
    import shutil
    from dataclasses import asdict

    key = {k: v for k, v in asdict(config).items() if k not in _RESUME_FREE}
    key = json.loads(json.dumps({"seed": seed, "baseline": baseline, "config": key}))
    key_file = workdir / "run.json"
    if config.fresh and workdir.exists():
        shutil.rmtree(workdir)
    if workdir.exists() and any(workdir.iterdir()):
        old = json.loads(key_file.read_text()) if key_file.is_file() else None
        if old is not None:  # fields that became resume-free since that run was written do not count
            old["config"] = {k: v for k, v in old.get("config", {}).items() if k not in _RESUME_FREE}
        if old != key:
            diff = sorted(k for k in set(key["config"]) | set((old or {}).get("config", {}))
                          if key["config"].get(k) != (old or {}).get("config", {}).get(k))
            what = "seed/stub" if old and not diff else ", ".join(diff) if old else "no run.json"
            raise ValueError(f"{workdir} holds rounds of another run ({what} differ); pass --set fresh=true to "
                             "start over or choose another --out")
    workdir.mkdir(parents=True, exist_ok=True)
    key_file.write_text(json.dumps(key, indent=1))
    return workdir


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
