"""The experiment's later rounds and evaluation: round 1 (engine + neural smoke run) is written into a
:class:`SelfEvolution` workdir, further rounds run through it, and the last round's policy and PPM are evaluated
with greedy / maj@N / BoN@N / MCTS+PPM@N on a held-out StepArith test set."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

from .bootstrap_solver import NoisyRuleSolver
from .evaluation import evaluate, sample_chains
from .executors import SafeArithExecutor
from .extraction import extract_pairs
from .mcts import MCTS, MCTSConfig
from .process_preference_model import pair_accuracy
from .self_evolution import RoundConfig, SelfEvolution
from .step_format import StepFormat
from .steparith import StepArithGenerator
from .tiny_policy import TinyStepPolicy, save_tiny_lm


def round_configs(cfg) -> list[RoundConfig]:
    """Rounds of the reproduction: r1 bootstrap terminal-guided, r2 SLM terminal-guided, r3+ PPM-augmented."""
    train = dict(sft_steps=cfg.sft_steps, ppm_steps=cfg.ppm_steps, batch_size=cfg.batch_size,
                 ppm_batch_pairs=cfg.ppm_batch_pairs, lr=cfg.lr, ppm_loss=cfg.ppm_loss)
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
    """Checkpoint round 1 in the SelfEvolution layout so that later rounds resume from it."""
    d = workdir / "round_1"
    d.mkdir(parents=True, exist_ok=True)
    (d / "trees.json").write_text(json.dumps([t.to_json() for t in eng["trees"]]))
    (d / "data.json").write_text(json.dumps({"sft": [r.to_dict() for r in eng["sft"]],
                                             "pairs": [p.to_dict() for p in eng["pairs"]]}))
    save_tiny_lm(neu["policy"], d / "policy")
    neu["ppm"].save(d / "ppm")
    (d / "metrics.json").write_text(json.dumps({
        "round": 1, "coverage": sum(t.solved() for t in eng["trees"]) / len(eng["trees"]), "n_sft": len(eng["sft"]),
        "n_pairs": len(eng["pairs"]), "n_step_pairs": eng["n_step_pairs"], "sft_loss_first": neu["sft_first"],
        "sft_loss_last": neu["sft_last"], "ppm_loss_last": neu["ppm_last"], "ppm_train_pair_acc":
        neu["ppm_pair_acc"], "search_seconds": 0.0, "config": asdict(rc)}))


def run_rounds_and_eval(cfg, seed: int, eng: dict, neu: dict, workdir: Path) -> dict:
    """Rounds 2..R through SelfEvolution, then evaluation of round 1 and round R on the test set."""
    fmt = StepFormat()
    ex = SafeArithExecutor(allow_float=False)
    rounds = round_configs(cfg)
    if workdir.exists():  # the reproduction always starts fresh (resuming is a library feature)
        shutil.rmtree(workdir)
    write_round1(workdir, eng, neu, rounds[0])
    evo = SelfEvolution(eng["pool"], NoisyRuleSolver(eng["pool"], seed=seed + 3), rounds, workdir, neu["base"], ex,
                        fmt=fmt, seed=seed, max_tokens=32)
    metrics = evo.run()
    test = StepArithGenerator(levels=cfg.test_levels, seed=seed + 3000).sample(cfg.n_test)
    hard = [i for i, p in enumerate(test) if p.level >= 5]
    policy_r1, _ = evo.models[1]
    policy_rk, ppm_rk = evo.models[len(rounds)]
    g1 = sample_chains(TinyStepPolicy(policy_r1), ex, test, 1, 0.0, cfg.max_depth, 1, 32, seed)
    res = evaluate(test, TinyStepPolicy(policy_rk), ex, ppm_rk, ns=tuple(cfg.eval_ns), seed=seed,
                   mcts_config=MCTSConfig(n_candidates=cfg.later_candidates, max_depth=cfg.max_depth,
                                          errors_threshold=1), max_depth=cfg.max_depth, fmt=fmt)
    gk = sample_chains(TinyStepPolicy(policy_rk), ex, test, 1, 0.0, cfg.max_depth, 1, 32, seed)
    # held-out pairs (spec §6 item 3): bootstrap-solver trees on unseen problems, scored with the last PPM
    held = StepArithGenerator(levels=cfg.levels, seed=seed + 4000).sample(max(8, cfg.n_problems // 2))
    held_trees = MCTS(NoisyRuleSolver(held, seed=seed + 5), ex, config=rounds[0].mcts, fmt=fmt).search(held)
    held_pairs = [p for p in extract_pairs(held_trees, fmt=fmt) if p.kind == "step"]
    held_acc = pair_accuracy(ppm_rk, held_pairs) if held_pairs else 0.0
    acc = lambda ch, idx=None: 100.0 * (sum(ch[i][0].correct for i in (idx if idx is not None else range(len(ch))))  # noqa: E731
                                         / max(1, len(idx if idx is not None else ch)))
    return {"metrics": metrics, "eval": res, "greedy_r1": acc(g1), "greedy_rk": acc(gk),
            "greedy_r1_hard": acc(g1, hard) if hard else 0.0, "greedy_rk_hard": acc(gk, hard) if hard else 0.0,
            "coverage": [m["coverage"] * 100 for m in metrics], "n_test": len(test),
            "heldout_pair_acc": held_acc, "n_heldout_pairs": len(held_pairs)}
