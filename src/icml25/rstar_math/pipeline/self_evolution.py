"""Self-evolution rounds of rStar-Math (spec §2.10, §2.13), checkpointed and resumable.

Round k searches the problem pool with the round's generator (the bootstrap policy in round 1, then the previous
round's SLM), terminal-guided or PPM-augmented (with the previous PPM), optionally spends extra rollouts on the
still-unsolved problems (the round-4 analogue), extracts top-2 SFT trajectories and preference pairs, fine-tunes
a new policy **from the base weights**, and trains the round's PPM from that policy. Every stage writes its
artifact under ``workdir/round_k/`` (trees, data, models, metrics) before the next starts; a rerun skips every
finished stage, so a killed run resumes where it stopped.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..domain.step_format import StepFormat
from ..execution.code_executors import CodeExecutor
from ..search.mcts import MCTS, MCTSConfig, as_problem_list
from ..search.policies import StepPolicy
from ..search.tree import Tree
from .extraction import PairRecord, SFTRecord, extract_pairs, extract_sft

__all__ = ["RoundConfig", "SelfEvolution", "TimeBudgetExceeded", "paper_rounds", "repo_rounds"]


class TimeBudgetExceeded(TimeoutError):
    """The time budget ran out; everything finished so far is in the workdir and a rerun resumes."""


@dataclass(frozen=True)
class RoundConfig:
    """One self-evolution round.

    Parameters
    ----------
    mcts : MCTSConfig
        Search settings (mode "terminal" or "ppm_init").
    extra_rollouts_unsolved : int
        Additional rollouts on problems still unsolved after the main search (round-4 analogue).
    sft_steps, ppm_steps : int
        Training steps of the round's policy (from the base weights) and PPM.
    batch_size, ppm_batch_pairs : int
        Sequences per SFT step / pairs per PPM step.
    lr : float
        Peak learning rate.
    ppm_loss : str
        "paper" or "official" weighting.
    use_bootstrap : bool
        Generate with the bootstrap policy instead of the previous round's SLM (round 1 always does).
    pair_min_edit, pair_edit_unit : int, str
        Edit filter of the preference pairs (:func:`~icml25.rstar_math.pipeline.extraction.filter_pairs`; official: 20
        characters).
    accumulate_sft : bool
        SFT data = this round's top-2 trajectories, plus, for every problem this round did not solve, those of
        the latest earlier round that solved it (default: this round's only, as in the paper).
    rename_copies : int
        Entity-renamed copies of every SFT trajectory (:func:`~icml25.rstar_math.domain.augment.augment_renamed`; a
        StepArith lever against memorisation, 0 = off).
    """

    mcts: MCTSConfig = field(default_factory=MCTSConfig)
    extra_rollouts_unsolved: int = 0
    sft_steps: int = 800
    ppm_steps: int = 500
    batch_size: int = 32
    ppm_batch_pairs: int = 16
    lr: float = 1e-3
    ppm_loss: str = "paper"
    use_bootstrap: bool = False
    pair_min_edit: int = 20
    pair_edit_unit: str = "char"
    accumulate_sft: bool = False
    rename_copies: int = 0

    def __post_init__(self) -> None:
        from icml25.core.validation import check_int, check_option, check_positive

        if not isinstance(self.mcts, MCTSConfig):
            raise TypeError(f"mcts must be an MCTSConfig, got {type(self.mcts).__name__}")
        check_int(self.extra_rollouts_unsolved, "extra_rollouts_unsolved", low=0)
        for name in ("sft_steps", "ppm_steps", "batch_size", "ppm_batch_pairs"):
            check_int(getattr(self, name), name, low=1)
        check_positive(self.lr, "lr")
        check_option(self.ppm_loss, "ppm_loss", ("paper", "official"))
        from .extraction import EDIT_UNITS

        check_int(self.pair_min_edit, "pair_min_edit", low=0)
        check_option(self.pair_edit_unit, "pair_edit_unit", EDIT_UNITS)
        check_int(self.rename_copies, "rename_copies", low=0)
        for name in ("use_bootstrap", "accumulate_sft"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")


def paper_rounds(extra_rollouts: int = 48, **train: Any) -> list[RoundConfig]:
    """The paper's recipe (Table 2), four rounds: r1 bootstrap n=5 R=8 terminal-guided; r2 SLM-r1 n=8 R=16
    terminal-guided; r3 SLM-r2 n=8 R=16 PPM-r2-augmented; r4 SLM-r3 n=8 R=16 PPM-r3-augmented plus
    ``extra_rollouts`` more on the problems still unsolved (the paper: 64, up to 128 rollouts in all)."""
    return [RoundConfig(MCTSConfig.paper_round1(), **train), RoundConfig(MCTSConfig.paper_round2(), **train),
            RoundConfig(MCTSConfig.paper_round3(), **train),
            RoundConfig(MCTSConfig.paper_round3(), extra_rollouts_unsolved=extra_rollouts, **train)]


def repo_rounds(**train: Any) -> list[RoundConfig]:
    """The official repo's configs: bootstrap ``sample_mcts.yaml`` (T=0.7, n=12, 48 iterations, errors 2) then
    ``sft_sample_mcts.yaml`` (T=1.0, n=12, 48 iterations, PPM on)."""
    boot = MCTSConfig(n_candidates=12, rollouts=48, temperature=0.7, errors_threshold=2, mode="terminal")
    return [RoundConfig(boot, **train), RoundConfig(replace(MCTSConfig.repo_sample(), mode="terminal"), **train),
            RoundConfig(MCTSConfig.repo_sample(), **train)]


class SelfEvolution:
    """Run self-evolution rounds with per-stage checkpoints.

    Parameters
    ----------
    problems : list
        Training pool (objects/dicts/tuples with question and gold answer).
    bootstrap_policy : StepPolicy
        Round-1 generator (e.g. :class:`NoisyRuleSolver`).
    rounds : list of RoundConfig
        One entry per round.
    workdir : path
        Checkpoint folder.
    base_lm : icml25.llm.TinyGPT or TrainableBackend
        The base model every round's policy is fine-tuned from (not modified): a TinyGPT (wrapped in
        :class:`~icml25.rstar_math.models.trainable.TinyGPTBackend`) or any object implementing
        :class:`~icml25.rstar_math.models.trainable.TrainableBackend`, e.g.
        :class:`~icml25.rstar_math.models.lora_backend.LoRABackend` over a pretrained transformers model. Every
        model-specific stage (fresh copy, SFT, step policy, PPM, save/load) goes through it (``self.backend``).
    executor : CodeExecutor
        Code executor of the search.
    fmt : StepFormat, optional
        Prompt/step format.
    seed : int
        Seed of search and training.
    time_budget_s : float, optional
        Raise :class:`TimeBudgetExceeded` before starting a stage once this many seconds have passed.
    max_tokens : int
        Token limit of one step generation in the search.
    search_workers : int
        1 (default): every round's search (and its extra rollouts on unsolved problems) runs in this process,
        exactly as before. >1: the pool is split into that many contiguous shards searched in parallel by
        :func:`~icml25.rstar_math.search.sharded_search.sharded_search` (main search and extra rollouts of a shard in
        the same worker; each worker runs torch with one thread). The round's generator, PPM and executor are
        pickled into every worker, so this needs picklable models: the TinyGPT backend works; a
        :class:`~icml25.rstar_math.models.lora_backend.LoRABackend` raises ``ValueError`` (a pretrained model is not
        copied into worker processes; use 1). With a per-problem-random policy (:class:`NoisyRuleSolver`) the
        trees equal the in-process ones; a batched neural policy draws per wave, so its trees depend on the
        shard count but are reproducible for a fixed seed and count. Worker searches do not advance the parent's
        copy of the generator (e.g. NoisyRuleSolver's per-problem call counters).
    search_backend : {"process", "ray"}
        Where the shards run when ``search_workers > 1`` (local processes, or a Ray cluster: extra ``dist``).
    """

    def __init__(self, problems, bootstrap_policy: StepPolicy, rounds: list[RoundConfig], workdir, base_lm,
                 executor: CodeExecutor, fmt: StepFormat | None = None, seed: int = 0,
                 time_budget_s: float | None = None, max_tokens: int = 32, search_workers: int = 1,
                 search_backend: str = "process") -> None:
        self.problems = as_problem_list(problems, need_answer=True)
        if not rounds:
            raise ValueError("rounds must hold at least one RoundConfig")
        from icml25.core.validation import check_int, check_positive

        if time_budget_s is not None:
            time_budget_s = check_positive(time_budget_s, "time_budget_s")
        max_tokens = check_int(max_tokens, "max_tokens", low=1)
        from icml25.core.validation import check_option

        self.search_workers = check_int(search_workers, "search_workers", low=1)
        self.search_backend = check_option(search_backend, "search_backend", ("process", "ray"))
        from ..models.trainable import as_backend

        self.backend = as_backend(base_lm)
        if self.search_workers > 1:
            from ..models.lora_backend import LoRABackend

            if isinstance(self.backend, LoRABackend):
                raise ValueError("search_workers > 1 needs models that can be pickled into worker processes; a "
                                 "LoRABackend (pretrained transformers model) is not copied into workers: use "
                                 "search_workers=1")
        self.bootstrap, self.rounds, self.base_lm, self.executor = bootstrap_policy, list(rounds), base_lm, executor
        self.workdir, self.fmt, self.seed = Path(workdir), fmt or StepFormat(), int(seed)
        self.time_budget_s, self.max_tokens = time_budget_s, int(max_tokens)
        self._t0 = 0.0
        self.models: dict[int, tuple[Any, Any]] = {}

    # -- helpers --------------------------------------------------------------------------------------------
    def _check_time(self, what: str) -> None:
        if self.time_budget_s is not None and time.perf_counter() - self._t0 > self.time_budget_s:
            raise TimeBudgetExceeded(f"time budget of {self.time_budget_s:g} s ran out before {what}; finished "
                                     f"stages are in {self.workdir} and a rerun resumes from them")

    def _load_models(self, k: int):
        d = self.workdir / f"round_{k}"
        lm = self.backend.load_policy(d / "policy")
        return lm, self.backend.load_ppm(d / "ppm", lm)

    # -- the loop -------------------------------------------------------------------------------------------
    def run(self) -> list[dict]:
        """Run (or resume) every round; returns the per-round metrics (also in ``round_k/metrics.json``)."""
        self._t0 = time.perf_counter()
        self.workdir.mkdir(parents=True, exist_ok=True)
        return [self._round(k) for k in range(1, len(self.rounds) + 1)]

    def _round(self, k: int) -> dict:
        from ..domain.augment import augment_renamed
        from ..models.sft import sft_examples

        rc, d = self.rounds[k - 1], self.workdir / f"round_{k}"
        d.mkdir(exist_ok=True)
        if (d / "metrics.json").is_file():
            self.models[k] = self._load_models(k)
            return json.loads((d / "metrics.json").read_text())
        prev = self.models.get(k - 1) if k > 1 else None
        if k > 1 and prev is None:
            prev = self.models[k - 1] = self._load_models(k - 1)
        generator = self.bootstrap if (k == 1 or rc.use_bootstrap) else self.backend.step_policy(prev[0])
        scorer = prev[1] if (prev is not None and rc.mcts.mode != "terminal") else None
        if rc.mcts.mode != "terminal" and scorer is None:
            raise ValueError(f"round {k} uses mode {rc.mcts.mode!r} but there is no previous PPM")
        cfg = replace(rc.mcts, seed=self.seed + k, max_tokens=self.max_tokens)
        t = time.perf_counter()
        trees_file = d / "trees.json"
        if trees_file.is_file():
            trees = [Tree.from_json(x) for x in json.loads(trees_file.read_text())]
        else:
            self._check_time(f"round {k} search")
            if self.search_workers == 1:
                search = MCTS(generator, self.executor, scorer=scorer, config=cfg, fmt=self.fmt)
                trees = search.search(self.problems)
                if rc.extra_rollouts_unsolved > 0:
                    unsolved = [tr for tr in trees if not tr.solved()]
                    if unsolved:
                        search.search(trees=unsolved, rollouts=rc.extra_rollouts_unsolved)
            else:
                trees = self._sharded_search(k, generator, scorer, cfg, rc.extra_rollouts_unsolved)
            _write_json(trees_file, [tr.to_json() for tr in trees])
        t_search = time.perf_counter() - t
        data_file = d / "data.json"
        if data_file.is_file():
            data = json.loads(data_file.read_text())
            sft = [SFTRecord(**r) for r in data["sft"]]
            pairs = [PairRecord(**r) for r in data["pairs"]]
        else:
            sft = extract_sft(trees, top_k=2, fmt=self.fmt)
            pairs = extract_pairs(trees, min_edit=rc.pair_min_edit, edit_unit=rc.pair_edit_unit, fmt=self.fmt)
            _write_json(data_file, {"sft": [r.to_dict() for r in sft], "pairs": [p.to_dict() for p in pairs]})
        n_round_sft = len(sft)
        if rc.accumulate_sft and k > 1:
            sft = sft + self._earlier_sft(k, {r.query for r in sft})
        carried = not sft or not pairs
        if carried and prev is None:
            raise RuntimeError(f"round {k} produced {len(sft)} SFT trajectories and {len(pairs)} pairs; "
                               "increase rollouts or the pool size")
        if carried:  # no training signal this round: keep the previous round's models (recorded in metrics)
            policy, ppm = prev
            sft_losses, ppm_losses = [float("nan")], [float("nan")]
        else:
            self._check_time(f"round {k} policy training")
            policy = self.backend.fresh_policy()  # every round fine-tunes from the base weights
            examples = augment_renamed(sft_examples(sft, self.fmt), rc.rename_copies, seed=self.seed + k)
            sft_losses = self.backend.train_policy(policy, examples, steps=rc.sft_steps, batch_size=rc.batch_size,
                                                   lr=rc.lr, seed=self.seed + k)
        self.backend.save_policy(policy, d / "policy")
        if not carried:
            self._check_time(f"round {k} PPM training")
            ppm = self.backend.make_ppm(policy)
            ppm_losses = self.backend.train_ppm(ppm, pairs, steps=rc.ppm_steps, batch_size=rc.ppm_batch_pairs,
                                                lr=rc.lr, loss=rc.ppm_loss, seed=self.seed + k)
        self.backend.save_ppm(ppm, d / "ppm")
        self.models[k] = (policy, ppm)
        metrics = {"round": k, "coverage": sum(tr.solved() for tr in trees) / len(trees), "n_sft": len(sft),
                   "n_sft_this_round": n_round_sft, "n_sft_problems": len({r.query for r in sft}),
                   "n_pairs": len(pairs), "n_step_pairs": sum(p.kind == "step" for p in pairs),
                   "n_final_pairs": sum(p.kind == "final" for p in pairs),
                   "sft_loss_first": sum(sft_losses[:10]) / min(10, len(sft_losses)),
                   "sft_loss_last": sum(sft_losses[-10:]) / min(10, len(sft_losses)),
                   "ppm_loss_last": sum(ppm_losses[-10:]) / min(10, len(ppm_losses)),
                   "ppm_train_pair_acc": self.backend.pair_accuracy(ppm, pairs) if pairs else float("nan"),
                   "search_seconds": t_search, "carried_over_previous_models": carried,
                   "config": asdict(rc)}
        _write_json(d / "metrics.json", metrics)
        return metrics


    def _sharded_search(self, k: int, generator: StepPolicy, scorer: Any, cfg: MCTSConfig,
                        extra: int) -> list[Tree]:
        """Round ``k``'s search (and extra rollouts on unsolved trees) in ``search_workers`` shards."""
        import pickle

        from ..search.sharded_search import sharded_search

        factory = _SearchFactory(generator, self.executor, scorer, cfg, self.fmt)
        try:
            pickle.dumps(factory)
        except Exception as e:  # noqa: BLE001 - any pickling failure: say which part and what to do
            raise TypeError(f"round {k}: search_workers={self.search_workers} needs a picklable generator, PPM "
                            f"and executor ({type(generator).__name__}, {type(scorer).__name__}, "
                            f"{type(self.executor).__name__}): {type(e).__name__}: {e}; use search_workers=1"
                            ) from e
        n_shards = min(self.search_workers, len(self.problems))
        return sharded_search(self.problems, factory, n_shards=n_shards, backend=self.search_backend,
                              extra_unsolved=extra)

    def _earlier_sft(self, k: int, solved: set[str]) -> list[SFTRecord]:
        """Trajectories of earlier rounds (latest first) for problems not in ``solved``."""
        out: list[SFTRecord] = []
        seen = set(solved)
        for j in range(k - 1, 0, -1):
            f = self.workdir / f"round_{j}" / "data.json"
            if not f.is_file():
                continue
            recs = [SFTRecord(**r) for r in json.loads(f.read_text())["sft"]]
            new = {r.query for r in recs} - seen
            out += [r for r in recs if r.query in new]
            seen |= new
        return out


@dataclass(frozen=True)
class _SearchFactory:
    """Picklable argument-free factory of one round's :class:`MCTS` (for the shards of ``sharded_search``)."""

    policy: Any
    executor: Any
    scorer: Any
    config: MCTSConfig
    fmt: StepFormat

    def __call__(self) -> MCTS:
        return MCTS(self.policy, self.executor, scorer=self.scorer, config=self.config, fmt=self.fmt)


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj))
    tmp.replace(path)
