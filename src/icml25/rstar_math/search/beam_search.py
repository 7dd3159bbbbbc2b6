"""Step-level beam search of rStar-Math's test-time presets (spec §2.11, official ``sft_eval_bs.yaml``).

A cheaper alternative to MCTS+PPM at inference. Per problem the search keeps up to ``B`` live partial
trajectories (*beams*), starting from the question. At each depth:

1. every live beam is expanded with ``n`` candidate next steps from the policy; code steps are parsed and executed
   exactly as in :class:`~icml25.rstar_math.search.mcts.MCTS` (same failure terminals: invalid step, too many code
   errors, too deep);
2. every new valid candidate gets its PPM score ``r_θ(x ⊕ s_1 ⊕ ... ⊕ s_d) ∈ [-1, 1]``;
3. the valid candidates of the problem (failure terminals are dropped) are sorted by score, descending and stable
   (ties keep beam order, then sample order), and the first ``B_d`` (the remaining width) are kept: those that are
   final answers become *finished solutions* and each lowers the remaining width by one, the others are the next
   live beams.

The search stops when no live beam remains or the width reaches 0. The answer is the finished solution with the
highest score (ties: the first one found). All problems' beams of one depth go to the policy in ONE call and all
their new candidates to the scorer in one call (the lock-step batching of the MCTS waves).

Every problem's result is a :class:`~icml25.rstar_math.search.tree.Tree`: every scored candidate is a child node with
``N = 1, W = Q = score`` (failure terminals ``N = 1, W = -1``, as in the MCTS), so the tree tooling
(``to_json``, ``check_invariants``, ``solved``) works unchanged. ``tree.meta`` holds the beam-search record:
``answer`` and ``score`` (None when nothing finished), ``finished`` (``{"tag", "answer", "score", "depth"}`` in
the order found; tags as in :meth:`Tree.to_json`), ``beams`` (per depth the tags of the live beams kept) and
``generated_steps`` (all sampled steps, duplicates included: the compute of equal-compute comparisons).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..domain.answer_check import AnswerChecker
from ..domain.step_format import StepFormat
from ..execution.code_executors import CodeExecutor
from .expansion import StepExpander, dedupe_candidates
from .mcts import MCTSConfig, as_problem_list
from .policies import StepPolicy, StepScorer
from .tree import Node, Tree, update

__all__ = ["BeamSearchConfig", "StepBeamSearch", "finished_solutions"]


@dataclass(frozen=True)
class BeamSearchConfig:
    """Settings of the step-level beam search (spec §2.11).

    Parameters
    ----------
    beam_width : int
        ``B``: live partial trajectories kept per problem; each finished solution lowers it by one.
    n_candidates : int
        ``n``: candidate next steps sampled per live beam and depth.
    max_depth : int
        Code steps at this depth or deeper are TOO_MANY_STEPS failure terminals (an answer step still counts).
    temperature : float
        Sampling temperature of the policy.
    errors_threshold : int
        Consecutive code errors that make a step a failure terminal (as in :class:`MCTSConfig`).
    max_tokens : int
        Token limit of one step generation.
    seed : int
        Seed passed (offset by the depth) to the policy.

    Examples
    --------
    >>> cfg = BeamSearchConfig.repo_eval()
    >>> cfg.beam_width, cfg.n_candidates, cfg.max_depth
    (8, 8, 16)
    """

    beam_width: int = 8  # B, live beams per problem (official sft_eval_bs.yaml: 8)
    n_candidates: int = 8  # n, samples per live beam and depth (official: 8)
    max_depth: int = 16  # deepest step; code steps there become too-deep failure terminals
    temperature: float = 1.0  # policy sampling temperature
    errors_threshold: int = 1  # consecutive code errors that end a beam (official eval: 1)
    max_tokens: int = 64  # token limit of one step
    seed: int = 0  # policy seed, offset by the depth

    def __post_init__(self) -> None:
        from icml25.core.validation import check_int, check_real

        for name in ("beam_width", "n_candidates", "max_depth", "errors_threshold", "max_tokens"):
            check_int(getattr(self, name), name, low=1)
        check_real(self.temperature, "temperature", low=0.0)
        check_int(self.seed, "seed")

    @classmethod
    def repo_eval(cls) -> BeamSearchConfig:
        """Official ``sft_eval_bs.yaml``: beam width 8, n = 8, depth 16, errors_threshold 1 (T = 1.0 as the
        other official eval preset)."""
        return cls(beam_width=8, n_candidates=8, max_depth=16, temperature=1.0, errors_threshold=1)

    def step_config(self) -> MCTSConfig:
        """The :class:`MCTSConfig` whose step rules (depth, code errors, sampling) this search shares."""
        return MCTSConfig(n_candidates=self.n_candidates, rollouts=1, max_depth=self.max_depth,
                          temperature=self.temperature, errors_threshold=self.errors_threshold, mode="inference",
                          max_tokens=self.max_tokens, seed=self.seed)


class StepBeamSearch:
    """The step-level beam search from the 'rStar-Math' (ICML 2025) paper's official test-time presets.

    Parameters
    ----------
    policy : StepPolicy
        Step generator (``sample_steps(prompts, n, temperature, stop, max_tokens, seed)``).
    executor : CodeExecutor
        Runs the accumulated code of code steps.
    scorer : StepScorer
        The PPM: ``score(prefixes, steps)`` in [-1, 1] (values outside are clipped, as in the MCTS).
    config : BeamSearchConfig, optional
        Search settings (default :class:`BeamSearchConfig`, the official preset).
    checker : AnswerChecker, optional
        Answer equivalence, used only to mark finished solutions ``correct`` when a gold answer is given.
    fmt : StepFormat, optional
        Prompt template and stop strings.

    Attributes
    ----------
    policy_calls, scorer_calls : int
        Calls made so far (at most one of each per depth, whatever the number of problems).

    Examples
    --------
    >>> from icml25.rstar_math import NoisyRuleSolver, SafeArithExecutor, StepArithGenerator
    >>> from icml25.rstar_math.domain.steparith import step_is_consistent
    >>> probs = StepArithGenerator(levels=(1,), seed=0).sample(2)
    >>> class Oracle:  # +1 for steps consistent with the ground truth, -1 otherwise
    ...     def score(self, prefixes, steps):
    ...         fmt = StepFormat()
    ...         out = []
    ...         for pre, st in zip(prefixes, steps):
    ...             p = next(p for p in probs if pre.startswith(fmt.prompt(p.question)))
    ...             out.append(1.0 if step_is_consistent(p, pre[len(fmt.prompt(p.question)):], st) else -1.0)
    ...         return np.array(out)
    >>> bs = StepBeamSearch(NoisyRuleSolver(probs, seed=0), SafeArithExecutor(allow_float=False), Oracle(),
    ...                     BeamSearchConfig(beam_width=4, n_candidates=4, max_depth=8))
    >>> trees = bs.search(probs)
    >>> [t.meta["answer"] == p.answer for t, p in zip(trees, probs)]
    [True, True]
    """

    def __init__(self, policy: StepPolicy, executor: CodeExecutor, scorer: StepScorer,
                 config: BeamSearchConfig | None = None, checker: AnswerChecker | None = None,
                 fmt: StepFormat | None = None) -> None:
        if config is not None and not isinstance(config, BeamSearchConfig):
            raise TypeError(f"config must be a BeamSearchConfig, got {type(config).__name__}")
        if scorer is None or not callable(getattr(scorer, "score", None)):
            raise TypeError("scorer must implement score(prefixes, steps) -> scores in [-1, 1] (the PPM); "
                            f"got {type(scorer).__name__}")
        if not hasattr(policy, "sample_steps"):
            raise TypeError("policy must implement sample_steps(prompts, n, temperature, stop, max_tokens, seed)")
        self.config = config or BeamSearchConfig()
        self.fmt = fmt or StepFormat()
        self.checker = checker or AnswerChecker()
        # the step machinery (parsing, execution, failure terminals) is the MCTS's StepExpander, same settings
        self.expander = StepExpander(executor, self.checker, self.fmt, errors_threshold=self.config.errors_threshold,
                                     max_depth=self.config.max_depth)
        self.policy, self.executor, self.scorer = policy, executor, scorer
        self.policy_calls = 0
        self.scorer_calls = 0

    def search(self, problems: Any) -> list[Tree]:
        """Beam-search every problem, all problems in lock-step (one policy and one scorer call per depth).

        Parameters
        ----------
        problems : sequence
            Objects with ``question`` (and optionally ``answer``), dicts, or ``(question, answer)`` tuples; the
            gold answer, when given, only marks finished solutions ``correct``.

        Returns
        -------
        list of Tree
            One tree per problem; ``tree.meta`` holds ``answer``, ``score``, ``finished``, ``beams`` and
            ``generated_steps`` (see the module docstring).
        """
        cfg = self.config
        trees = [Tree(q, a) for q, a in as_problem_list(problems, need_answer=False)]
        for t in trees:
            t.meta.update(search="beam", beam_width=cfg.beam_width, n_candidates=cfg.n_candidates,
                          generated_steps=0, finished=[], beams=[], answer=None, score=None)
        live: list[list[Node]] = [[t.root] for t in trees]
        width = [cfg.beam_width] * len(trees)
        for depth in range(1, cfg.max_depth + 1):
            batch = [(i, node) for i in range(len(trees)) if width[i] > 0 for node in live[i]]
            if not batch:
                break
            cands = self._expand_and_score(trees, batch, depth)
            for i in {i for i, _ in batch}:
                live[i], width[i] = self._select(trees[i], cands.get(i, []), width[i], depth)
        for t in trees:
            best = None
            for f in t.meta["finished"]:  # strict > keeps the first found among equal scores
                if best is None or f["score"] > best["score"]:
                    best = f
            if best is not None:
                t.meta["answer"], t.meta["score"] = best["answer"], best["score"]
        return trees

    # -- one depth over all problems ------------------------------------------------------------------------
    def _expand_and_score(self, trees: list[Tree], batch: list[tuple[int, Node]],
                          depth: int) -> dict[int, list[Node]]:
        """Expand every live beam of ``batch`` (one policy call), execute, score the valid candidates (one scorer
        call); returns per problem its valid candidates in creation order (beam order, then sample order)."""
        cfg, fmt, steps = self.config, self.fmt, self.expander
        prompts = [fmt.prompt(trees[i].question) + "".join(n.text for n in node.path()) for i, node in batch]
        self.policy_calls += 1
        samples = self.policy.sample_steps(prompts, n=cfg.n_candidates, temperature=cfg.temperature,
                                           stop=list(fmt.stop), max_tokens=cfg.max_tokens,
                                           seed=cfg.seed * 1_000_003 + depth)
        if not isinstance(samples, (list, tuple)) or len(samples) != len(prompts):
            n_got = len(samples) if hasattr(samples, "__len__") else type(samples).__name__
            raise RuntimeError(f"policy returned {n_got} sample lists for {len(prompts)} prompts")
        created: list[tuple[int, str, Node]] = []
        to_run: list[tuple[Node, str, bool]] = []
        for (i, node), prompt, texts in zip(batch, prompts, samples):
            if isinstance(texts, str) or not all(isinstance(s, str) for s in texts):
                raise RuntimeError("policy must return, per prompt, a list of step strings")
            trees[i].meta["generated_steps"] += len(texts)
            for text in dedupe_candidates(texts):
                child, job = steps.make_child(trees[i], node, text)
                created.append((i, prompt, child))
                if job is not None:
                    to_run.append((child, *job))
        # all code of the depth runs together (a sandbox pool when the executor has ``run_many``)
        for (child, _, closes_code), res in zip(to_run, steps.execute([code for _, code, _ in to_run])):
            steps.finish_child(child, res, closes_code)
        valid = []
        for i, prompt, child in created:
            if child.reason is not None:  # failure terminal: -1 on itself, dropped from the beams
                update(child, -1.0)
                child.n_local += 1
            else:
                valid.append((i, prompt, child))
        out: dict[int, list[Node]] = {}
        if valid:
            self.scorer_calls += 1
            scores = np.asarray(self.scorer.score([p for _, p, _ in valid], [c.text for _, _, c in valid]),
                                dtype=float)
            if scores.shape != (len(valid),) or not np.all(np.isfinite(scores)):
                raise RuntimeError(f"scorer must return one finite score per step: {len(valid)} steps, got "
                                   f"shape {scores.shape}")
            for (i, _, child), s in zip(valid, np.clip(scores, -1.0, 1.0)):
                update(child, float(s))  # N = 1, W = Q = the PPM score
                child.n_local += 1
                out.setdefault(i, []).append(child)
        return out

    def _select(self, tree: Tree, cands: list[Node], width: int, depth: int) -> tuple[list[Node], int]:
        """Keep the top ``width`` valid candidates by score: answers finish (width - 1 each), the rest live on."""
        order = sorted(cands, key=lambda c: -c.Q)  # stable: equal scores keep creation order
        kept: list[Node] = []
        for child in order[:width]:
            if child.is_answer:
                tree.meta["finished"].append({"tag": node_tag(child), "answer": child.answer,
                                              "score": float(child.Q), "depth": depth})
            else:
                kept.append(child)
        width -= len(order[:width]) - len(kept)
        tree.meta["beams"].append([node_tag(n) for n in kept])
        return kept, width


def node_tag(node: Node) -> str:
    """The :meth:`Tree.to_json` tag of ``node`` (``"0"`` for the root, ``"0.2.1"`` for a grandchild)."""
    parts = []
    while node.parent is not None:
        parts.append(str(node.parent.children.index(node) + 1))
        node = node.parent
    return ".".join(["0", *reversed(parts)])


def finished_solutions(tree: Tree) -> list[tuple[Node, float]]:
    """The finished solutions of a beam-searched tree as ``(answer node, score)``, in the order found.

    Works on trees rebuilt with :meth:`Tree.from_json` too (the record keeps node tags).
    """
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be a Tree, got {type(tree).__name__}")
    if tree.meta.get("search") != "beam":
        raise ValueError("tree was not built by StepBeamSearch (no beam-search record in tree.meta)")
    out = []
    for f in tree.meta["finished"]:
        node = tree.root
        for k in f["tag"].split(".")[1:]:
            node = node.children[int(k) - 1]
        out.append((node, float(f["score"])))
    return out
