"""The experiment's later rounds and evaluation: round 1 (engine + neural smoke run) is written into a
:class:`SelfEvolution` workdir, further rounds run through it, and the last round's policy and PPM are evaluated
with greedy / maj@N / BoN@N / MCTS+PPM@N on a held-out StepArith test set."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

from .bootstrap_solver import NoisyRuleSolver
from .evaluation import evaluate
from .executors import SafeArithExecutor
from .extraction import extract_pairs
from .mcts import MCTS, MCTSConfig
from .process_preference_model import pair_accuracy
from .self_evolution import RoundConfig, SelfEvolution, TimeBudgetExceeded
from .step_format import StepFormat
from .steparith import StepArithGenerator
from .tiny_policy import TinyStepPolicy, save_tiny_lm
from .tree import Tree


def round_configs(cfg) -> list[RoundConfig]:
    """Rounds of the reproduction: r1 bootstrap terminal-guided, r2 SLM terminal-guided, r3+ PPM-augmented."""
    train = dict(sft_steps=cfg.sft_steps, ppm_steps=cfg.ppm_steps, batch_size=cfg.batch_size,
                 ppm_batch_pairs=cfg.ppm_batch_pairs, lr=cfg.lr, ppm_loss=cfg.ppm_loss, pair_min_edit=cfg.pair_min_edit,
                 pair_edit_unit=cfg.pair_edit_unit, accumulate_sft=cfg.accumulate_sft, rename_copies=cfg.rename_copies)
    out = [RoundConfig(MCTSConfig(n_candidates=cfg.n_candidates, rollouts=cfg.rollouts, max_depth=cfg.max_depth,
                                  errors_threshold=cfg.errors_threshold), **train)]
    for k in range(2, cfg.rounds + 1):
        mode = "terminal" if k == 2 else "ppm_init"
        out.append(RoundConfig(MCTSConfig(n_candidates=cfg.later_candidates, rollouts=cfg.later_rollouts,
                                          max_depth=cfg.max_depth, errors_threshold=1, mode=mode),
                               extra_rollouts_unsolved=cfg.extra_rollouts if k == cfg.rounds and k >= 3 else 0,
                               **train))
    return out


def write_round1(workdir: Path, eng: dict, neu: dict, rc: RoundConfig) -> None:
    """Checkpoint round 1 in the SelfEvolution layout so that later rounds resume from it (kept if a previous
    run wrote it)."""
    d = workdir / "round_1"
    if (d / "metrics.json").is_file():
        return
    d.mkdir(parents=True, exist_ok=True)
    (d / "trees.json").write_text(json.dumps([t.to_json() for t in eng["trees"]]))
    (d / "data.json").write_text(json.dumps({"sft": [r.to_dict() for r in eng["sft"]],
                                             "pairs": [p.to_dict() for p in eng["pairs"]]}))
    if not (d / "policy" / "model.pt").is_file():
        save_tiny_lm(neu["policy"], d / "policy")
        neu["ppm"].save(d / "ppm")
    (d / "metrics.json").write_text(json.dumps({
        "round": 1, "coverage": sum(t.solved() for t in eng["trees"]) / len(eng["trees"]), "n_sft": len(eng["sft"]),
        "n_sft_this_round": len(eng["sft"]), "n_sft_problems": len({r.query for r in eng["sft"]}),
        "n_pairs": len(eng["pairs"]), "n_step_pairs": eng["n_step_pairs"], "n_final_pairs": eng["n_final_pairs"],
        "sft_loss_first": neu["sft_first"],
        "sft_loss_last": neu["sft_last"], "ppm_loss_last": neu["ppm_last"], "ppm_train_pair_acc":
        neu["ppm_pair_acc"], "search_seconds": 0.0, "config": asdict(rc)}))


def run_rounds_and_eval(cfg, seed: int, eng: dict, neu: dict, workdir: Path, time_budget_s: float | None = None
                        ) -> dict:
    """Rounds 2..R through SelfEvolution, then the evaluation of every round on the held-out test set, held-out
    PPM pairs, and the two ablations of the last round (reward models, SFT data).

    The last round is evaluated with ``cfg.eval_seeds`` sampling seeds (all methods, N in ``cfg.eval_ns``);
    earlier rounds with one seed (greedy, maj/BoN/MCTS at the middle N). ``time_budget_s`` (seconds left of
    the reproduction's budget) raises :class:`TimeBudgetExceeded` before a stage that would start after it ran
    out; the rounds finished so far stay in ``workdir``.
    """
    from ._ablation_experiment import data_ablation, reward_model_ablation

    fmt = StepFormat()
    ex = SafeArithExecutor(allow_float=False)
    rounds = round_configs(cfg)
    write_round1(workdir, eng, neu, rounds[0])
    if time_budget_s is not None and time_budget_s <= 0:
        raise TimeBudgetExceeded(f"the time budget ran out during round 1 (base model, SFT, PPM); round 1 is in "
                                 f"{workdir}; raise time_budget_s or shrink the pool and step counts")
    evo = SelfEvolution(eng["pool"], NoisyRuleSolver(eng["pool"], seed=seed + 3), rounds, workdir, neu["base"], ex,
                        fmt=fmt, seed=seed, max_tokens=32, time_budget_s=time_budget_s)
    t0 = time.perf_counter()
    metrics = evo.run()
    t1 = time.perf_counter()
    if time_budget_s is not None and t1 - t0 > time_budget_s:
        raise TimeBudgetExceeded(f"the time budget ran out after the last round; every round is in {workdir} "
                                 "(SelfEvolution(...).run() on it resumes); raise time_budget_s to evaluate")
    R = len(rounds)
    test = StepArithGenerator(levels=cfg.test_levels, seed=seed + 3000).sample(cfg.n_test)
    seeds = [seed + 100 * i for i in range(cfg.eval_seeds)]
    n_mid = cfg.eval_ns[1] if len(cfg.eval_ns) > 1 else cfg.eval_ns[0]
    mcfg = MCTSConfig(n_candidates=cfg.later_candidates, max_depth=cfg.max_depth, errors_threshold=1)

    def run_eval(k: int, methods, ns, s: int) -> dict:
        lm, ppm = evo.models[k]
        return evaluate(test, TinyStepPolicy(lm), ex, ppm, methods=methods, ns=tuple(ns), seed=s, mcts_config=mcfg,
                        max_depth=cfg.max_depth, fmt=fmt)

    per_round = {k: run_eval(k, ("greedy", "maj", "bon", "mcts"), (n_mid,), seed) for k in range(1, R)}
    last = [run_eval(R, ("greedy", "maj", "bon", "mcts"), cfg.eval_ns, s) for s in seeds]
    per_round[R] = last[0]
    # the official multi-run test-time search (spec §2.11) on the last round, first seed
    lm_r, ppm_r = evo.models[R]
    vote = evaluate(test, TinyStepPolicy(lm_r), ex, ppm_r, methods=("mcts_vote",), ns=(1,), seed=seeds[0],
                    mcts_config=mcfg, max_depth=cfg.max_depth, fmt=fmt, vote=tuple(cfg.vote))["mcts_vote"]
    # held-out pairs (spec §6 item 3): bootstrap-solver trees on unseen problems, scored with the last PPM
    held = StepArithGenerator(levels=cfg.levels, seed=seed + 4000).sample(max(8, cfg.n_problems // 2))
    held_trees = MCTS(NoisyRuleSolver(held, seed=seed + 5), ex, config=rounds[0].mcts, fmt=fmt).search(held)
    held_pairs = [p for p in extract_pairs(held_trees, min_edit=cfg.pair_min_edit, edit_unit=cfg.pair_edit_unit,
                                           fmt=fmt) if p.kind == "step"]
    policy_rk, ppm_rk = evo.models[R]
    held_acc = pair_accuracy(ppm_rk, held_pairs) if held_pairs else float("nan")
    held_per_round = {k: pair_accuracy(evo.models[k][1], held_pairs) if held_pairs else float("nan")
                      for k in range(1, R + 1)}
    t2 = time.perf_counter()
    # ablations on the last round's trees and data (spec §6 items 5 and 6)
    trees_r = [Tree.from_json(x) for x in json.loads((workdir / f"round_{R}" / "trees.json").read_text())]
    n_verified = metrics[-1]["n_sft"]  # the last policy's SFT set (accumulated over rounds if asked)
    train_seed = seed if R == 1 else seed + R  # the SFT/PPM seed of the last round (run_neural / SelfEvolution)
    if cfg.ablations:
        rm = reward_model_ablation(cfg, seeds[:cfg.ablation_seeds], trees_r, policy_rk, test, ex, fmt, n_mid,
                                   train_seed)
        generator = evo.bootstrap if R == 1 else TinyStepPolicy(evo.models[R - 1][0])
        data = data_ablation(cfg, generator, eng["pool"], n_verified, neu["base"], test, ex, fmt, seed + 6000,
                             train_seed)
    else:  # skipped (ablations=false): D1-D4 and E1 are "not measured"
        rm = {"PQM": None, "ORM": None, "n_pqm_targets": 0, "n_orm_targets": 0, "losses": {}, "skipped": True}
        data = {"n_verified": n_verified, "n_rejection": 0, "greedy_correct": None, "sft_losses": [],
                "skipped": True}
    t3 = time.perf_counter()
    return {"timing": [("rounds 2..R (search + SFT + PPM)", t1 - t0), ("evaluation of every round", t2 - t1),
                       ("reward-model and SFT-data ablations", t3 - t2)],"metrics": metrics, "per_round": per_round, "last": last, "seeds": seeds, "n_mid": n_mid,
            "test_levels": [p.level for p in test], "coverage": [m["coverage"] * 100 for m in metrics],
            "heldout_pair_acc": held_acc, "n_heldout_pairs": len(held_pairs), "heldout_per_round": held_per_round,
            "vote": vote, "reward_models": rm, "data": data,
            "n_test": len(test)}
