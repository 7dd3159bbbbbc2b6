"""Reproduction of TEDUO (spec §6): BabyAI-PickupLoc, unlabelled random-policy data, proxy-labelled abstract MDPs,
tabular Q per goal vs GCBC vs random, D_SFT, the from-scratch distillations (one-hot MLP, TINYLM) and, when a
model is configured, the real LLM (SmolLM2-135M-Instruct) as judge, abstraction writer and LoRA-tuned policy."""

from __future__ import annotations

import dataclasses
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core import Report, Scale, reproduction
from icml25.core.plan import Needs, Plan, UnitCost
from icml25.core.progress import progress
from icml25.core.registry import reproduction_stub
from icml25.core.threads import thread_limits
from icml25.core.validation import check_int, check_positive, check_probability

from .abstraction import identity_abstraction
from .annotators import RuleBackend, parse_action
from .babyai import HELD_OUT_PAIRS, all_goal_strings, goal_reached, parse_goal
from .dataset import OfflineDataset
from .evaluation import GoalTabularAgent, RandomPolicy, draw_episodes, evaluate
from .labeling import HindsightLabeler, ProxyRewardModel
from .sft import build_sft_dataset
from .tabular import TabularPolicy, TabularQ, gcbc_table

TITLE = ("The Synergy of LLMs & RL Unlocks Offline Learning of Generalizable Language-Conditioned Policies with "
         "Low-fidelity Data")
#: headline numbers as summarised in the spec (§3; the results tables were not readable: unverified)
PAPER_TRAIN_SUCCESS = 0.65  # TEDUO (fine-tuned Llama-3-8B), training goals
PAPER_VANILLA_SUCCESS = 0.17  # vanilla Llama-3-8B (no fine-tuning), training goals
PAPER_ILBOT_UNSEEN = 0.16  # BabyAI-IL-bot (the non-LLM language-conditioned baseline), unseen goals
PAPER_SRC = "Sec. 5 via the spec's full-text summary (§3; unverified against the PDF)"
PAPER_UNSEEN_SUCCESS = 0.45  # TEDUO, unseen goals in unseen environments
PAPER_ABSTRACTION_RATIO = 0.10  # "the abstraction shrinks the state space to roughly a tenth"


@dataclass(frozen=True)
class Config:
    n_episodes: int = 300  # random-policy episodes of unlabelled data
    episode_length: int = 57  # steps per episode (spec: ~17k transitions for 300 episodes)
    label_fraction: float = 0.1  # fraction of (transition, goal) pairs judged by the annotator
    label_noise: float = 0.05  # flip rate of the rule judge (mimics LLM judging errors)
    gamma: float = 0.9  # discount of the tabular Q-learning
    max_sweeps: int = 100  # value-iteration sweeps per goal
    gcbc_window: int = 10  # GCBC imitates actions at most this many steps before the goal
    eval_rooms: int = 100  # evaluation episodes per cell (new rooms, seeds >= 10,000)
    horizon: int = 40  # evaluation horizon
    n_seeds: int = 1  # data/eval seeds seed, seed+1, ... (steps 1-2 and the MLP)
    f2_episodes: int = 0  # >0: A1 vs raw-state Q-learning with this many episodes (claim F2)
    sft_starts: int = 1500  # dataset states used as D_SFT rollout starts
    goals_per_start: int = 6  # training goals per start state
    mlp_steps: int = 0  # one-hot MLP training steps (0 = not trained)
    tinylm_steps: int = 20  # TINYLM training steps (quick: a plumbing run)
    tinylm_eval_rooms: int = 10  # evaluation episodes per cell for TINYLM
    llm: str = ""  # icml25.llm spec of the real LLM (e.g. 'pretrained:smollm2-135m-instruct'); '' = none
    llm_judgements: int = 64  # (state, goal) pairs judged by the LLM to measure its labelling accuracy
    llm_abstraction_goals: int = 4  # goals for which the LLM writes abstraction code
    lora_steps: int = 0  # LoRA fine-tuning steps of the LLM policy (0 = step 3 with the LLM not run)
    lora_batch: int = 4  # examples per LoRA step
    lora_eval_rooms: int = 10  # evaluation episodes per cell for the LoRA policy
    llm_baseline: bool = False  # also evaluate the LLM out of the box (no fine-tuning) as a policy (claim P1)
    device: str = "cpu"  # torch device of the LLM ("cuda" in the paper preset)
    threads: int = 1  # torch threads

    def __post_init__(self) -> None:
        for name, low in (("n_episodes", 2), ("episode_length", 1), ("max_sweeps", 1), ("gcbc_window", 1),
                          ("eval_rooms", 1), ("horizon", 1), ("n_seeds", 1), ("f2_episodes", 0), ("sft_starts", 1),
                          ("goals_per_start", 1), ("mlp_steps", 0), ("tinylm_steps", 0), ("tinylm_eval_rooms", 1),
                          ("llm_judgements", 1), ("llm_abstraction_goals", 0), ("lora_steps", 0),
                          ("lora_batch", 1), ("lora_eval_rooms", 1), ("threads", 1)):
            check_int(getattr(self, name), name, low=low)
        check_probability(self.label_fraction, "label_fraction", open_low=True)
        check_probability(self.label_noise, "label_noise")
        check_probability(self.gamma, "gamma")
        check_positive(self.gamma, "gamma")
        if not isinstance(self.llm, str):
            raise TypeError(f"llm must be a model spec string ('' for none), got {type(self.llm).__name__}")
        if self.llm and (":" not in self.llm or self.llm.split(":", 1)[0].lower() not in ("hf", "pretrained")
                         or not self.llm.split(":", 1)[1].strip()):
            raise ValueError(f"llm must be '' or a local model spec hf:<folder> / pretrained:<name> (LoRA needs the "
                             f"weights), got {self.llm!r}")
        if not isinstance(self.llm_baseline, bool):
            raise TypeError(f"llm_baseline must be a bool, got {self.llm_baseline!r}")
        if not isinstance(self.device, str) or not (self.device == "cpu" or self.device.startswith(("cuda", "mps"))):
            raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:<i>' or 'mps', got {self.device!r}")

    @classmethod
    def quick(cls) -> Config:
        return cls()

    @classmethod
    def full(cls) -> Config:
        # The run measured in the README (52 min wall at load 10-17, ~13 min CPU). The spec's size is
        # --set n_seeds=5 n_episodes=5000 eval_rooms=300 tinylm_steps=3000 tinylm_eval_rooms=100 lora_steps=60 ...
        return cls(n_episodes=2000, eval_rooms=200, n_seeds=1, f2_episodes=600, sft_starts=3000, mlp_steps=3000,
                   tinylm_steps=800, tinylm_eval_rooms=50, llm="pretrained:smollm2-135m-instruct",
                   llm_judgements=32, llm_abstraction_goals=2, lora_steps=20, lora_batch=4, lora_eval_rooms=10)

    @classmethod
    def paper(cls) -> Config:
        """The paper's setting as far as this code path runs it (spec §2, §3, §6): Llama-3-8B-Instruct as judge,
        abstraction writer and LoRA-tuned policy on a GPU, ~800k random-policy transitions, the vanilla LLM as a
        baseline. The environment stays BabyAI-PickupLoc (the paper's BabyAI levels were not retrieved)."""
        return dataclasses.replace(
            cls.full(),
            n_episodes=14000,  # spec §2.1: ~800k non-unique transitions from a random policy (14,000 x 57 steps)
            eval_rooms=300, n_seeds=5,  # spec §6: 300 unseen rooms per cell, 5 seeds (the paper's seeds unknown)
            tinylm_steps=10000, tinylm_eval_rooms=300,  # spec §6 full: TINYLM <= 10,000 steps
            # Sec. 5: Llama-3-8B-Instruct (labeller, abstraction writer, fine-tuned policy), local weights
            llm="hf:meta-llama/Meta-Llama-3-8B-Instruct", device="cuda",
            llm_judgements=1000, llm_abstraction_goals=28,  # ours: 1,000 judged pairs, every training goal
            # LoRA rank / epochs were not retrieved (spec §2.4: r 16, alpha 32, lr 2e-4, 1-3 epochs): one epoch over
            # ~75k D_SFT examples at batch 32
            lora_steps=2400, lora_batch=32, lora_eval_rooms=300,
            llm_baseline=True)  # Sec. 5: vanilla Llama-3-8B on the same prompts (17 % on training goals)

    def plan(self) -> Plan:
        """The dry run: stages, needs and a time estimate from per-unit costs measured here."""
        return _plan(self)


#: seconds per unit measured on this project's 2-core machine (loaded, one thread), 2026-12-03: timing snippets of the
#: real code (steps 1-2 per episode of 57 steps incl. labelling and Q-learning, tabular evaluation per episode, TINYLM
#: per training step and evaluated episode, MLP per step) and the README's benchmark (SmolLM2: 0.48 judged pairs/s,
#: LoRA 27 training tokens/s)
_MEASURED = "2-core CPU under load, one thread, 2026-12-03 (timing snippets of the real code; README benchmark)"
_GPU_SPEEDUP = 5000.0  # assumed speed of one data-centre GPU over one loaded CPU thread


def _llm_scale(spec: str) -> tuple[float, str]:
    """Cost factor of the configured LLM relative to SmolLM2-135M on one CPU thread, and how it was obtained."""
    if spec.endswith("smollm2-135m-instruct"):
        return 1.0, ""
    found = re.findall(r"(\d+(?:\.\d+)?)[bB]\b", spec)
    billions = float(found[-1]) if found else 8.0
    ratio = billions * 1e9 / 135e6
    return ratio / _GPU_SPEEDUP, (f"SmolLM2's rate x {ratio:.3g} parameters ({billions:g}B) / GPU assumed "
                                  f"{_GPU_SPEEDUP:g}x one CPU thread")


def _plan(cfg: Config) -> Plan:
    costs = [UnitCost("steps 1-2: collect, abstract, label (rule judge + proxy), tabular Q and GCBC", "episode",
                      cfg.n_seeds * cfg.n_episodes + 2 * cfg.f2_episodes, 0.060, _MEASURED),
             UnitCost("evaluation of random / GCBC / GCRL", "episode",
                      3 * cfg.n_seeds * cfg.eval_rooms + 2 * cfg.eval_rooms * bool(cfg.f2_episodes)
                      + 6 * cfg.tinylm_eval_rooms, 0.0054, _MEASURED)]
    if cfg.tinylm_steps:
        costs += [UnitCost("TINYLM training", "step", cfg.tinylm_steps, 0.124, _MEASURED),
                  UnitCost("TINYLM evaluation", "episode", 2 * cfg.tinylm_eval_rooms, 0.024, _MEASURED)]
    if cfg.mlp_steps:
        costs.append(UnitCost("one-hot MLP training", "step", cfg.mlp_steps, 0.0026, _MEASURED))
    gpu = cfg.device != "cpu"
    if cfg.llm:
        f, note = _llm_scale(cfg.llm)
        costs += [UnitCost(f"{cfg.llm} as judge", "pair", cfg.llm_judgements, f / 0.48, _MEASURED, note),
                  UnitCost(f"{cfg.llm} writes abstraction code (~200 tokens)", "goal", cfg.llm_abstraction_goals,
                           200 * 0.05 * f, "the project's pretrained-model speed table (SmolLM2, ~20 tokens/s)", note)]
        if cfg.lora_steps:
            costs.append(UnitCost(f"{cfg.llm} LoRA fine-tuning (~150 tokens per example)", "training token",
                                  cfg.lora_steps * cfg.lora_batch * 150, f / 27, _MEASURED, note))
        n_eval = 2 * cfg.lora_eval_rooms * cfg.horizon * ((1 if cfg.lora_steps else 0) + cfg.llm_baseline)
        if n_eval:
            costs.append(UnitCost(f"{cfg.llm} as policy: one prompt per episode step (LoRA"
                                  f"{' and out of the box' if cfg.llm_baseline else ''})", "prompt", n_eval,
                                  f / 0.48, _MEASURED, note))
    stages = [f"steps 1-2 on BabyAI-PickupLoc: {cfg.n_episodes} random episodes x {cfg.episode_length} steps, "
              f"{cfg.n_seeds} seed(s); rule judge on {cfg.label_fraction:g} of the pairs + proxy; tabular Q vs GCBC vs "
              f"random on {cfg.eval_rooms} unseen rooms",
              f"D_SFT from {cfg.sft_starts} starts; TINYLM {cfg.tinylm_steps} steps, MLP {cfg.mlp_steps} steps"]
    if cfg.llm:
        stages.append(f"{cfg.llm}: judge ({cfg.llm_judgements} pairs), abstraction code ({cfg.llm_abstraction_goals} "
                      f"goals), LoRA policy ({cfg.lora_steps} steps x {cfg.lora_batch}) evaluated on "
                      f"{cfg.lora_eval_rooms} rooms per cell" + (", vanilla LLM baseline" if cfg.llm_baseline else ""))
    local = (cfg.llm,) if cfg.llm.startswith("hf:") else ()
    return Plan(slug="teduo", scale="config", stages=stages,
                models=("TINYLM and one-hot MLP (trained here)", *((cfg.llm,) if cfg.llm else ())),
                datasets=("BabyAI-PickupLoc random-policy trajectories (generated by minigrid)",), runs=1,
                needs=Needs(cpu_cores=2, gpus=1 if gpu else 0, gpu_memory_gb=80.0 if gpu else 0.0,
                            ram_gb=32.0 if gpu else 4.0, disk_gb=20.0 if local else 1.0, weights=local),
                costs=costs,
                notes=("Steps 1-2 use the rule judge's labels at every scale; the LLM's judging and abstraction code "
                       "are measured (claims L1, L2), not used to build the MDPs.",))


def _goal_split() -> tuple[list[str], list[str]]:
    train, held = [], []
    for g in all_goal_strings():
        p = parse_goal(g)
        (held if p.verb == "pick up" and (p.colour, p.type) in HELD_OUT_PAIRS else train).append(g)
    return train, held


def _steps12(cfg: Config, seed: int, stub: bool, n_episodes: int, identity: bool = False) -> dict[str, Any]:
    """Collect, abstract, label (rule judge + proxy), fit per-goal tables."""
    train, _ = _goal_split()
    t0 = time.perf_counter()
    ds = OfflineDataset.collect(n_episodes, cfg.episode_length, seed=seed * 100_003, goals=train,
                                show_progress=True)
    lab = HindsightLabeler(RuleBackend(cfg.label_noise, random_state=seed),
                           ProxyRewardModel(random_state=seed), cfg.label_fraction, random_state=seed)
    abstractions = {g: identity_abstraction(g) for g in train} if (stub or identity) else None
    lab.fit(ds, train, abstractions=abstractions)
    tr = ds.transitions()
    gcrl, gcbc, qs = {}, {}, {}
    for g, m in lab.mdps_.items():
        q = TabularQ(cfg.gamma, cfg.max_sweeps).fit(m.s, m.a, m.r, m.s_next, m.n_states)
        qs[g] = q
        c = gcbc_table(m.s, m.a, m.r, tr["episode"][m.transition_ids], tr["t"][m.transition_ids], m.n_states,
                       window=cfg.gcbc_window)
        gcbc[g] = (m.abstraction, TabularPolicy(c, m.index, mode="sample"))
        # the stub replaces offline RL by behaviour cloning (its naive baseline)
        gcrl[g] = gcbc[g] if stub else (m.abstraction, TabularPolicy(q.Q_, m.index))
    return {"ds": ds, "lab": lab, "qs": qs, "gcrl": GoalTabularAgent(gcrl), "gcbc": GoalTabularAgent(gcbc),
            "seconds": time.perf_counter() - t0}


def _label_quality(lab: HindsightLabeler) -> dict[str, float]:
    agree, pos = [], []
    for g, m in lab.mdps_.items():
        held = ~lab.labelled_mask_[g]
        agree.append(m.r[held] == m.truth[held])
        pos.append(m.r[held & m.truth])
    a, p = np.concatenate(agree), np.concatenate(pos)
    return {"accuracy": float(a.mean()), "recall": float(p.mean()) if len(p) else 0.0}


def _run(scale: Scale, seed: int, out: Path, cfg: Config, stub: bool) -> Report:
    check_int(seed, "seed", low=0)
    with thread_limits(cfg.threads):
        return _experiments(seed, cfg, stub, Scale.parse(scale))


def _experiments(seed: int, cfg: Config, stub: bool, scale: Scale = Scale.QUICK) -> Report:
    rep = Report(slug="teduo", title=TITLE, scale=scale)
    train, held = _goal_split()
    rows, per_seed = [], []
    run0: dict[str, Any] = {}
    for k in progress(range(cfg.n_seeds), "seeds (steps 1-2)"):
        s = seed + k
        run = _steps12(cfg, s, stub, cfg.n_episodes)
        ep_train = draw_episodes(train, cfg.eval_rooms, seed=10_000 + 1000 * s)
        res = {name: evaluate(pol, ep_train, cfg.horizon, seed=s, desc=f"eval {name}")["success"]
               for name, pol in (("random", RandomPolicy()), ("GCBC-tabular", run["gcbc"]),
                                 ("GCRL-tabular", run["gcrl"]))}
        lq = _label_quality(run["lab"])
        n_raw = len(run["ds"].transitions()["states"])
        n_abs = float(np.mean([m.n_states for m in run["lab"].mdps_.values()]))
        per_seed.append({"seed": s, **res, **lq, "ratio": n_abs / n_raw, "n_abs": n_abs, "n_raw": n_raw})
        rows.append({"seed": s, "transitions": run["ds"].n_transitions, "distinct raw states": n_raw,
                     "abstract states / goal": n_abs, "proxy accuracy": lq["accuracy"], "proxy recall": lq["recall"],
                     "annotator calls": run["lab"].n_annotator_calls_, **res, "steps 1-2 s": run["seconds"]})
        if k == 0:
            run0 = run
    rep.add_table("steps 1-2 per seed (training goals, unseen rooms)", rows)

    def mean(key: str) -> float:
        return float(np.mean([r[key] for r in per_seed]))

    # fails if: the proxy ignores the goal, is trained without the abstraction's features, or class imbalance makes
    # it predict 'not reached' everywhere (recall)
    rep.add_claim("Q1a", "proxy reward model (10 % of pairs judged, 5 % flipped) accuracy >= 0.97 on the other "
                  "pairs, against noiseless labels", None, mean("accuracy"), ">=", 0.97, kind="mechanism",
                  reference_source="spec §6 Q1")
    # fails if: as Q1a; a proxy that predicts the majority class has recall 0
    rep.add_claim("Q1b", "proxy reward model positive-class recall >= 0.9", None, mean("recall"), ">=", 0.9,
                  kind="mechanism")
    # fails if: the abstraction keeps raw features (the stub: identity abstraction), so abstract states ~ raw states
    rep.add_claim("Q2", "abstraction compresses: mean abstract states per goal / distinct raw states <= 0.10",
                  PAPER_ABSTRACTION_RATIO, mean("ratio"), "<=", PAPER_ABSTRACTION_RATIO, kind="paper",
                  source="Sec. 5 text via the spec summary ('roughly a tenth'; unverified)",
                  reference_value=0.05, reference_source="spec §6 Q2 threshold (asserted at full scale, F2b)")
    # fails if: the tabular policy does not use the labels (Q stays 0: random), bootstraps through goal states, or
    # is replaced by behaviour cloning on raw states (the stub)
    rep.add_claim("Q3a", "GCRL-tabular success >= random + 0.30 (training goals, unseen rooms)", None,
                  mean("GCRL-tabular") - mean("random"), ">=", 0.30, kind="paper",
                  source="", reference_value=0.887 - 0.227, reference_source="spec §6 calibration (0.887 vs 0.227)",
                  note=f"GCRL {mean('GCRL-tabular'):.3f}, random {mean('random'):.3f}")
    # fails if: offline RL is replaced by imitation of the non-expert data (the stub), or Q-learning ignores rewards
    rep.add_claim("Q3b", "GCRL-tabular success >= GCBC-tabular + 0.10 (paper's ablation: GCBC < GCRL)", None,
                  mean("GCRL-tabular") - mean("GCBC-tabular"), ">=", 0.10, kind="paper",
                  source="", reference_value=0.887 - 0.623, reference_source="spec §6 calibration (0.887 vs 0.623)",
                  note=f"GCRL {mean('GCRL-tabular'):.3f}, GCBC {mean('GCBC-tabular'):.3f}")

    # ---- D_SFT and plumbing ----
    ds, lab, qs = run0["ds"], run0["lab"], run0["qs"]
    sft = build_sft_dataset(ds, lab.mdps_, qs, cfg.sft_starts, cfg.goals_per_start, cfg.horizon, random_state=seed)
    truth_ok = np.mean([not goal_reached(e.state, e.goal) for e in sft])
    counts = np.bincount([e.action for e in sft], minlength=4)
    rep.add_table("D_SFT", [{"examples": len(sft), "goals": len({e.goal for e in sft}),
                             "left/right/forward/pickup": "/".join(map(str, counts)),
                             "mean steps to goal": float(np.mean([e.steps_to_goal for e in sft]))}])
    # fails if: D_SFT keeps failed rollouts or starts in goal states (the proxy's errors allow a few)
    rep.add_claim("Q4a", "D_SFT: >= 100 examples; fraction not starting in an already-reached goal >= 0.99", None,
                  float(truth_ok) if len(sft) >= 100 else 0.0, ">=", 0.99, kind="check",
                  note=f"{len(sft)} examples")
    malformed = ["", "jump", "  ", "left-ish?", "I think", "<|im_end|>", "Forward!", "pick up", "42"]
    parsed = [parse_action(t) for t in malformed]
    # fails if: the action parser maps garbage to an action instead of counting it invalid
    rep.add_claim("Q4b", "action parser: malformed outputs give None, valid ones their index", None,
                  float(parsed == [None, None, None, 0, None, None, 2, 3, None]), "is_true", True, kind="check")

    ep_train = draw_episodes(train, cfg.tinylm_eval_rooms, seed=20_000 + seed)
    ep_held = draw_episodes(held, cfg.tinylm_eval_rooms, seed=30_000 + seed)
    step3: list[dict[str, Any]] = []
    gcrl_train = evaluate(run0["gcrl"], ep_train, cfg.horizon, seed=seed)["success"]
    for name, pol in (("random", RandomPolicy()), ("GCRL-tabular (random on unseen goals)", run0["gcrl"]),
                      ("GCBC-tabular (random on unseen goals)", run0["gcbc"])):
        step3.append({"policy": name, "train goals": evaluate(pol, ep_train, cfg.horizon, seed=seed)["success"],
                      "held-out pick-up goals": evaluate(pol, ep_held, cfg.horizon, seed=seed)["success"]})
    if cfg.tinylm_steps:
        from .policies import TinyLMPolicy

        tiny = TinyLMPolicy(steps=cfg.tinylm_steps, random_state=seed).fit(sft, desc="TINYLM training")
        tr_ = evaluate(tiny, ep_train, cfg.horizon, seed=seed, desc="eval TINYLM")
        he_ = evaluate(tiny, ep_held, cfg.horizon, seed=seed, desc="eval TINYLM held-out")
        step3.append({"policy": f"TINYLM ({cfg.tinylm_steps} steps, loss {np.mean(tiny.losses_[-50:]):.3f})",
                      "train goals": tr_["success"], "held-out pick-up goals": he_["success"]})
        # fails if: the constrained read-out emits something outside the action set
        rep.add_claim("Q4c", "TINYLM invalid-action rate (constrained read-out) <= 0.02", None,
                      max(tr_["invalid_rate"], he_["invalid_rate"]), "<=", 0.02, kind="check")
        tiny_res = (tr_["success"], he_["success"])
    if cfg.mlp_steps:
        from .policies import MLPPolicy

        mlp = MLPPolicy(steps=cfg.mlp_steps, random_state=seed).fit(sft, desc="MLP training")
        mlp_res = (evaluate(mlp, ep_train, cfg.horizon, seed=seed)["success"],
                   evaluate(mlp, ep_held, cfg.horizon, seed=seed)["success"])
        step3.append({"policy": "one-hot MLP", "train goals": mlp_res[0], "held-out pick-up goals": mlp_res[1]})
    lora_res, vanilla = None, None
    if cfg.llm:
        lora_res, vanilla = _llm_parts(rep, cfg, seed, ds, sft, train, held)
        name = _short(cfg.llm)
        if vanilla is not None:
            step3.append({"policy": f"{name} out of the box (no fine-tuning)", "train goals": vanilla[0],
                          "held-out pick-up goals": vanilla[1]})
        if lora_res is not None:
            step3.append({"policy": f"LoRA {name} ({cfg.lora_steps} steps x {cfg.lora_batch})",
                          "train goals": lora_res[0], "held-out pick-up goals": lora_res[1]})
    rep.add_table(f"step 3 (seed {seed}; {cfg.tinylm_eval_rooms} episodes per cell, LoRA {cfg.lora_eval_rooms}; "
                  f"paper: TEDUO {PAPER_TRAIN_SUCCESS} train / {PAPER_UNSEEN_SUCCESS} unseen goals)", step3)

    # ---- full-scale claims ----
    rnd, gcbc_m, gcrl_m = mean("random"), mean("GCBC-tabular"), mean("GCRL-tabular")
    # fails if: offline RL does not beat imitation of non-expert data (e.g. Q-learning ignoring the labels)
    rep.add_claim("F1a", "GCRL-tabular >= GCBC-tabular + 0.15 (training goals, unseen rooms)", None,
                  gcrl_m - gcbc_m, ">=", 0.15, kind="paper", scale=Scale.FULL, reference_source="spec §6 F1")
    # fails if: as F1a
    rep.add_claim("F1b", "GCRL-tabular >= random + 0.45", None, gcrl_m - rnd, ">=", 0.45, kind="paper",
                  scale=Scale.FULL, reference_source="spec §6 F1")
    # fails if: the abstraction keeps near-raw states
    rep.add_claim("F2b", "mean abstract states per goal / distinct raw states < 0.05 (spec §6 Q2 threshold)", None,
                  mean("ratio"), "<", 0.05, kind="mechanism", scale=Scale.FULL)
    if cfg.f2_episodes:
        raw = _steps12(cfg, seed, False, cfg.f2_episodes, identity=True)
        a1 = _steps12(cfg, seed, False, cfg.f2_episodes)
        ep = draw_episodes(train, cfg.eval_rooms, seed=10_000 + 1000 * seed)
        s_raw = evaluate(raw["gcrl"], ep, cfg.horizon, seed=seed)["success"]
        s_a1 = evaluate(a1["gcrl"], ep, cfg.horizon, seed=seed)["success"]
        # fails if: the abstraction does not make the tabular problem generalise across rooms (raw states never recur)
        rep.add_claim("F2", f"abstraction -> data efficiency: with {cfg.f2_episodes} episodes, A1 Q-learning >= "
                      "raw-state Q-learning + 0.40", None, s_a1 - s_raw, ">=", 0.40, kind="paper", scale=Scale.FULL,
                      note=f"A1 {s_a1:.3f}, raw {s_raw:.3f}")
    if cfg.tinylm_steps:
        # fails if: distillation into the token model does not keep the skill
        rep.add_claim("F3a", "TINYLM on training goals >= random + 0.15", None, tiny_res[0] - step3[0]["train goals"],
                      ">=", 0.15, kind="paper", scale=Scale.FULL, reference_value=0.43 - 0.227,
                      reference_source="spec §6 calibration (3,000 steps)")
    if cfg.mlp_steps:
        # fails if: the one-hot MLP does not distil the per-goal policies
        rep.add_claim("F3b", "one-hot MLP >= 0.7 x the GCRL policy on training goals (ratio)", None,
                      mlp_res[0] / max(gcrl_train, 1e-9), ">=", 0.7, kind="mechanism", scale=Scale.FULL)
    f4 = dict(id="F4", statement="LoRA-tuned LLM policy minus the best from-scratch baseline (TINYLM, one-hot MLP): "
              "success on held-out pick-up goals in unseen rooms (> 0)",
              paper_value=f"{PAPER_UNSEEN_SUCCESS} vs {PAPER_ILBOT_UNSEEN} (TEDUO vs BabyAI-IL-bot on unseen goals: "
                          f"difference {PAPER_UNSEEN_SUCCESS - PAPER_ILBOT_UNSEEN:.2f})",
              comparison=">", threshold=0.0, kind="paper", scale=Scale.FULL, headline=True,
              source="abstract / " + PAPER_SRC)
    if lora_res is not None:
        base = max(tiny_res[1] if cfg.tinylm_steps else 0.0, mlp_res[1] if cfg.mlp_steps else 0.0)
        # fails if: the pretrained LM's language prior does not compose the unseen verb-object goals better than
        # the from-scratch baselines (the paper: TEDUO vs its non-LLM baseline BabyAI-IL-bot, a difference too)
        rep.add_claim(**f4, measured=lora_res[1] - base,
                      note=f"LoRA {lora_res[1]:.3f} vs best baseline {base:.3f} on {cfg.lora_eval_rooms} episodes")
    elif scale.rank < Scale.FULL.rank:
        rep.add_unmeasured_claim(**f4, needs="--scale full: the LLM policy (LoRA on SmolLM2-135M-Instruct) and the "
                                             "from-scratch baselines")
    _paper_claims(rep, cfg, lora_res, vanilla, scale)
    rep.add_figure("success", _figure(per_seed, step3))
    rep.notes.append("Annotator for steps 1-2: RuleBackend (oracle templates with 5 % flipped judgements, NOT an "
                     "LLM); the real LLM's labelling accuracy and abstraction code are measured separately when "
                     "`llm` is set. gamma = 0.9 (not stated in the paper).")
    return rep


def _short(spec: str) -> str:
    """Display name of a model spec: its last path component ('smollm2-135m-instruct', 'Meta-Llama-3-8B-Instruct')."""
    return re.split(r"[/#:]", spec.rstrip("/"))[-1]


def _load_llm(cfg: Config) -> Any:
    """The configured LLM on the configured device; a failure names what to pass."""
    from icml25.core.errors import UsageError
    from icml25.llm import load_model

    kw = {"device": cfg.device} if cfg.device != "cpu" else {}
    try:
        return load_model(cfg.llm, **kw)
    except (OSError, ValueError, ImportError, RuntimeError) as exc:
        raise UsageError(f"teduo: cannot load {cfg.llm!r} ({' '.join(str(exc).split())[:300]}); pass --set llm="
                         "hf:/path/to/a/local/transformers/chat/model (LoRA fine-tuning needs the weights) or "
                         "--set llm= to skip the LLM parts") from exc


def _paper_claims(rep: Report, cfg: Config, lora: tuple[float, float] | None,
                  vanilla: tuple[float, float] | None, scale: Scale) -> None:
    """The paper's headline numbers on its own LLM (Llama-3-8B-Instruct): measured when the run has the LoRA policy
    (and, for P1, the vanilla LLM), at paper scale; *not measured here* in quick and full runs."""
    needs = ("--scale paper: Llama-3-8B-Instruct weights (hf:) on a GPU, LoRA fine-tuning on the full D_SFT "
             "(2,400 steps x 32), the vanilla LLM as baseline")
    items = (
        # fails if: fine-tuning on D_SFT does not beat the same LLM prompted out of the box (paper: 0.65 vs 0.17)
        dict(id="P1", statement="TEDUO (LoRA-tuned LLM) minus the same LLM out of the box: success on training goals "
             "in unseen rooms", paper_value=f"{PAPER_TRAIN_SUCCESS} vs {PAPER_VANILLA_SUCCESS} (difference "
             f"{PAPER_TRAIN_SUCCESS - PAPER_VANILLA_SUCCESS:.2f})", comparison=">=",
             threshold=round(PAPER_TRAIN_SUCCESS - PAPER_VANILLA_SUCCESS - 0.10, 2),
             threshold_reason="the paper's difference 0.48 minus a tolerance of 0.10: our environment "
                              "(BabyAI-PickupLoc) is not the paper's",
             value=None if lora is None or vanilla is None else lora[0] - vanilla[0]),
        # fails if: the tuned LLM does not generalise to the held-out verb-object goals (paper: 0.45 on unseen goals)
        dict(id="P2", statement="TEDUO (LoRA-tuned LLM): success on held-out pick-up goals in unseen rooms",
             paper_value=PAPER_UNSEEN_SUCCESS, comparison=">=", threshold=round(PAPER_UNSEEN_SUCCESS - 0.10, 2),
             threshold_reason="the paper's 0.45 minus a tolerance of 0.10: its unseen goals and environments "
                              "differ from our held-out pick-up goals",
             value=None if lora is None else lora[1]),
    )
    for it in items:
        value = it.pop("value")
        kw = dict(**it, kind="paper", scale=Scale.PAPER, headline=True, source=PAPER_SRC)
        if scale.rank < Scale.PAPER.rank:
            rep.add_unmeasured_claim(**kw, needs=needs)
        elif value is None:
            rep.add_claim(**kw, measured=math.nan, note="not measured: the run has no LoRA policy (lora_steps) or "
                                                        "no vanilla baseline (llm_baseline)")
        else:
            rep.add_claim(**kw, measured=value, note=f"{cfg.llm}, {cfg.lora_eval_rooms} episodes per cell")


def _llm_parts(rep: Report, cfg: Config, seed: int, ds: OfflineDataset, sft: list[Any], train: list[str],
               held: list[str]) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """The real LLM as judge (accuracy vs the rule labels), abstraction writer, and LoRA policy."""
    from .abstraction import AbstractionError, compile_abstraction
    from .annotators import LLMAnnotator
    from .lm_policy import LoRAPolicy

    model = _load_llm(cfg)
    ann = LLMAnnotator(model, batch_size=8)
    tr = ds.transitions()
    rng = np.random.default_rng(seed)
    states = tr["states"]
    # balanced sample: half reached, half not (goal states are rare)
    pos, neg = [], []
    for i in rng.permutation(len(states)):
        st = states[int(i)]
        for g in rng.permutation(train)[:4]:
            p = parse_goal(str(g))
            if any((c, t) == (p.colour, p.type) for c, t, _, _ in st.objects) or st.carrying == (p.colour, p.type):
                (pos if goal_reached(st, p) else neg).append((st, p.text))
        if len(pos) >= cfg.llm_judgements // 2 and len(neg) >= cfg.llm_judgements // 2:
            break
    pairs = pos[:cfg.llm_judgements // 2] + neg[:cfg.llm_judgements // 2]
    t0 = time.perf_counter()
    y = ann.judge([s for s, _ in pairs], [g for _, g in pairs])
    truth = np.array([goal_reached(s, g) for s, g in pairs])
    chance = 0.5 + 1.645 * math.sqrt(0.25 / max(len(pairs), 1))
    # fails if: the LLM cannot tell reached from unreached goals (a judge answering "no" to everything scores 0.5 on
    # this balanced sample); the hindsight labels of step 1b would then carry nothing
    rep.add_claim("L1", f"LLM as hindsight judge ({_short(cfg.llm)}): accuracy on a balanced sample of {len(pairs)} "
                  "(state, goal) pairs above chance (one-sided 5 % level)", None, float((y == truth).mean()), ">",
                  round(chance, 4), kind="mechanism", scale=Scale.FULL,
                  note="threshold = 0.5 + 1.645 sqrt(0.25 / n) (ours; the spec's rule judge flips 5 %); recall "
                       f"{float(y[truth].mean()) if truth.any() else float('nan'):.2f}, specificity "
                       f"{float((~y[~truth]).mean()) if (~truth).any() else float('nan'):.2f}")
    rep.add_table(f"LLM judge ({cfg.llm}) vs the rule labels (balanced sample)",
                  [{"pairs": len(pairs), "accuracy": float((y == truth).mean()),
                    "recall (reached)": float(y[truth].mean()) if truth.any() else float("nan"),
                    "specificity": float((~y[~truth]).mean()) if (~truth).any() else float("nan"),
                    "seconds": time.perf_counter() - t0}])
    rows = []
    sample = [states[int(i)] for i in rng.choice(len(states), 200, replace=False)]
    for g in train[:: max(1, len(train) // max(1, cfg.llm_abstraction_goals))][:cfg.llm_abstraction_goals]:
        code = ann.abstraction_code(g)
        try:
            fn = compile_abstraction(code, g, sample)
            from .abstraction import compile_abstraction as _c  # the template, for agreement
            from .abstraction import template_abstraction_code

            ref = _c(template_abstraction_code(g), g, sample, origin="template")
            agree = float(np.mean([fn(s) == ref(s) for s in sample]))
            rows.append({"goal": g, "accepted": True, "agrees with template": agree, "reason": ""})
        except AbstractionError as e:
            rows.append({"goal": g, "accepted": False, "agrees with template": 0.0, "reason": str(e)[:80]})
    if rows:
        rep.add_table(f"LLM-written abstraction code ({cfg.llm}, one-shot prompt)", rows)
        acc = float(np.mean([r["accepted"] for r in rows]))
        # fails if: the LLM's abstraction code is rejected by the sandbox (imports, forbidden names, exceptions,
        # non-determinism) for most goals; step 1a then falls back to the identity (no abstraction)
        rep.add_claim("L2", f"LLM as abstraction writer ({_short(cfg.llm)}): share of {len(rows)} training goals whose "
                      "code the sandbox accepts >= 0.5", None, acc, ">=", 0.5, kind="mechanism", scale=Scale.FULL,
                      note="threshold ours (the paper reports no rate); accepted code agrees with the template on "
                           + (", ".join(f"{r['agrees with template']:.2f}" for r in rows if r["accepted"]) or "none")
                           + " of 200 sample states")
    ep_train = draw_episodes(train, cfg.lora_eval_rooms, seed=20_000 + seed)
    ep_held = draw_episodes(held, cfg.lora_eval_rooms, seed=30_000 + seed)
    vanilla = None
    if cfg.llm_baseline:  # the LLM out of the box: same prompt, same constrained read-out, no fine-tuning
        van = LoRAPolicy(model, steps=0, random_state=seed)
        vanilla = (evaluate(van, ep_train, cfg.horizon, seed=seed, batch=cfg.lora_eval_rooms,
                            desc="eval vanilla LLM train goals")["success"],
                   evaluate(van, ep_held, cfg.horizon, seed=seed, batch=cfg.lora_eval_rooms,
                            desc="eval vanilla LLM held-out")["success"])
    if not cfg.lora_steps:
        return None, vanilla
    pol = LoRAPolicy(model, steps=cfg.lora_steps, batch_size=cfg.lora_batch, random_state=seed)
    t0 = time.perf_counter()
    pol.fit(sft)
    secs = time.perf_counter() - t0
    a = evaluate(pol, ep_train, cfg.horizon, seed=seed, batch=cfg.lora_eval_rooms, desc="eval LoRA train goals")
    b = evaluate(pol, ep_held, cfg.horizon, seed=seed, batch=cfg.lora_eval_rooms, desc="eval LoRA held-out")
    rep.add_table(f"LoRA {_short(cfg.llm)} training", [{"steps": cfg.lora_steps, "batch": cfg.lora_batch,
                                            "tokens": pol.tokens_trained_, "seconds": secs,
                                            "tokens/s": pol.tokens_trained_ / secs,
                                            "final loss (mean of last 10)": float(np.mean(pol.losses_[-10:])),
                                            "unconstrained invalid rate": (a["invalid_rate"] + b["invalid_rate"]) / 2}])
    return (a["success"], b["success"]), vanilla


def _figure(per_seed: list[dict[str, Any]], step3: list[dict[str, Any]]) -> Any:
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    names = ["random", "GCBC-tabular", "GCRL-tabular"]
    vals = [float(np.mean([r[n] for r in per_seed])) for n in names]
    ax.bar(names, vals, color=["grey", "tab:orange", "tab:blue"])
    ax.axhline(PAPER_TRAIN_SUCCESS, color="k", ls="--", lw=1, label="paper: TEDUO (LLM policy), training goals")
    ax.set_ylabel("success rate (training goals, unseen rooms)")
    ax.set_ylim(0, 1)
    ax.legend()
    return fig


@reproduction(slug="teduo", title=TITLE, arxiv="2412.06877", extras=("torch", "rl", "plot"), config=Config,
              threads=1)
def reproduce(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """TEDUO steps 1-2 on BabyAI-PickupLoc (abstraction, proxy-labelled rewards, tabular Q vs GCBC vs random),
    D_SFT, and step 3 with the from-scratch baselines and (when configured) LoRA-tuned SmolLM2."""
    return _run(scale, seed, out, config, stub=False)


@reproduction_stub(slug="teduo")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The stub: no abstraction (identity) and behaviour cloning in place of offline RL, all else identical."""
    return _run(scale, seed, out, config, stub=True)
