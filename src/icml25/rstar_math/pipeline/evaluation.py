"""Evaluation methods at equal numbers of complete trajectories (spec §6, §8): greedy, maj@N, BoN@N with the
PPM (last-step score), MCTS+PPM@N (anytime: best-valued terminal after N rollouts), step-level beam search@N (beam
width N, N candidates per beam: the official ``sft_eval_bs.yaml`` shape), with generated-step counts.

Independent samples reuse the search code: one tree with ``n_candidates=1`` and one rollout is exactly one
sampled chain, so K chains per problem are K such trees searched in lock-step.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

import numpy as np

from ..domain.answer_check import AnswerChecker
from ..domain.step_format import StepFormat
from ..execution.code_executors import CodeExecutor
from ..search.beam_search import BeamSearchConfig, StepBeamSearch
from ..search.mcts import MCTS, MCTSConfig, as_problem_list
from ..search.policies import StepPolicy, StepScorer
from ..search.tree import Tree

__all__ = ["Chain", "sample_chains", "evaluate", "majority_vote", "top_k_vote", "multi_run_mcts"]


@dataclass
class Chain:
    """One sampled solution: step texts, final answer (None if it failed), correctness, generated steps."""

    steps: list[str]
    answer: str | None
    correct: bool
    n_generated: int


def sample_chains(policy: StepPolicy, executor: CodeExecutor, problems, k: int, temperature: float = 1.0,
                  max_depth: int = 16, errors_threshold: int = 1, max_tokens: int = 32, seed: int = 0,
                  checker: AnswerChecker | None = None, fmt: StepFormat | None = None) -> list[list[Chain]]:
    """``k`` independent chains per problem (lock-step batched); ``temperature=0`` gives greedy chains."""
    from icml25.core.validation import check_int, check_real

    k = check_int(k, "k", low=1)
    check_real(temperature, "temperature", low=0.0)
    check_int(max_depth, "max_depth", low=1)
    check_int(errors_threshold, "errors_threshold", low=1)
    check_int(max_tokens, "max_tokens", low=1)
    plist = as_problem_list(problems, need_answer=False)
    cfg = MCTSConfig(n_candidates=1, rollouts=1, max_depth=max_depth, temperature=temperature,
                     errors_threshold=errors_threshold, mode="terminal", max_tokens=max_tokens, seed=seed)
    trees = [Tree(q, a) for q, a in plist for _ in range(k)]
    MCTS(policy, executor, checker, None, cfg, fmt).search(trees=trees)
    out = []
    for i in range(len(plist)):
        row = []
        for t in trees[i * k:(i + 1) * k]:
            path = max((n.path() for n in t.nodes() if not n.children and n.parent is not None), key=len,
                       default=[])
            last = path[-1] if path else None
            ans = last.answer if last is not None and last.is_answer else None
            row.append(Chain([n.text for n in path], ans, bool(last is not None and last.is_answer and last.correct),
                             int(t.meta.get("generated_steps", 0))))
        out.append(row)
    return out


def majority_vote(answers: list[str | None], checker: AnswerChecker | None = None) -> str | None:
    """Most frequent non-None answer (ties: first seen); equivalence classes by ``checker`` when given.

    Examples
    --------
    >>> majority_vote(["3", None, "4", "3"])
    '3'
    >>> majority_vote(["0.5", "1/2", "2"], checker=AnswerChecker(use_math_verify=False))
    '0.5'
    >>> majority_vote([None, None]) is None
    True
    """
    if isinstance(answers, (str, bytes)) or not isinstance(answers, (list, tuple)):
        raise TypeError(f"answers must be a list of answer strings (or None), got {type(answers).__name__}")
    if any(a is not None and not isinstance(a, str) for a in answers):
        raise TypeError("answers must hold strings or None")
    vals = [a for a in answers if a is not None]
    if not vals:
        return None
    if checker is None:
        return Counter(vals).most_common(1)[0][0]
    reps: list[list] = []
    for a in vals:
        for r in reps:
            if checker.equivalent(a, r[0]):
                r[1] += 1
                break
        else:
            reps.append([a, 1])
    return max(reps, key=lambda r: r[1])[0]


def top_k_vote(candidates: list[tuple[float, str | None]], top_k: int,
               checker: AnswerChecker | None = None) -> str | None:
    """The official multi-run answer (``eval_maj.py``): the ``top_k`` highest-valued ``(value, answer)``
    candidates (one per MCTS run; runs without an answer dropped), then a majority vote among them (ties: the
    answer of the higher-valued candidate first).

    Examples
    --------
    >>> top_k_vote([(0.9, "3"), (0.8, "5"), (0.7, "5"), (0.1, "3"), (0.0, "3")], top_k=3)
    '5'
    """
    from icml25.core.validation import check_int

    top_k = check_int(top_k, "top_k", low=1)
    if isinstance(candidates, (str, bytes)) or not isinstance(candidates, (list, tuple)):
        raise TypeError(f"candidates must be a list of (value, answer) pairs, got {type(candidates).__name__}")
    valid = [(float(v), a) for v, a in candidates if a is not None]
    valid.sort(key=lambda x: -x[0])  # stable: equal values keep run order
    return majority_vote([a for _, a in valid[:top_k]], checker)


def multi_run_mcts(problems, policy: StepPolicy, executor: CodeExecutor, scorer: StepScorer, runs: int,
                   rollouts: int, top_k: int, mcts_config: MCTSConfig | None = None, seed: int = 0,
                   max_tokens: int = 32, checker: AnswerChecker | None = None,
                   fmt: StepFormat | None = None) -> list[str | None]:
    """Test-time search of the official evaluation (spec §2.5, §2.11): ``runs`` independent MCTS+PPM inference
    runs per problem (seeds ``seed``, ``seed + 1``, ...), each with ``rollouts`` rollouts returning its
    highest-valued answer node, then :func:`top_k_vote` over the runs. Returns one answer (or None) per problem.
    """
    from icml25.core.validation import check_int

    runs = check_int(runs, "runs", low=1)
    rollouts = check_int(rollouts, "rollouts", low=1)
    top_k = check_int(top_k, "top_k", low=1)
    checker = checker or AnswerChecker()
    plist = as_problem_list(problems, need_answer=False)
    base = mcts_config or MCTSConfig(n_candidates=8, errors_threshold=1)
    cands: list[list[tuple[float, str | None]]] = [[] for _ in plist]
    for r in range(runs):
        cfg = replace(base, mode="inference", rollouts=rollouts, seed=seed + r, max_tokens=max_tokens)
        trees = MCTS(policy, executor, checker, scorer, cfg, fmt).search([(q, None) for q, _ in plist])
        for i, t in enumerate(trees):
            best = max((n for n in t.nodes() if n.is_answer), key=lambda n: n.Q, default=None)
            cands[i].append((best.Q, best.answer) if best is not None else (-np.inf, None))
    return [top_k_vote(c, top_k, checker) for c in cands]


def evaluate(problems, policy: StepPolicy, executor: CodeExecutor, scorer: StepScorer | None = None,
             methods=("greedy", "maj", "bon", "mcts"), ns=(4, 8, 16), seed: int = 0,
             mcts_config: MCTSConfig | None = None, max_depth: int = 16, max_tokens: int = 32,
             checker: AnswerChecker | None = None, fmt: StepFormat | None = None,
             vote: tuple[int, int, int] = (8, 4, 4), beam_config: BeamSearchConfig | None = None) -> dict:
    """Accuracy of each method at each N (anytime from one run of ``max(ns)`` samples / rollouts).

    Method ``"mcts_vote"`` is the official multi-run test-time search (:func:`multi_run_mcts` with
    ``vote = (runs, rollouts per run, top_k)``), reported as ``"mcts_vote"``. Method ``"beam"`` is the step-level
    beam search (:class:`StepBeamSearch`), one search per N with beam width N and N candidates per beam (the
    official preset ties both to 8), answering with its top-scored finished solution; reported as ``"beam@N"``
    (other settings from ``beam_config``, default ``errors_threshold=1`` and ``max_depth``).

    Returns
    -------
    dict
        ``{"greedy": {"acc", "steps", "correct"}, "maj@N": {...}, "bon@N": {...}, "mcts@N": {...}}``;
        ``acc`` is a fraction, ``steps`` the mean number of generated steps per problem and ``correct`` the
        per-problem outcomes (list of bool, in problem order) for splits and bootstrap intervals.
    """
    from icml25.core.validation import check_int

    known = ("greedy", "maj", "bon", "mcts", "mcts_vote", "beam")
    if isinstance(methods, str) or not methods or any(m not in known for m in methods):
        raise ValueError(f"methods must be a non-empty sequence of {', '.join(map(repr, known))}, got {methods!r}")
    if isinstance(ns, (str, bytes)) or not hasattr(ns, "__len__") or len(ns) == 0:
        raise TypeError(f"ns must be a non-empty sequence of integers >= 1, got {ns!r}")
    ns = tuple(check_int(k, "ns", low=1) for k in ns)
    check_int(max_depth, "max_depth", low=1)
    check_int(max_tokens, "max_tokens", low=1)
    checker = checker or AnswerChecker()
    fmt = fmt or StepFormat()
    plist = as_problem_list(problems, need_answer=True)
    res: dict = {}
    kmax = max(ns)
    if "greedy" in methods:
        ch = sample_chains(policy, executor, plist, 1, 0.0, max_depth, 1, max_tokens, seed, checker, fmt)
        res["greedy"] = _entry([c[0].correct for c in ch], float(np.mean([c[0].n_generated for c in ch])))
    if "maj" in methods or "bon" in methods:
        ch = sample_chains(policy, executor, plist, kmax, 1.0, max_depth, 1, max_tokens, seed + 1, checker, fmt)
        bon_scores = None
        if "bon" in methods:
            if scorer is None:
                raise ValueError("bon needs a scorer (PPM)")
            flat = [(fmt.prompt(q) + "".join(c.steps[:-1]), c.steps[-1] if c.steps else "")
                    for (q, _), row in zip(plist, ch) for c in row]
            s = np.asarray(scorer.score([a for a, _ in flat], [b for _, b in flat]), float)
            bon_scores = s.reshape(len(plist), kmax)
        for n in ns:
            steps = float(np.mean([sum(c.n_generated for c in row[:n]) for row in ch]))
            if "maj" in methods:
                acc = [checker.equivalent(majority_vote([c.answer for c in row[:n]], checker), g)
                       for row, (_, g) in zip(ch, plist)]
                res[f"maj@{n}"] = _entry(acc, steps)
            if bon_scores is not None:
                acc = []
                for i, row in enumerate(ch):
                    valid = [j for j in range(n) if row[j].answer is not None]
                    if not valid:
                        acc.append(False)
                        continue
                    j = max(valid, key=lambda j: bon_scores[i, j])
                    acc.append(row[j].correct)
                res[f"bon@{n}"] = _entry(acc, steps)
    if "mcts" in methods:
        if scorer is None:
            raise ValueError("mcts needs a scorer (PPM)")
        cfg = replace(mcts_config or MCTSConfig(n_candidates=8, errors_threshold=1, max_depth=max_depth),
                      mode="inference", rollouts=kmax, seed=seed, max_tokens=max_tokens)
        trees = MCTS(policy, executor, checker, scorer, cfg, fmt).search([(q, None) for q, _ in plist])
        for n in ns:
            acc, steps = [], []
            for t, (_, g) in zip(trees, plist):
                _, ans, gen = t.meta["anytime"][n - 1]
                acc.append(checker.equivalent(ans, g))
                steps.append(gen)
            res[f"mcts@{n}"] = _entry(acc, float(np.mean(steps)))
    if "mcts_vote" in methods:
        if scorer is None:
            raise ValueError("mcts_vote needs a scorer (PPM)")
        if not isinstance(vote, (tuple, list)) or len(vote) != 3:
            raise TypeError(f"vote must be a (runs, rollouts, top_k) tuple, got {vote!r}")
        cfg = mcts_config or MCTSConfig(n_candidates=8, errors_threshold=1, max_depth=max_depth)
        answers = multi_run_mcts(plist, policy, executor, scorer, *vote, mcts_config=replace(cfg, max_depth=max_depth),
                                 seed=seed, max_tokens=max_tokens, checker=checker, fmt=fmt)
        res["mcts_vote"] = _entry([checker.equivalent(a, g) for a, (_, g) in zip(answers, plist)], float("nan"))
    if "beam" in methods:
        if scorer is None:
            raise ValueError("beam needs a scorer (PPM)")
        base = beam_config or BeamSearchConfig(max_depth=max_depth, errors_threshold=1)
        for n in ns:
            cfg = replace(base, beam_width=n, n_candidates=n, seed=seed, max_tokens=max_tokens)
            trees = StepBeamSearch(policy, executor, scorer, cfg, checker, fmt).search([(q, None) for q, _ in plist])
            res[f"beam@{n}"] = _entry([checker.equivalent(t.meta["answer"], g) for t, (_, g) in zip(trees, plist)],
                                      float(np.mean([t.meta["generated_steps"] for t in trees])))
    return res


def _entry(correct, steps: float) -> dict:
    correct = [bool(c) for c in correct]
    return {"acc": float(np.mean(correct)), "steps": steps, "correct": correct}
