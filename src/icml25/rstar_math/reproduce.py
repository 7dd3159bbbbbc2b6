"""Quick/full reproduction of rStar-Math on the synthetic StepArith domain (spec §6): the configuration, the
registered reproduction and stub, and the order of the stages; the stages themselves and the claims are in
:mod:`icml25.rstar_math.experiment.stages`.

(a) search, Q-value annotation and data extraction with the noisy rule-based bootstrap solver; (b) the neural
smoke run: a TinyGPT base model pretrained on problem text + sentence->code pairs, SFT on the extracted
trajectories, PPM on the extracted pairs; then the later self-evolution rounds, the evaluation and the ablations.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from icml25.core import Report, Scale, reproduction
from icml25.core.registry import reproduction_stub

_POSITIVE_INTS = ("n_problems", "n_candidates", "rollouts", "max_depth", "errors_threshold", "single_samples",
                  "n_pretrain_problems", "pretrain_steps", "sft_steps", "ppm_steps", "batch_size", "ppm_batch_pairs",
                  "n_embd", "n_layer", "n_head", "block_size", "n_heldout", "torch_threads", "rounds",
                  "later_candidates", "later_rollouts", "n_test", "eval_seeds", "ablation_seeds",
                  "rejection_samples", "n_boot", "search_workers", "step_tokens", "lora_r")
#: the policies the self-evolution can fine-tune (``policy_backend``)
POLICY_BACKENDS = ("tinygpt", "lora")


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
    torch_threads: int = 1  # torch/BLAS threads of the run, applied by the runner (search workers use 1 each)
    search_workers: int = 1  # processes sharing each self-evolution round's search (1 = in-process)
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
    bench: tuple = ()  # real-LLM evaluation of the paper's models on shipped benchmark files ("math500", "aime2024")
    policy: str = ""  # its policy SLM as an icml25.llm spec (hf:<dir>, openai:<base_url>#<model>, pretrained:<name>)
    ppm: str = ""  # its PPM: a transformers model folder holding value_head.bin (the official layout)
    bench_n: int = 64  # its MCTS trajectories per problem (paper Table 5: 64)
    bench_limit: int = 0  # its first problems per benchmark (0 = all)
    policy_backend: str = "tinygpt"  # the self-evolved policy: "tinygpt" (from scratch) or "lora" (pretrained)
    policy_model: str = "pretrained:smollm2-135m-instruct"  # lora: the pretrained base (pretrained:<name>, hf:<dir>)
    lora_r: int = 16  # lora: adapter rank (alpha = 2 r)
    step_tokens: int = 32  # token limit of one generated step (TinyGPT word tokens; SmolLM2 BPE steps: 25-35)
    beam_eval: bool = True  # the last round is also evaluated with step-level beam search at the middle N

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
        for name in ("fresh", "accumulate_sft", "pretrain_in_context", "ablations", "beam_eval"):
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
        from .domain.benchmarks_data import BENCHMARK_FILES

        if not isinstance(self.bench, (tuple, list)) or any(b not in BENCHMARK_FILES for b in self.bench):
            raise ValueError(f"bench must be a tuple of names among {sorted(BENCHMARK_FILES)}, got {self.bench!r}")
        for name in ("policy", "ppm"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str, got {type(getattr(self, name)).__name__}")
            if self.bench and not getattr(self, name).strip():
                raise ValueError(f"bench={self.bench!r} needs {name}: pass --set {name}=... (the paper's 7B "
                                 + ("policy, e.g. openai:http://localhost:8000/v1#<served name>)" if name == "policy"
                                    else "PPM folder: transformers backbone + value_head.bin)"))
        check_int(self.bench_n, "bench_n", low=1)
        check_int(self.bench_limit, "bench_limit", low=0)
        self._check_policy_backend()

    def _check_policy_backend(self) -> None:
        """``policy_backend`` is one of :data:`POLICY_BACKENDS`; ``lora`` needs a local transformers spec in
        ``policy_model``, one search process and no reward-model/SFT-data ablations (TinyGPT heads only)."""
        from icml25.core.validation import check_option

        check_option(self.policy_backend, "policy_backend", POLICY_BACKENDS)
        if not isinstance(self.policy_model, str):
            raise TypeError(f"policy_model must be a str, got {type(self.policy_model).__name__}")
        if self.policy_backend != "lora":
            return
        kind = self.policy_model.partition(":")[0].strip().lower()
        if kind not in ("pretrained", "hf") or not self.policy_model.partition(":")[2].strip():
            raise ValueError(f"policy_backend='lora' fine-tunes a local transformers model: policy_model must be "
                             f"'pretrained:<name>' or 'hf:<dir>', got {self.policy_model!r}")
        if self.search_workers != 1:
            raise ValueError(f"policy_backend='lora' searches in-process (a pretrained model is not copied into "
                             f"worker processes): set search_workers=1, got {self.search_workers}")
        if self.ablations:
            raise ValueError("policy_backend='lora' has no reward-model/SFT-data ablations (the PQM/ORM heads and "
                             "the ablation SFT are TinyGPT modules): set ablations=false")

    @classmethod
    def quick(cls) -> Config:
        """The defaults with smaller budgets where the quick claims (A1-A5, B1-B3) allow (issue 42: the quick run is
        part of the default test suite): base pretraining 150 steps, PPM 100 steps, B2 on 20 held-out problems,
        and the evaluation and ablations (full-scale claims only) on 4 test problems with 5-step ablation models and
        one rejection sample per pool problem."""
        return cls(pretrain_steps=150, ppm_steps=100, n_heldout=20, n_test=4, ablation_steps=5, rejection_samples=1)

    @classmethod
    def full(cls) -> Config:
        """The pretrained policy (issue 49): SmolLM2-135M-Instruct fine-tuned with LoRA (r=16), its PPM from the
        same trunk, self-evolved over three rounds (r1 bootstrap solver, r2 SLM-r1 terminal-guided, r3 SLM-r2
        PPM-r2-augmented) on a pool of 12 L1-L4 problems, evaluated on 10 unseen L1-L4 problems at N = 1, 2.

        Sized from the per-unit costs measured on this 2-core machine (one torch thread, other jobs running; README
        "The pretrained policy as the full run") to about 50 minutes: the dry run (``--dry-run``) prints the
        estimate. The TinyGPT fields keep the from-scratch model's full sizes, so ``--set policy_backend=tinygpt
        --set ablations=true`` runs that model on this pool. The larger setting (the previous full preset's 240
        problems, 4 rounds, n = 8 and R = 16, 120 test problems) is :meth:`paper`'s."""
        return cls(
            # the pretrained policy; one search process (the model is not copied into workers), one torch thread
            policy_backend="lora", policy_model="pretrained:smollm2-135m-instruct", lora_r=16, step_tokens=48,
            search_workers=1, torch_threads=1, ablations=False, beam_eval=False,
            # the pool and the rounds: r1 bootstrap n=5 R=8 (Table 2), r2-r3 n=3 R=3 (Table 2: n=8, R=16)
            n_problems=12, levels=(1, 2, 3, 4), n_candidates=5, rollouts=8, rounds=3, later_candidates=3,
            later_rollouts=3, extra_rollouts=0,
            # LoRA SFT 16 steps x 4 sequences, PPM 6 steps x 4 pairs per round (lr 2e-3, warm-up 1)
            sft_steps=16, batch_size=4, ppm_steps=6, ppm_batch_pairs=4, lr=2e-3, n_heldout=6,
            # evaluation: 10 unseen problems, N = 1, 2 (anytime), one seed, the multi-run vote 1 run x 1 rollout
            n_test=10, test_levels=(1, 2, 3, 4), eval_ns=(1, 2), eval_seeds=1, vote=(1, 1, 1),
            # the from-scratch TinyGPT's full sizes (used with --set policy_backend=tinygpt)
            n_pretrain_problems=1200, pretrain_steps=3000, n_embd=96, n_layer=3, block_size=320,
            rejection_samples=8, ablation_steps=0)

    @classmethod
    def paper(cls) -> Config:
        """The larger setting of the pretrained policy plus the paper's own models on MATH500 and AIME 2024.

        The StepArith pipeline at the previous full preset's sizes (Table 2's rounds: 240 problems of L1-L6, 4
        rounds, r2-r4 n=8 R=16, 32 extra rollouts on the unsolved problems of r4; 120 test problems, N = 4, 8; beam
        search and a 4 x 2 multi-run vote), with the LoRA SmolLM2 policy of :meth:`full`: about 15 h of search per
        round on one CPU core (README), so a GPU machine's run. Training the 7B policy and PPM (4 rounds on 747k
        problems, Sec. 4.1) is not implemented: the paper's numbers come from evaluating its models (Table 5)."""
        from dataclasses import replace

        return replace(cls.full(),
                       n_problems=240, levels=(1, 2, 3, 4, 5, 6), rounds=4, later_candidates=8, later_rollouts=16,
                       extra_rollouts=32, sft_steps=400, ppm_steps=500, ppm_batch_pairs=16, n_heldout=100,
                       n_test=120, test_levels=(1, 2, 3, 4, 5, 6), eval_ns=(4, 8), vote=(4, 2, 2), beam_eval=True,
                       bench=("math500", "aime2024"),  # Table 5: MATH (the MATH500 split) and AIME 2024
                       policy=PAPER_POLICY,  # the SLM-r4 policy (Qwen2.5-Math-7B based), served by vLLM
                       ppm=PAPER_PPM,  # PPM-r4 (Qwen2.5-Math-7B backbone + value head), local weights on a GPU
                       bench_n=64)  # Table 5: rStar-Math64, 64 trajectories per problem

    def plan(self):  # noqa: ANN201 (icml25.core.plan.Plan; imported lazily)
        """The dry run: stages and the estimate from measured per-unit costs."""
        from ._plan import plan

        return plan(self)


#: the paper's models as the paper preset names them (the user serves or places them; nothing is downloaded)
PAPER_POLICY = "openai:http://localhost:8000/v1#rStar-Math-Qwen2.5-Math-7B-policy"
PAPER_PPM = "rStar-Math-Qwen2.5-Math-7B-PPM"


@reproduction(slug="rstar_math", title="rStar-Math: Small LLMs Can Master Math Reasoning with Self-Evolved Deep "
              "Thinking", arxiv="2501.04519", extras=("torch",), config=Config)
def reproduce(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The quick/full reproduction: search + extraction, the neural smoke run, later rounds and the evaluation."""
    return _run(scale, seed, out, config, baseline=False)


@reproduction_stub(slug="rstar_math")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The stub: the same reproduction with the paper's trained models replaced by the naive baseline, the
    pretrained base model never SFT'd as the policy and a PPM whose head is never trained."""
    return _run(scale, seed, out, config, baseline=True)


def _run(scale: Scale, seed: int, out: Path, config: Config, baseline: bool) -> Report:
    """The stages of :mod:`.experiment.stages` in order, timed, then the report built from their results."""
    from .experiment import stages as ex

    report = Report(slug="rstar_math", title="rStar-Math (Guan et al., ICML 2025)")
    t0 = time.perf_counter()
    # the paper's models first, so that a missing server or PPM folder stops the run before hours of StepArith
    bench = ex.run_benchmarks(config, seed) if config.bench and not baseline else None
    workdir = ex.prepare_workdir(Path(out) / "self_evolution", config, seed, baseline)
    eng = ex.run_engine(config, seed)
    t1 = time.perf_counter()
    neu = ex.run_neural(config, seed, eng, baseline=baseline, workdir=workdir)
    t2 = time.perf_counter()
    budget = config.time_budget_s - (t2 - t0) if config.time_budget_s > 0 else None
    evo = ex.run_rounds_and_eval(config, seed, eng, neu, workdir, budget)
    t3 = time.perf_counter()
    ex.add_claims(report, config, eng, neu, evo)
    ex.add_abstract_claims(report, Scale.parse(scale), config, bench)
    ex.add_tables_and_figures(report, config, eng, neu, evo,
                              {"search+extraction": t1 - t0, "neural": t2 - t1, "total": t3 - t0})
    return report
