"""Step-level MCTS of rStar-Math with lock-step batching over problems (spec §2.2-§2.5).

All trees advance one level per *wave*: every tree whose current node needs expanding contributes one prompt,
and the policy is called once per wave with all of them (``n`` samples each). Modes:

- ``"terminal"``: terminal-guided annotation (rounds 1-2): answer nodes get ±1 against the gold answer and are
  backed up to the root; intermediate nodes get values only through these back-ups.
- ``"ppm_init"``: PPM-augmented (round 3+): every new non-terminal child gets ``update(s, r_θ(x ⊕ ... ⊕ s))``
  on itself; answers are still scored against the gold answer and backed up.
- ``"inference"``: no gold answer; answer nodes get their PPM score, backed up to the root.

Failure terminals (too many code errors, too deep, unparsable) get ``-1`` on themselves only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..domain.answer_check import AnswerChecker
from ..domain.step_format import StepFormat
from ..execution.code_executors import CodeExecutor
from .expansion import StepExpander, dedupe_candidates
from .policies import StepPolicy, StepScorer
from .tree import Node, Tree, select_child, update, update_recursive

__all__ = ["MCTSConfig", "MCTS", "as_problem_list", "dedupe_candidates"]

_MODES = ("terminal", "ppm_init", "inference")


@dataclass(frozen=True)
class MCTSConfig:
    """Search settings (spec §2.3-2.5, §2.10-2.11).

    Parameters
    ----------
    c_puct : float
        UCT exploration constant ``c`` (paper: 2).
    n_candidates : int
        Candidate steps sampled per expansion (``n_generate_sample``).
    rollouts : int
        Rollouts per problem (``iterations``).
    max_depth : int
        Steps deeper than this become TOO_MANY_STEPS failure terminals.
    temperature : float
        Sampling temperature.
    errors_threshold : int
        Consecutive code errors that make a node a failure terminal.
    unvisited_bonus : {"zero", "infinite"}
        Official zero-bonus UCT or textbook +inf for unvisited children.
    mode : {"terminal", "ppm_init", "inference"}
        Annotation mode (see the module docstring).
    max_tokens : int
        Token limit of one step generation.
    seed : int
        Seed passed (offset by the wave index) to the policy.
    """

    c_puct: float = 2.0
    n_candidates: int = 4
    rollouts: int = 8
    max_depth: int = 16
    temperature: float = 1.0
    errors_threshold: int = 1
    unvisited_bonus: str = "zero"
    mode: str = "terminal"
    max_tokens: int = 64
    seed: int = 0

    def __post_init__(self) -> None:
        from icml25.core.validation import check_int, check_real

        for name in ("rollouts", "n_candidates", "max_depth", "errors_threshold", "max_tokens"):
            check_int(getattr(self, name), name, low=1)
        check_real(self.c_puct, "c_puct", low=0.0)
        check_real(self.temperature, "temperature", low=0.0)
        if self.unvisited_bonus not in ("zero", "infinite"):
            raise ValueError(f"unvisited_bonus must be 'zero' or 'infinite', got {self.unvisited_bonus!r}")
        if self.mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {self.mode!r}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")

    @classmethod
    def paper_round1(cls) -> MCTSConfig:
        """Paper Table 2, round 1 (bootstrap): 5 candidates, 8 rollouts, terminal-guided."""
        return cls(n_candidates=5, rollouts=8, errors_threshold=2, mode="terminal")

    @classmethod
    def paper_round2(cls) -> MCTSConfig:
        """Paper round 2: 8 candidates, 16 rollouts, terminal-guided."""
        return cls(n_candidates=8, rollouts=16, errors_threshold=1, mode="terminal")

    @classmethod
    def paper_round3(cls) -> MCTSConfig:
        """Paper round 3: 8 candidates, 16 rollouts, PPM-augmented."""
        return cls(n_candidates=8, rollouts=16, errors_threshold=1, mode="ppm_init")

    @classmethod
    def repo_sample(cls) -> MCTSConfig:
        """Official ``sft_sample_mcts.yaml``: T=1.0, n=12, 48 iterations, PPM on."""
        return cls(n_candidates=12, rollouts=48, errors_threshold=1, mode="ppm_init")

    @classmethod
    def repo_eval(cls) -> MCTSConfig:
        """Official ``sft_eval_mcts.yaml``: T=1.0, n=32, 12 iterations, PPM, inference."""
        return cls(n_candidates=32, rollouts=12, errors_threshold=1, mode="inference")


def as_problem_list(problems: Any, need_answer: bool) -> list[tuple[str, str | None]]:
    """Normalise problems (objects with ``question``/``answer``, dicts, or ``(q, a)`` tuples) to tuples."""
    if problems is None or (hasattr(problems, "__len__") and len(problems) == 0):
        raise ValueError("problems must be a non-empty list")
    out = []
    for i, p in enumerate(problems):
        if isinstance(p, dict):
            q, a = p.get("question"), p.get("answer")
        elif isinstance(p, (tuple, list)):
            q, a = (p[0], p[1] if len(p) > 1 else None)
        else:
            q, a = getattr(p, "question", None), getattr(p, "answer", None)
        if not isinstance(q, str) or not q.strip():
            raise ValueError(f"problems[{i}] has no question text")
        if need_answer and (a is None or not str(a).strip()):
            raise ValueError(f"problems[{i}] has no answer; terminal-guided and PPM-augmented search need "
                             "the gold answer (use mode='inference' without answers)")
        out.append((q, None if a is None else str(a)))
    return out


class MCTS:
    """Lock-step batched step-level MCTS (spec §2.4).

    Parameters
    ----------
    policy : StepPolicy
        Step generator.
    executor : CodeExecutor
        Runs accumulated code of code steps.
    checker : AnswerChecker, optional
        Answer equivalence (default :class:`AnswerChecker`).
    scorer : StepScorer, optional
        PPM; required for modes ``ppm_init`` and ``inference``.
    config : MCTSConfig
        Search settings.
    fmt : StepFormat
        Prompt template and stop strings.
    """

    def __init__(self, policy: StepPolicy, executor: CodeExecutor, checker: AnswerChecker | None = None,
                 scorer: StepScorer | None = None, config: MCTSConfig | None = None,
                 fmt: StepFormat | None = None) -> None:
        self.config = config or MCTSConfig()
        if self.config.mode != "terminal" and scorer is None:
            raise ValueError(f"mode {self.config.mode!r} needs a scorer (PPM)")
        if not hasattr(policy, "sample_steps"):
            raise TypeError("policy must implement sample_steps(prompts, n, temperature, stop, max_tokens, seed)")
        self.policy, self.executor, self.scorer = policy, executor, scorer
        self.checker = checker or AnswerChecker()
        self.fmt = fmt or StepFormat()
        self.policy_calls = 0
        self.wave = 0

    @property
    def expander(self) -> StepExpander:
        """The :class:`StepExpander` of the current executor, checker, format and config (built on each access)."""
        cfg = self.config
        return StepExpander(self.executor, self.checker, self.fmt, errors_threshold=cfg.errors_threshold,
                            max_depth=cfg.max_depth)

    # -- public API -----------------------------------------------------------------------------------------
    def search(self, problems: Any = None, trees: list[Tree] | None = None,
               rollouts: int | None = None) -> list[Tree]:
        """Run ``rollouts`` (default ``config.rollouts``) more rollouts on every tree, all trees in lock-step.

        Pass ``trees`` (e.g. loaded with :meth:`Tree.from_json`) to resume or extend a search; otherwise new
        trees are built for ``problems``.
        """
        cfg = self.config
        if trees is None:
            plist = as_problem_list(problems, need_answer=cfg.mode != "inference")
            trees = [Tree(q, a) for q, a in plist]
        elif not trees:
            raise ValueError("trees must be a non-empty list")
        from icml25.core.validation import check_int

        n_roll = cfg.rollouts if rollouts is None else check_int(rollouts, "rollouts", low=1)
        for t in trees:
            t.meta.setdefault("generated_steps", 0)
            t.meta.setdefault("anytime", [])
        for _ in range(n_roll):
            self._rollout(trees)
            for t in trees:
                t.rollouts_done += 1
                t.meta["anytime"].append([t.rollouts_done, best_answer(t), t.meta["generated_steps"]])
        return trees

    # -- one rollout over all trees --------------------------------------------------------------------------
    def _rollout(self, trees: list[Tree]) -> None:
        cfg = self.config
        current: dict[int, Node] = {i: t.root for i, t in enumerate(trees) if not t.root.terminal}
        for _level in range(cfg.max_depth + 2):
            to_expand: list[int] = []
            for i in list(current):
                node = current[i]
                while True:
                    if node.terminal:
                        current.pop(i)
                        break
                    if not node.children:
                        current[i] = node
                        to_expand.append(i)
                        break
                    nxt = select_child(node, cfg.c_puct, cfg.unvisited_bonus)
                    if nxt is None:
                        node.terminal = True
                        current.pop(i)
                        break
                    node = nxt
            if not to_expand:
                break
            self._expand([(trees[i], current[i]) for i in to_expand])
            for i in to_expand:
                node = current[i]
                nxt = select_child(node, cfg.c_puct, cfg.unvisited_bonus)
                if nxt is None:
                    node.terminal = True
                    current.pop(i)
                else:
                    current[i] = nxt

    def _expand(self, batch: list[tuple[Tree, Node]]) -> None:
        cfg = self.config
        prompts = [self.fmt.prompt(t.question) + "".join(n.text for n in node.path()) for t, node in batch]
        self.wave += 1
        self.policy_calls += 1
        samples = self.policy.sample_steps(prompts, n=cfg.n_candidates, temperature=cfg.temperature,
                                           stop=list(self.fmt.stop), max_tokens=cfg.max_tokens,
                                           seed=cfg.seed * 1_000_003 + self.wave)
        if len(samples) != len(prompts):
            raise RuntimeError(f"policy returned {len(samples)} sample lists for {len(prompts)} prompts")
        to_score: list[tuple[str, Node]] = []
        answers_inference: list[tuple[str, Node]] = []
        created: list[tuple[str, Node]] = []
        to_run: list[tuple[Node, str, bool]] = []
        expander = self.expander
        for (tree, node), prompt, cands in zip(batch, prompts, samples):
            tree.meta["generated_steps"] = tree.meta.get("generated_steps", 0) + len(cands)
            for text in dedupe_candidates(cands):
                child, job = expander.make_child(tree, node, text)
                created.append((prompt, child))
                if job is not None:
                    to_run.append((child, *job))
        # one wave's step programs run together (a sandbox pool when the executor has ``run_many``)
        for (child, _, closes_code), res in zip(to_run, expander.execute([code for _, code, _ in to_run])):
            expander.finish_child(child, res, closes_code)
        for prompt, child in created:
            if child.reason is not None:
                update(child, -1.0)  # failure terminals: -1 on themselves only
                child.n_local += 1
            elif child.is_answer:
                if cfg.mode == "inference":
                    answers_inference.append((prompt, child))
                else:
                    update_recursive(child, 1.0 if child.correct else -1.0)
            elif cfg.mode != "terminal":
                to_score.append((prompt, child))
        pending = to_score + answers_inference
        if pending:
            scores = np.asarray(self.scorer.score([p for p, _ in pending], [c.text for _, c in pending]),
                                dtype=float)
            if scores.shape != (len(pending),) or not np.all(np.isfinite(scores)):
                raise RuntimeError("scorer must return one finite score per step")
            scores = np.clip(scores, -1.0, 1.0)
            for (_, child), s in zip(pending, scores):
                if child.is_answer:
                    update_recursive(child, float(s))
                else:
                    update(child, float(s))
                    child.n_local += 1


def best_answer(tree: Tree) -> str | None:
    """Answer of the highest-valued valid answer node so far (ties: first created); None if none."""
    best, best_q = None, -np.inf
    for n in tree.nodes():
        if n.is_answer and n.Q > best_q:
            best, best_q = n.answer, n.Q
    return best


def with_mode(config: MCTSConfig, **changes: Any) -> MCTSConfig:
    """A copy of ``config`` with fields changed (validated)."""
    return replace(config, **changes)
