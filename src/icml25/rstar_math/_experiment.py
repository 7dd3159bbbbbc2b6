"""The experiment behind ``reproduce`` (kept apart from the library modules): engine part and neural part."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from .bootstrap_solver import NoisyRuleSolver
from .evaluation import sample_chains
from .executors import SafeArithExecutor
from .extraction import extract_pairs, extract_sft
from .mcts import MCTS, MCTSConfig
from .step_format import StepFormat, extract_boxed
from .steparith import StepArithGenerator, step_is_consistent
from .tree import FAILURE_REASONS, check_invariants


def run_engine(cfg, seed: int) -> dict:
    """Part (a): noisy bootstrap solver, terminal-guided MCTS, annotation and extraction."""
    fmt = StepFormat()
    ex = SafeArithExecutor(allow_float=False)
    pool = StepArithGenerator(levels=cfg.levels, seed=seed).sample(cfg.n_problems)
    solver = NoisyRuleSolver(pool, seed=seed + 1)
    chains = sample_chains(solver, ex, pool, cfg.single_samples, 1.0, cfg.max_depth, cfg.errors_threshold,
                           seed=seed)
    mcfg = MCTSConfig(n_candidates=cfg.n_candidates, rollouts=cfg.rollouts, max_depth=cfg.max_depth,
                      errors_threshold=cfg.errors_threshold, mode="terminal", seed=seed)
    trees = MCTS(NoisyRuleSolver(pool, seed=seed + 2), ex, config=mcfg, fmt=fmt).search(pool)

    violations = sum(len(check_invariants(t)) for t in trees)
    nodes = [n for t in trees for n in t.nodes()]
    rows, single_l34, cov_l34 = [], [], []
    for lv in sorted(set(cfg.levels)):
        idx = [i for i, p in enumerate(pool) if p.level == lv]
        single = float(np.mean([c.correct for i in idx for c in chains[i]])) * 100
        cov = float(np.mean([trees[i].solved() for i in idx])) * 100
        rows.append({"level": lv, "problems": len(idx), "single_sample_acc_%": round(single, 1),
                     "mcts_coverage_%": round(cov, 1)})
        if lv in (3, 4):
            single_l34 += [c.correct for i in idx for c in chains[i]]
            cov_l34 += [trees[i].solved() for i in idx]
    rows.append({"level": "all", "problems": len(pool),
                 "single_sample_acc_%": round(float(np.mean([c.correct for r in chains for c in r])) * 100, 1),
                 "mcts_coverage_%": round(float(np.mean([t.solved() for t in trees])) * 100, 1)})

    sft = extract_sft(trees, top_k=2, fmt=fmt)
    by_q = {p.question: p for p in pool}
    ok = 0
    for r in sft:
        gold = by_q[r.query].answer
        res = ex.run(fmt.code_of(r.response))
        ok += res.error is None and res.stdout.strip() == gold and extract_boxed(r.response) == gold
    pairs = extract_pairs(trees, min_margin=0.5, min_edit=cfg.pair_min_edit, include_final=True, fmt=fmt,
                          edit_unit=cfg.pair_edit_unit)
    step_pairs = [p for p in pairs if p.kind == "step"]
    decisive = agree = ties = 0
    for pr in step_pairs:
        q = fmt.question_of(pr.prompt)
        partial = pr.prompt[len(fmt.prompt(q)):]
        cp, cn = step_is_consistent(by_q[q], partial, pr.pos), step_is_consistent(by_q[q], partial, pr.neg)
        if cp != cn:
            decisive += 1
            agree += cp
        elif cp:
            ties += 1
    # held-out pairs for B4: the same search on an unseen pool of the same size and levels (never trained on)
    held = StepArithGenerator(levels=cfg.levels, seed=seed + 7000).sample(cfg.n_problems)
    held_trees = MCTS(NoisyRuleSolver(held, seed=seed + 7001), ex, config=mcfg, fmt=fmt).search(held)
    held_pairs = extract_pairs(held_trees, min_margin=0.5, min_edit=cfg.pair_min_edit, include_final=True,
                               fmt=fmt, edit_unit=cfg.pair_edit_unit)
    l34_single = float(np.mean(single_l34)) * 100 if single_l34 else 0.0
    l34_cov = float(np.mean(cov_l34)) * 100 if cov_l34 else 0.0
    return {
        "pool": pool, "trees": trees, "sft": sft, "pairs": pairs, "level_rows": rows, "heldout_pairs": held_pairs,
        "invariant_violations": violations, "n_nodes": len(nodes),
        "n_failure": sum(n.reason in FAILURE_REASONS for n in nodes),
        "coverage_l34": l34_cov, "single_l34": l34_single, "coverage_gain_l34": l34_cov - l34_single,
        "n_sft": len(sft), "sft_reexec_rate": ok / len(sft) if sft else 0.0,
        "n_pairs": len(pairs), "n_step_pairs": len(step_pairs), "n_final_pairs": len(pairs) - len(step_pairs),
        "n_decisive": decisive, "pair_semantic_acc": agree / decisive if decisive else 0.0,
        "pair_tie_share": ties / len(step_pairs) if step_pairs else 0.0,
        "pair_row": {"step_pairs": len(step_pairs), "final_pairs": len(pairs) - len(step_pairs),
                     "decisive_step_pairs": decisive, "positive_is_consistent": agree,
                     "both_consistent": ties},
    }


def run_neural(cfg, seed: int, eng: dict, baseline: bool = False, workdir: Path | None = None) -> dict:
    """Part (b): base-model pretraining, SFT on the extracted trajectories, PPM on the extracted pairs.

    ``baseline=True`` is the stub's naive baseline: the pretrained base model, never SFT'd, is the policy, and
    the PPM keeps its untrained head (no SFT, no PPM training; their losses are empty). With ``workdir`` the
    base model (``workdir/base``) and round 1 (``workdir/round_1``) are loaded when a previous run finished them
    and saved otherwise (resume).
    """
    if workdir is not None and (workdir / "round_1" / "neural.json").is_file():
        return _load_neural(workdir)
    from .base_model import pretrain_base
    from .process_preference_model import PPMModel, pair_accuracy, train_ppm
    from .sft import train_sft
    from .tiny_policy import TinyStepPolicy, clone_lm, make_tiny_lm

    fmt = StepFormat()
    ex = SafeArithExecutor(allow_float=False)
    base_dir = workdir / "base" if workdir is not None else None
    if base_dir is not None and (base_dir / "pretrain.json").is_file():
        from .tiny_policy import load_tiny_lm

        base = load_tiny_lm(base_dir)
        pre, t_pre = json.loads((base_dir / "pretrain.json").read_text()).values()
    else:
        corpus = StepArithGenerator(seed=seed + 1000).sample(cfg.n_pretrain_problems)
        base = make_tiny_lm(cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.block_size, seed=seed)
        t = time.perf_counter()
        pre = pretrain_base(base, corpus, steps=cfg.pretrain_steps, batch_size=cfg.batch_size, lr=cfg.lr,
                            seed=seed, progress=True, in_context=cfg.pretrain_in_context)
        t_pre = time.perf_counter() - t
        if base_dir is not None:
            base.save(base_dir)
            (base_dir / "pretrain.json").write_text(json.dumps({"losses": pre, "seconds": t_pre}))
    heldout = StepArithGenerator(levels=(1,), seed=seed + 2000).sample(cfg.n_heldout)

    def format_rate(lm) -> float:
        """Share of held-out problems whose greedy chain is a complete step-format solution (code steps, the
        print step and a boxed answer step; right or wrong). The base model has never seen that format."""
        chains = sample_chains(TinyStepPolicy(lm), ex, heldout, 1, 0.0, cfg.max_depth, cfg.errors_threshold,
                               seed=seed, fmt=fmt)
        return float(np.mean([c[0].answer is not None for c in chains]))

    rate_base = format_rate(base)
    policy = clone_lm(base)  # every round fine-tunes from the base weights
    t = time.perf_counter()
    sft_losses = [] if baseline else train_sft(policy, sft_data(cfg, eng["sft"], fmt, seed), steps=cfg.sft_steps,
                                               batch_size=cfg.batch_size, lr=cfg.lr, seed=seed, progress=True)
    t_sft = time.perf_counter() - t
    rate = format_rate(policy)
    ppm = PPMModel.from_policy(policy)
    t = time.perf_counter()
    ppm_losses = [] if baseline else train_ppm(ppm, eng["pairs"], steps=cfg.ppm_steps, batch_size=cfg.ppm_batch_pairs,
                                               lr=cfg.lr, loss=cfg.ppm_loss, seed=seed)
    t_ppm = time.perf_counter() - t
    acc = pair_accuracy(ppm, eng["pairs"])
    held_acc = pair_accuracy(ppm, eng["heldout_pairs"]) if eng["heldout_pairs"] else float("nan")
    nan = float("nan")
    first, last = (float(np.mean(sft_losses[:10])), float(np.mean(sft_losses[-10:]))) if sft_losses else (nan, nan)
    pf, pl = (float(np.mean(ppm_losses[:10])), float(np.mean(ppm_losses[-10:]))) if ppm_losses else (nan, nan)
    neu = {"base": base, "policy": policy, "ppm": ppm, "pretrain_losses": pre, "sft_losses": sft_losses,
           "ppm_losses": ppm_losses, "sft_first": first, "sft_last": last, "sft_drop": 1 - last / first,
           "ppm_first": pf, "ppm_last": pl, "ppm_drop": 1 - pl / pf, "ppm_pair_acc": acc,
           "ppm_heldout_pair_acc": held_acc, "n_heldout_pairs": len(eng["heldout_pairs"]), "format_rate": rate,
           "format_rate_base": rate_base, "t_pretrain": t_pre, "t_sft": t_sft, "t_ppm": t_ppm}
    if workdir is not None:
        d = workdir / "round_1"
        d.mkdir(parents=True, exist_ok=True)
        policy.save(d / "policy")
        ppm.save(d / "ppm")
        (d / "neural.json").write_text(json.dumps({k: v for k, v in neu.items()
                                                   if k not in ("base", "policy", "ppm")}))
    return neu


def _load_neural(workdir: Path) -> dict:
    """Round 1's neural part as a previous run saved it (models and measurements)."""
    from .process_preference_model import PPMModel
    from .tiny_policy import load_tiny_lm

    neu = json.loads((workdir / "round_1" / "neural.json").read_text())
    neu["base"] = load_tiny_lm(workdir / "base")
    neu["policy"] = load_tiny_lm(workdir / "round_1" / "policy")
    neu["ppm"] = PPMModel.from_policy(neu["policy"]).load_weights(workdir / "round_1" / "ppm")
    neu["ppm"].eval()
    neu["resumed"] = True
    return neu


def sft_data(cfg, records, fmt: StepFormat, seed: int) -> list[tuple[str, str]]:
    """SFT examples of a round: the verified trajectories plus ``cfg.rename_copies`` entity-renamed copies."""
    from .augment import augment_renamed
    from .sft import sft_examples

    return augment_renamed(sft_examples(records, fmt), cfg.rename_copies, seed=seed)
