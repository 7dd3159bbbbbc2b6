"""Steps 1-3 of the TEDUO reproduction (spec §6) and their claims: steps 1-2 per seed (:func:`run_steps12`,
:func:`add_quick_claims`), D_SFT (:func:`build_sft`), step 3 with the from-scratch baselines (:func:`step3_baselines`)
and the real LLM (:func:`add_llm_parts`, which calls :mod:`.llm`), the full- and paper-scale claims, the figure and
the notes. torch is imported only by the stages that train a policy."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from icml25.core import Report, Scale
from icml25.core.progress import progress

from ..abstraction import identity_abstraction
from ..annotators import RuleBackend, parse_action
from ..babyai import HELD_OUT_PAIRS, all_goal_strings, goal_reached, parse_goal
from ..data import OfflineDataset
from ..evaluation import GoalTabularAgent, RandomPolicy, draw_episodes, evaluate
from ..labeling import HindsightLabeler, ProxyRewardModel
from ..sft import build_sft_dataset
from ..tabular import TabularPolicy, TabularQ, gcbc_table
from .llm import llm_parts, short_name

if TYPE_CHECKING:
    from ..reproduce import Config

__all__ = ["Step3", "goal_split", "steps12", "label_quality", "run_steps12", "add_quick_claims", "build_sft",
           "step3_baselines", "add_llm_parts", "add_step3_table", "add_full_claims", "add_headline_claims",
           "add_paper_claims", "add_figure_and_notes"]

#: headline numbers as summarised in the spec (§3; the results tables were not readable: unverified)
PAPER_TRAIN_SUCCESS = 0.65  # TEDUO (fine-tuned Llama-3-8B), training goals
PAPER_VANILLA_SUCCESS = 0.17  # vanilla Llama-3-8B (no fine-tuning), training goals
PAPER_ILBOT_UNSEEN = 0.16  # BabyAI-IL-bot (the non-LLM language-conditioned baseline), unseen goals
PAPER_SRC = "Sec. 5 via the spec's full-text summary (§3; unverified against the PDF)"
PAPER_UNSEEN_SUCCESS = 0.45  # TEDUO, unseen goals in unseen environments
PAPER_ABSTRACTION_RATIO = 0.10  # "the abstraction shrinks the state space to roughly a tenth"


@dataclass
class Step3:
    """Step-3 results of seed ``seed``: the table rows and the (training goals, held-out goals) success rates."""

    rows: list[dict[str, Any]] = field(default_factory=list)  # one row per policy
    gcrl_train: float = 0.0  # GCRL-tabular on the step-3 training-goal episodes
    tiny: tuple[float, float] | None = None  # TINYLM (when tinylm_steps)
    mlp: tuple[float, float] | None = None  # one-hot MLP (when mlp_steps)
    lora: tuple[float, float] | None = None  # LoRA-tuned LLM (when llm and lora_steps)
    vanilla: tuple[float, float] | None = None  # the LLM out of the box (when llm and llm_baseline)


def goal_split() -> tuple[list[str], list[str]]:
    """The training goals and the held-out pick-up goals (``HELD_OUT_PAIRS``)."""
    train, held = [], []
    for g in all_goal_strings():
        p = parse_goal(g)
        (held if p.verb == "pick up" and (p.colour, p.type) in HELD_OUT_PAIRS else train).append(g)
    return train, held


def steps12(cfg: Config, seed: int, stub: bool, n_episodes: int, identity: bool = False) -> dict[str, Any]:
    """Collect, abstract, label (rule judge + proxy), fit per-goal tables."""
    train, _ = goal_split()
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


def label_quality(lab: HindsightLabeler) -> dict[str, float]:
    """Accuracy and positive-class recall of the proxy labels on the pairs the annotator did not judge."""
    agree, pos = [], []
    for g, m in lab.mdps_.items():
        held = ~lab.labelled_mask_[g]
        agree.append(m.r[held] == m.truth[held])
        pos.append(m.r[held & m.truth])
    a, p = np.concatenate(agree), np.concatenate(pos)
    return {"accuracy": float(a.mean()), "recall": float(p.mean()) if len(p) else 0.0}


def run_steps12(rep: Report, cfg: Config, seed: int, stub: bool,
                train: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Steps 1-2 on seeds ``seed, seed+1, ...``: random / GCBC / GCRL success on unseen rooms, label quality and the
    abstraction's compression; adds the per-seed table. Returns the per-seed numbers and the first seed's run."""
    rows, per_seed = [], []
    run0: dict[str, Any] = {}
    for k in progress(range(cfg.n_seeds), "seeds (steps 1-2)"):
        s = seed + k
        run = steps12(cfg, s, stub, cfg.n_episodes)
        ep_train = draw_episodes(train, cfg.eval_rooms, seed=10_000 + 1000 * s)
        res = {name: evaluate(pol, ep_train, cfg.horizon, seed=s, desc=f"eval {name}")["success"]
               for name, pol in (("random", RandomPolicy()), ("GCBC-tabular", run["gcbc"]),
                                 ("GCRL-tabular", run["gcrl"]))}
        lq = label_quality(run["lab"])
        n_raw = len(run["ds"].transitions()["states"])
        n_abs = float(np.mean([m.n_states for m in run["lab"].mdps_.values()]))
        per_seed.append({"seed": s, **res, **lq, "ratio": n_abs / n_raw, "n_abs": n_abs, "n_raw": n_raw})
        rows.append({"seed": s, "transitions": run["ds"].n_transitions, "distinct raw states": n_raw,
                     "abstract states / goal": n_abs, "proxy accuracy": lq["accuracy"], "proxy recall": lq["recall"],
                     "annotator calls": run["lab"].n_annotator_calls_, **res, "steps 1-2 s": run["seconds"]})
        if k == 0:
            run0 = run
    rep.add_table("steps 1-2 per seed (training goals, unseen rooms)", rows)
    return per_seed, run0


def _mean(per_seed: list[dict[str, Any]], key: str) -> float:
    return float(np.mean([r[key] for r in per_seed]))


def add_quick_claims(rep: Report, per_seed: list[dict[str, Any]]) -> None:
    """Q1 (proxy labels), Q2 (abstraction) and Q3 (GCRL vs random and GCBC), averaged over the seeds."""
    def mean(key: str) -> float:
        return _mean(per_seed, key)

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


def build_sft(rep: Report, cfg: Config, seed: int, run0: dict[str, Any]) -> list[Any]:
    """D_SFT from the first seed's data and Q tables (table, Q4a) and the action-parser check (Q4b)."""
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
    return sft


def step3_baselines(rep: Report, cfg: Config, seed: int, run0: dict[str, Any], sft: list[Any], train: list[str],
                    held: list[str]) -> Step3:
    """Step 3 without an LLM: random, the tabular policies, TINYLM (claim Q4c) and the one-hot MLP, on training
    and held-out pick-up goals in unseen rooms."""
    ep_train = draw_episodes(train, cfg.tinylm_eval_rooms, seed=20_000 + seed)
    ep_held = draw_episodes(held, cfg.tinylm_eval_rooms, seed=30_000 + seed)
    res = Step3(gcrl_train=evaluate(run0["gcrl"], ep_train, cfg.horizon, seed=seed)["success"])
    for name, pol in (("random", RandomPolicy()), ("GCRL-tabular (random on unseen goals)", run0["gcrl"]),
                      ("GCBC-tabular (random on unseen goals)", run0["gcbc"])):
        res.rows.append({"policy": name, "train goals": evaluate(pol, ep_train, cfg.horizon, seed=seed)["success"],
                         "held-out pick-up goals": evaluate(pol, ep_held, cfg.horizon, seed=seed)["success"]})
    if cfg.tinylm_steps:
        from ..policies import TinyLMPolicy

        tiny = TinyLMPolicy(steps=cfg.tinylm_steps, random_state=seed).fit(sft, desc="TINYLM training")
        tr_ = evaluate(tiny, ep_train, cfg.horizon, seed=seed, desc="eval TINYLM")
        he_ = evaluate(tiny, ep_held, cfg.horizon, seed=seed, desc="eval TINYLM held-out")
        res.rows.append({"policy": f"TINYLM ({cfg.tinylm_steps} steps, loss {np.mean(tiny.losses_[-50:]):.3f})",
                         "train goals": tr_["success"], "held-out pick-up goals": he_["success"]})
        # fails if: the constrained read-out emits something outside the action set
        rep.add_claim("Q4c", "TINYLM invalid-action rate (constrained read-out) <= 0.02", None,
                      max(tr_["invalid_rate"], he_["invalid_rate"]), "<=", 0.02, kind="check")
        res.tiny = (tr_["success"], he_["success"])
    if cfg.mlp_steps:
        from ..policies import MLPPolicy

        mlp = MLPPolicy(steps=cfg.mlp_steps, random_state=seed).fit(sft, desc="MLP training")
        res.mlp = (evaluate(mlp, ep_train, cfg.horizon, seed=seed)["success"],
                   evaluate(mlp, ep_held, cfg.horizon, seed=seed)["success"])
        res.rows.append({"policy": "one-hot MLP", "train goals": res.mlp[0], "held-out pick-up goals": res.mlp[1]})
    return res


def add_llm_parts(rep: Report, cfg: Config, seed: int, ds: OfflineDataset, sft: list[Any], train: list[str],
                  held: list[str], res: Step3) -> None:
    """When ``cfg.llm`` is set: the real LLM as judge (L1), abstraction writer (L2) and policy (out of the box and
    LoRA-tuned), whose step-3 rows are added to ``res``."""
    if not cfg.llm:
        return
    res.lora, res.vanilla = llm_parts(rep, cfg, seed, ds, sft, train, held)
    name = short_name(cfg.llm)
    if res.vanilla is not None:
        res.rows.append({"policy": f"{name} out of the box (no fine-tuning)", "train goals": res.vanilla[0],
                         "held-out pick-up goals": res.vanilla[1]})
    if res.lora is not None:
        cap = f"at most {cfg.lora_steps}" if cfg.lora_converge_window else f"{cfg.lora_steps}"
        res.rows.append({"policy": f"LoRA {name} ({cap} steps x {cfg.lora_batch}; steps run: LoRA training table)",
                         "train goals": res.lora[0], "held-out pick-up goals": res.lora[1]})


def add_step3_table(rep: Report, cfg: Config, seed: int, res: Step3) -> None:
    """The step-3 table: every policy on training and held-out pick-up goals."""
    rep.add_table(f"step 3 (seed {seed}; {cfg.tinylm_eval_rooms} episodes per cell, LoRA {cfg.lora_eval_rooms}; "
                  f"paper: TEDUO {PAPER_TRAIN_SUCCESS} train / {PAPER_UNSEEN_SUCCESS} unseen goals)", res.rows)


def add_full_claims(rep: Report, cfg: Config, seed: int, per_seed: list[dict[str, Any]], res: Step3,
                    train: list[str]) -> None:
    """The full-scale claims: F1 (GCRL vs GCBC and random), F2b/F2 (the abstraction), F3 (distillation)."""
    rnd, gcbc_m, gcrl_m = (_mean(per_seed, k) for k in ("random", "GCBC-tabular", "GCRL-tabular"))
    # fails if: offline RL does not beat imitation of non-expert data (e.g. Q-learning ignoring the labels)
    rep.add_claim("F1a", "GCRL-tabular >= GCBC-tabular + 0.15 (training goals, unseen rooms)", None,
                  gcrl_m - gcbc_m, ">=", 0.15, kind="paper", scale=Scale.FULL, reference_source="spec §6 F1")
    # fails if: as F1a
    rep.add_claim("F1b", "GCRL-tabular >= random + 0.45", None, gcrl_m - rnd, ">=", 0.45, kind="paper",
                  scale=Scale.FULL, reference_source="spec §6 F1")
    # fails if: the abstraction keeps near-raw states
    rep.add_claim("F2b", "mean abstract states per goal / distinct raw states < 0.05 (spec §6 Q2 threshold)", None,
                  _mean(per_seed, "ratio"), "<", 0.05, kind="mechanism", scale=Scale.FULL)
    if cfg.f2_episodes:
        raw = steps12(cfg, seed, False, cfg.f2_episodes, identity=True)
        a1 = steps12(cfg, seed, False, cfg.f2_episodes)
        ep = draw_episodes(train, cfg.eval_rooms, seed=10_000 + 1000 * seed)
        s_raw = evaluate(raw["gcrl"], ep, cfg.horizon, seed=seed)["success"]
        s_a1 = evaluate(a1["gcrl"], ep, cfg.horizon, seed=seed)["success"]
        # fails if: the abstraction does not make the tabular problem generalise across rooms (raw states never recur)
        rep.add_claim("F2", f"abstraction -> data efficiency: with {cfg.f2_episodes} episodes, A1 Q-learning >= "
                      "raw-state Q-learning + 0.40", None, s_a1 - s_raw, ">=", 0.40, kind="paper", scale=Scale.FULL,
                      note=f"A1 {s_a1:.3f}, raw {s_raw:.3f}")
    if cfg.tinylm_steps and res.tiny is not None:
        # fails if: distillation into the token model does not keep the skill
        rep.add_claim("F3a", "TINYLM on training goals >= random + 0.15", None, res.tiny[0] - res.rows[0]["train goals"],
                      ">=", 0.15, kind="paper", scale=Scale.FULL, reference_value=0.43 - 0.227,
                      reference_source="spec §6 calibration (3,000 steps)")
    if cfg.mlp_steps and res.mlp is not None:
        # fails if: the one-hot MLP does not distil the per-goal policies
        rep.add_claim("F3b", "one-hot MLP >= 0.7 x the GCRL policy on training goals (ratio)", None,
                      res.mlp[0] / max(res.gcrl_train, 1e-9), ">=", 0.7, kind="mechanism", scale=Scale.FULL)


def add_headline_claims(rep: Report, cfg: Config, res: Step3, scale: Scale) -> None:
    """F4 (the LoRA-tuned LLM vs the from-scratch baselines on held-out goals), then P1 and P2 (the paper's own
    numbers on its LLM)."""
    f4 = dict(id="F4", statement="LoRA-tuned LLM policy minus the best from-scratch baseline (TINYLM, one-hot MLP): "
              "success on held-out pick-up goals in unseen rooms (> 0)",
              paper_value=f"{PAPER_UNSEEN_SUCCESS} vs {PAPER_ILBOT_UNSEEN} (TEDUO vs BabyAI-IL-bot on unseen goals: "
                          f"difference {PAPER_UNSEEN_SUCCESS - PAPER_ILBOT_UNSEEN:.2f})",
              comparison=">", threshold=0.0, kind="paper", scale=Scale.FULL, headline=True,
              source="abstract / " + PAPER_SRC)
    if res.lora is not None:
        base = max(res.tiny[1] if cfg.tinylm_steps and res.tiny else 0.0,
                   res.mlp[1] if cfg.mlp_steps and res.mlp else 0.0)
        # fails if: the pretrained LM's language prior does not compose the unseen verb-object goals better than
        # the from-scratch baselines (the paper: TEDUO vs its non-LLM baseline BabyAI-IL-bot, a difference too)
        rep.add_claim(**f4, measured=res.lora[1] - base,
                      note=f"LoRA {res.lora[1]:.3f} vs best baseline {base:.3f} on {cfg.lora_eval_rooms} episodes")
    elif scale.rank < Scale.FULL.rank:
        rep.add_unmeasured_claim(**f4, needs="--scale full: the LLM policy (LoRA on SmolLM2-135M-Instruct) and the "
                                             "from-scratch baselines")
    add_paper_claims(rep, cfg, res.lora, res.vanilla, scale)


def add_paper_claims(rep: Report, cfg: Config, lora: tuple[float, float] | None,
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
            rep.add_claim(**kw, measured=float("nan"), note="not measured: the run has no LoRA policy (lora_steps) or "
                                                            "no vanilla baseline (llm_baseline)")
        else:
            rep.add_claim(**kw, measured=value, note=f"{cfg.llm}, {cfg.lora_eval_rooms} episodes per cell")


def add_figure_and_notes(rep: Report, per_seed: list[dict[str, Any]]) -> None:
    """The success-rate figure of steps 1-2 and the report's notes."""
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    names = ["random", "GCBC-tabular", "GCRL-tabular"]
    vals = [_mean(per_seed, n) for n in names]
    ax.bar(names, vals, color=["grey", "tab:orange", "tab:blue"])
    ax.axhline(PAPER_TRAIN_SUCCESS, color="k", ls="--", lw=1, label="paper: TEDUO (LLM policy), training goals")
    ax.set_ylabel("success rate (training goals, unseen rooms)")
    ax.set_ylim(0, 1)
    ax.legend()
    rep.add_figure("success", fig)
    rep.notes.append("Annotator for steps 1-2: RuleBackend (oracle templates with 5 % flipped judgements, NOT an "
                     "LLM); the real LLM's labelling accuracy and abstraction code are measured separately when "
                     "`llm` is set. gamma = 0.9 (not stated in the paper).")
