"""StepExpander: the step expansion MCTS and beam search share (parse, execute, failure terminals)."""

from icml25.rstar_math import (
    MCTS,
    ConstantScorer,
    NoisyRuleSolver,
    SafeArithExecutor,
    StepArithGenerator,
    StepBeamSearch,
)
from icml25.rstar_math.execution.code_executors import ExecResult
from icml25.rstar_math.search.expansion import StepExpander
from icml25.rstar_math.search.tree import NO_VALID_CHILD, TOO_MANY_CODE_ERRORS, TOO_MANY_STEPS, Tree

P = StepArithGenerator(levels=(2,), seed=0).sample(1)[0]
STEPS = P.canonical_steps()


class _Failing:
    """Every run is an error; ``run_many`` raises (the expander must fall back to ``run``)."""

    def __init__(self):
        self.runs = 0

    def run(self, code):
        self.runs += 1
        return ExecResult(error="NameError: boom")

    def run_many(self, codes):
        raise OSError("pool down")


def _grow(exp, tree, node, text):
    child, job = exp.make_child(tree, node, text)
    if job is not None:
        code, closes = job
        exp.finish_child(child, exp.execute([code, code])[0], closes)
    return child


def test_consecutive_code_errors_and_depth_make_failure_terminals():
    ex = _Failing()
    exp = StepExpander(ex, errors_threshold=2, max_depth=16)
    tree = Tree(P.question, P.answer)
    a = _grow(exp, tree, tree.root, STEPS[0])
    assert (a.errors, a.terminal, a.reason) == (1, False, None)
    b = _grow(exp, tree, a, STEPS[1])
    assert (b.errors, b.terminal, b.reason) == (2, True, TOO_MANY_CODE_ERRORS)
    assert ex.runs == 4  # run_many failed: both programs of each wave ran one by one
    deep = StepExpander(SafeArithExecutor(allow_float=False), errors_threshold=2, max_depth=1)
    c = _grow(deep, tree, tree.root, STEPS[0])
    assert (c.errors, c.reason) == (0, TOO_MANY_STEPS)
    bad, job = deep.make_child(tree, tree.root, "no step markers here")
    assert job is None and bad.reason == NO_VALID_CHILD


def test_answer_step_is_checked_against_the_gold_answer():
    exp = StepExpander(SafeArithExecutor(allow_float=False))
    tree = Tree(P.question, P.answer)
    child, job = exp.make_child(tree, tree.root, STEPS[-1])
    assert job is None and child.is_answer and child.correct


def test_mcts_and_beam_search_share_the_expander_not_each_other():
    probs = StepArithGenerator(levels=(1,), seed=0).sample(2)
    ex = SafeArithExecutor(allow_float=False)
    bs = StepBeamSearch(NoisyRuleSolver(probs, seed=0), ex, ConstantScorer())
    assert isinstance(bs.expander, StepExpander) and not any(isinstance(v, MCTS) for v in vars(bs).values())
    m = MCTS(NoisyRuleSolver(probs, seed=0), ex)
    assert isinstance(m.expander, StepExpander) and m.expander.errors_threshold == m.config.errors_threshold
