"""Reproduction of TEDUO (spec §6): BabyAI-PickupLoc, unlabelled random-policy data, proxy-labelled abstract MDPs,
tabular Q per goal vs GCBC vs random, D_SFT, the from-scratch distillations (one-hot MLP, TINYLM) and, when a
model is configured, the real LLM (SmolLM2-135M-Instruct) as judge, abstraction writer and LoRA-tuned policy."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from icml25.core import Report, Scale, reproduction
from icml25.core.plan import Plan
from icml25.core.registry import reproduction_stub
from icml25.core.validation import check_device, check_int, check_positive, check_probability

from . import experiment

TITLE = ("The Synergy of LLMs & RL Unlocks Offline Learning of Generalizable Language-Conditioned Policies with "
         "Low-fidelity Data")


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
    llm_extra: str = ""  # further model specs (comma separated) measured as judge and abstraction writer (L1, L2)
    llm_judgements: int = 64  # balanced (state, goal) pairs judged by each LLM to measure its labelling accuracy
    llm_shots: int = 8  # few-shot demonstrations of the judge (labelled by the environment, disjoint from the pairs)
    llm_abstraction_goals: int = 4  # goals for which the LLM writes abstraction code by free generation (table)
    lora_steps: int = 0  # LoRA fine-tuning steps of the LLM policy (0 = step 3 with the LLM not run)
    lora_batch: int = 4  # examples per LoRA step
    lora_converge_window: int = 0  # > 0: stop LoRA once the mean loss of a window of this many steps fell < tol
    lora_converge_tol: float = 0.02  # relative improvement per window under which the LoRA loss counts as converged
    lora_eval_rooms: int = 10  # evaluation episodes per cell for the LoRA policy
    llm_baseline: bool = False  # also evaluate the LLM out of the box (no fine-tuning) as a policy (claim P1)
    device: str = "cpu"  # torch device of the LLM ("cuda" in the paper preset)
    threads: int = 1  # torch threads

    def __post_init__(self) -> None:
        for name, low in (("n_episodes", 2), ("episode_length", 1), ("max_sweeps", 1), ("gcbc_window", 1),
                          ("eval_rooms", 1), ("horizon", 1), ("n_seeds", 1), ("f2_episodes", 0), ("sft_starts", 1),
                          ("goals_per_start", 1), ("mlp_steps", 0), ("tinylm_steps", 0), ("tinylm_eval_rooms", 1),
                          ("llm_judgements", 2), ("llm_shots", 1), ("llm_abstraction_goals", 0), ("lora_steps", 0),
                          ("lora_converge_window", 0),
                          ("lora_batch", 1), ("lora_eval_rooms", 1), ("threads", 1)):
            check_int(getattr(self, name), name, low=low)
        check_probability(self.label_fraction, "label_fraction", open_low=True)
        check_probability(self.label_noise, "label_noise")
        check_probability(self.gamma, "gamma")
        check_probability(self.lora_converge_tol, "lora_converge_tol")
        check_positive(self.gamma, "gamma")
        if not isinstance(self.llm, str):
            raise TypeError(f"llm must be a model spec string ('' for none), got {type(self.llm).__name__}")
        if self.llm and (":" not in self.llm or self.llm.split(":", 1)[0].lower() not in ("hf", "pretrained")
                         or not self.llm.split(":", 1)[1].strip()):
            raise ValueError(f"llm must be '' or a local model spec hf:<folder> / pretrained:<name> (LoRA needs the "
                             f"weights), got {self.llm!r}")
        if not isinstance(self.llm_extra, str):
            raise TypeError(f"llm_extra must be a comma-separated string of model specs, got {self.llm_extra!r}")
        for m in filter(None, (x.strip() for x in self.llm_extra.split(","))):
            if ":" not in m or m.split(":", 1)[0].lower() not in ("hf", "pretrained") or not self.llm:
                raise ValueError(f"llm_extra must list local model specs hf:<folder> / pretrained:<name> and needs "
                                 f"llm set, got {self.llm_extra!r}")
        if not isinstance(self.llm_baseline, bool):
            raise TypeError(f"llm_baseline must be a bool, got {self.llm_baseline!r}")
        check_device(self.device)

    @classmethod
    def quick(cls) -> Config:
        return cls()

    @classmethod
    def full(cls) -> Config:
        # The run measured in the README (52 min wall at load 10-17, ~13 min CPU). The spec's size is
        # --set n_seeds=5 n_episodes=5000 eval_rooms=300 tinylm_steps=3000 tinylm_eval_rooms=100 lora_steps=60 ...
        return cls(n_episodes=2000, eval_rooms=200, n_seeds=1, f2_episodes=600, sft_starts=3000, mlp_steps=3000,
                   tinylm_steps=800, tinylm_eval_rooms=50, llm="pretrained:smollm2-135m-instruct",
                   # issue 48: both real models as few-shot judge (120 balanced pairs, 8 shots) and constrained
                   # abstraction writer (claims L1a/b, L2a/b); the LoRA policy stops early if its loss converges
                   # (windows of 10 steps, < 2 % improvement) but gets at most 40 steps x 4 on the CPU (training to
                   # convergence needs more than the hour allows: the paper preset)
                   llm_extra="pretrained:gemma-3-270m", llm_judgements=120, llm_shots=8, llm_abstraction_goals=2,
                   lora_steps=40, lora_batch=4, lora_converge_window=10, lora_eval_rooms=10)

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
            lora_converge_window=100,  # stop once the loss has converged (< 2 % per 100 steps), at most one epoch
            llm_extra="",  # the paper's one LLM (the full preset's Gemma-3-270M is a second small judge)
            llm_baseline=True)  # Sec. 5: vanilla Llama-3-8B on the same prompts (17 % on training goals)

    def plan(self) -> Plan:
        """The dry run: stages, needs and a time estimate from per-unit costs measured here (no data, no torch)."""
        from ._plan import teduo_plan

        return teduo_plan(self)


@reproduction(slug="teduo", title=TITLE, arxiv="2412.06877", extras=("torch", "rl", "plot"), config=Config,
              threads=1)
def reproduce(scale: Scale, seed: int, out: Path, config: Config, stub: bool = False) -> Report:
    """TEDUO steps 1-2 on BabyAI-PickupLoc (abstraction, proxy-labelled rewards, tabular Q vs GCBC vs random),
    D_SFT, and step 3 with the from-scratch baselines and (when configured) LoRA-tuned SmolLM2 (``stub``: no
    abstraction and behaviour cloning in place of offline RL)."""
    check_int(seed, "seed", low=0)
    scale = Scale.parse(scale)
    rep = Report(slug="teduo", title=TITLE, scale=scale)
    train, held = experiment.goal_split()
    per_seed, run0 = experiment.run_steps12(rep, config, seed, stub, train)
    experiment.add_quick_claims(rep, per_seed)
    sft = experiment.build_sft(rep, config, seed, run0)
    step3 = experiment.step3_baselines(rep, config, seed, run0, sft, train, held)
    experiment.add_llm_parts(rep, config, seed, run0["ds"], sft, train, held, step3)
    experiment.add_step3_table(rep, config, seed, step3)
    experiment.add_full_claims(rep, config, seed, per_seed, step3, train)
    experiment.add_headline_claims(rep, config, step3, scale)
    experiment.add_figure_and_notes(rep, per_seed)
    return rep


@reproduction_stub(slug="teduo")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The stub: no abstraction (identity) and behaviour cloning in place of offline RL, all else identical."""
    return reproduce(scale, seed, out, config, stub=True)
