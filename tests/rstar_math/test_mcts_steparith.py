"""MCTS on StepArith with the noisy bootstrap solver: invariants, lock-step batching, bad input, resume."""

import json

import pytest

from icml25.rstar_math.domain.bootstrap_solver import NoisyRuleSolver
from icml25.rstar_math.domain.steparith import StepArithGenerator, step_is_consistent
from icml25.rstar_math.execution.code_executors import ExecResult, SafeArithExecutor
from icml25.rstar_math.search.mcts import MCTS, MCTSConfig
from icml25.rstar_math.search.policies import ConstantScorer
from icml25.rstar_math.search.tree import FAILURE_REASONS, TOO_MANY_CODE_ERRORS, Tree, check_invariants

EX = SafeArithExecutor(allow_float=False)


def _pool(n=12, levels=(1, 2, 3, 4), seed=0):
    return StepArithGenerator(levels=levels, seed=seed).sample(n)


def test_canonical_solutions_execute_and_are_consistent():
    from icml25.rstar_math.domain.step_format import StepFormat

    f = StepFormat()
    for p in StepArithGenerator(seed=3).sample(60):
        steps = p.canonical_steps(inline_bases=p.level % 2 == 0)
        assert EX.run(f.code_of("".join(steps[:-1]))).stdout == p.answer
        for k in range(len(steps)):
            assert step_is_consistent(p, "".join(steps[:k]), steps[k])
        assert len(p.question.split()) <= 96


def test_search_invariants_and_one_policy_call_per_level():
    from icml25.rstar_math.pipeline.evaluation import sample_chains

    pool = _pool(24)
    solver = NoisyRuleSolver(pool, seed=1)
    m = MCTS(solver, EX, config=MCTSConfig(n_candidates=4, rollouts=4, max_depth=10, errors_threshold=2))
    trees = m.search(pool)
    assert all(check_invariants(t) == [] for t in trees)
    assert all(t.rollouts_done == 4 for t in trees)
    # lock-step: one policy call per wave serves every tree; never more calls than 4 rollouts x (depth + 1)
    assert m.policy_calls == solver.calls <= 4 * 11
    assert solver.generated_steps > m.policy_calls * 4  # several trees per call
    fails = [n for t in trees for n in t.nodes() if n.reason in FAILURE_REASONS]
    assert all(n.N == 1 and n.W == -1 for n in fails)
    chains = sample_chains(NoisyRuleSolver(pool, seed=2), EX, pool, 4, 1.0, 10, 2)
    single = sum(c.correct for row in chains for c in row) / (4 * len(pool))
    coverage = sum(t.solved() for t in trees) / len(pool)
    assert coverage >= single + 0.10  # search finds more than one sample does


def test_bad_input_is_rejected_clearly():
    with pytest.raises(ValueError, match="rollouts"):
        MCTSConfig(rollouts=0)
    with pytest.raises(ValueError, match="c_puct"):
        MCTSConfig(c_puct=-1)
    pool = _pool(2)
    m = MCTS(NoisyRuleSolver(pool), EX)
    with pytest.raises(ValueError, match="non-empty"):
        m.search([])
    with pytest.raises(ValueError, match="no answer"):
        m.search([{"question": "x", "answer": None}])
    with pytest.raises(ValueError, match="scorer"):
        MCTS(NoisyRuleSolver(pool), EX, config=MCTSConfig(mode="ppm_init"))


class _LoopingPolicy:
    def sample_steps(self, prompts, n=1, temperature=1.0, stop=None, max_tokens=64, seed=None):
        return [[" while True : pass <end_of_step>", " garbage without stop", " x = 1 // 0 <end_of_step>"]
                for _ in prompts]


class _TimeoutExecutor:
    def run(self, code):
        return ExecResult(error="TimeoutError: killed after 1 s", timed_out=True)


def test_runaway_and_malformed_steps_become_failure_terminals():
    m = MCTS(_LoopingPolicy(), EX, config=MCTSConfig(rollouts=3, n_candidates=3))
    (t,) = m.search([("Ann has 3 apples . How many apples does Ann have ?", "3")])
    kids = t.root.children
    assert [k.reason for k in kids] == [TOO_MANY_CODE_ERRORS, "no_valid_child", TOO_MANY_CODE_ERRORS]
    assert t.root.terminal and all(k.N == 1 and k.W == -1 for k in kids) and t.root.N == 0
    (t2,) = MCTS(_LoopingPolicy(), _TimeoutExecutor(), config=MCTSConfig(rollouts=2)).search([("q", "1")])
    assert t2.root.children[0].timed_out and t2.root.children[0].reason == TOO_MANY_CODE_ERRORS


def test_resume_from_saved_trees_matches_uninterrupted_search():
    pool = _pool(6)
    cfg = MCTSConfig(n_candidates=3, rollouts=6, max_depth=10, errors_threshold=2)
    full = MCTS(NoisyRuleSolver(pool, seed=5), EX, config=cfg).search(pool)
    solver = NoisyRuleSolver(pool, seed=5)
    part = MCTS(solver, EX, config=cfg).search(pool, rollouts=3)
    saved = json.loads(json.dumps([t.to_json() for t in part]))
    resumed = MCTS(solver, EX, config=cfg).search(trees=[Tree.from_json(d) for d in saved], rollouts=3)
    for a, b in zip(full, resumed):
        assert [(n.text, n.N, n.W) for n in a.nodes()] == [(n.text, n.N, n.W) for n in b.nodes()]


def test_ppm_init_and_inference_modes():
    pool = _pool(4)
    cfg = MCTSConfig(n_candidates=3, rollouts=3, max_depth=10, errors_threshold=2, mode="ppm_init")
    trees = MCTS(NoisyRuleSolver(pool), EX, scorer=ConstantScorer(0.25), config=cfg).search(pool)
    assert all(check_invariants(t) == [] for t in trees)
    inner = [n for t in trees for n in t.nodes() if n.parent is not None and not n.terminal]
    assert inner and all(n.v0 == 0.25 and n.n_local == 1 for n in inner)  # PPM prior on the node only
    cfg = MCTSConfig(n_candidates=3, rollouts=3, max_depth=10, errors_threshold=2, mode="inference")
    trees = MCTS(NoisyRuleSolver(pool), EX, scorer=ConstantScorer(0.5), config=cfg).search(
        [(p.question, None) for p in pool])
    answers = [n for t in trees for n in t.nodes() if n.is_answer]
    assert answers and all(n.v0 == 0.5 and n.correct is None for n in answers)
    assert all(len(t.meta["anytime"]) == 3 for t in trees)
