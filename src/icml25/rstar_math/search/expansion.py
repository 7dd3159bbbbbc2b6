"""One step expansion, shared by :class:`~icml25.rstar_math.search.mcts.MCTS` and
:class:`~icml25.rstar_math.search.beam_search.StepBeamSearch` (spec §2.2-§2.4).

A sampled step becomes a child node (:meth:`StepExpander.make_child`: parse it; an unparsable step is a
NO_VALID_CHILD failure terminal, an answer step a terminal checked against the gold answer, a code step yields the
accumulated program to run), a wave's programs run together (:meth:`StepExpander.execute`: ``run_many`` when the
executor has it, a failure is that step's error result), and each code step gets its result and the failure-terminal
rules (:meth:`StepExpander.finish_child`: ``errors_threshold`` consecutive code errors, or ``max_depth``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..domain.answer_check import AnswerChecker
from ..domain.step_format import END_ANSWER, END_CODE, END_OUTPUT, StepFormat
from ..execution.code_executors import CodeExecutor, ExecResult, accumulated_code
from ..execution.sandbox import SandboxUnavailableError
from .tree import NO_VALID_CHILD, TOO_MANY_CODE_ERRORS, TOO_MANY_STEPS, Node, Tree

__all__ = ["StepExpander", "dedupe_candidates"]


class StepExpander:
    """Turns sampled step texts into child nodes: parse, execute the accumulated code, apply failure terminals.

    Parameters
    ----------
    executor : CodeExecutor
        Runs the accumulated code of code steps (``run(code)``; ``run_many(codes)`` when it has one).
    checker : AnswerChecker, optional
        Answer equivalence for answer steps of trees with a gold answer (default :class:`AnswerChecker`).
    fmt : StepFormat, optional
        Step parsing and the output block appended to steps that close a code block.
    errors_threshold : int
        Consecutive code errors that make a node a TOO_MANY_CODE_ERRORS failure terminal.
    max_depth : int
        Code steps at this depth or deeper become TOO_MANY_STEPS failure terminals.

    Examples
    --------
    >>> from icml25.rstar_math import SafeArithExecutor, StepArithGenerator, Tree
    >>> p = StepArithGenerator(levels=(1,), seed=0).sample(1)[0]
    >>> exp = StepExpander(SafeArithExecutor(allow_float=False), errors_threshold=2, max_depth=8)
    >>> tree = Tree(p.question, p.answer)
    >>> child, job = exp.make_child(tree, tree.root, p.canonical_steps()[0])
    >>> code, closes = job  # a code step: the accumulated program and whether it closes the code block
    >>> exp.finish_child(child, exp.execute([code])[0], closes)
    >>> child.reason is None, child.errors, child.depth
    (True, 0, 1)
    """

    def __init__(self, executor: CodeExecutor, checker: AnswerChecker | None = None, fmt: StepFormat | None = None,
                 errors_threshold: int = 1, max_depth: int = 16) -> None:
        from icml25.core.validation import check_int

        self.executor = executor
        self.checker = checker or AnswerChecker()
        self.fmt = fmt or StepFormat()
        self.errors_threshold = check_int(errors_threshold, "errors_threshold", low=1)
        self.max_depth = check_int(max_depth, "max_depth", low=1)

    def make_child(self, tree: Tree, parent: Node, text: str) -> tuple[Node, tuple[str, bool] | None]:
        """New child of ``parent``; for a code step also the program to run and whether it closes the block."""
        child = Node(text=text, parent=parent, depth=parent.depth + 1)
        parent.children.append(child)
        step = self.fmt.parse(text)
        if step.kind == "invalid":
            child.terminal, child.reason = True, NO_VALID_CHILD
            return child, None
        if step.kind == "answer":
            child.terminal, child.answer = True, step.answer
            if tree.gold is not None:
                child.correct = self.checker.equivalent(step.answer, tree.gold)
            return child, None
        child.code = step.code
        child.closes_block = END_CODE in text or END_OUTPUT in text
        path = child.path()
        code = accumulated_code([(n.code, (END_CODE in n.text or END_OUTPUT in n.text), n.timed_out)
                                 for n in path])
        return child, (code, step.closes_code)

    def execute(self, codes: list[str]) -> list[ExecResult]:
        """Run one wave's programs: ``executor.run_many`` when it exists (a pool), else ``run`` one by one.

        An executor failure becomes that step's error result, never a crash (a strict sandbox that refuses to run,
        :class:`~icml25.rstar_math.execution.sandbox.SandboxUnavailableError`, stops the search).
        """
        run_many = getattr(self.executor, "run_many", None)
        if callable(run_many) and len(codes) > 1:
            try:
                res = list(run_many(codes))
                if len(res) == len(codes):
                    return res
            except SandboxUnavailableError:
                raise  # a strict sandbox refusing to run stops the search instead of failing every step
            except Exception:  # noqa: BLE001 - fall back to one-by-one, where each failure is its own
                pass
        out = []
        for code in codes:
            try:
                out.append(self.executor.run(code))
            except SandboxUnavailableError:
                raise
            except Exception as e:  # noqa: BLE001 - an executor failure is a failed step, never a crash
                out.append(ExecResult(error=f"{type(e).__name__}: {e}"))
        return out

    def finish_child(self, child: Node, res: ExecResult, closes_code: bool) -> None:
        """Attach an execution result to a code-step child and apply the failure-terminal rules."""
        parent = child.parent
        child.observation, child.timed_out = res.observation, res.timed_out
        if closes_code:
            child.text = child.text + self.fmt.output_block(res.observation)
        child.errors = parent.errors + 1 if res.is_error else 0
        if child.errors >= self.errors_threshold:
            child.terminal, child.reason = True, TOO_MANY_CODE_ERRORS
        elif child.depth >= self.max_depth:
            child.terminal, child.reason = True, TOO_MANY_STEPS


def dedupe_candidates(cands: Sequence[str]) -> list[str]:
    """Exact-text de-duplication; only the first sample that stopped on ``<end_of_answer>`` is kept."""
    seen, out, has_answer = set(), [], False
    for c in cands:
        if c in seen:
            continue
        seen.add(c)
        if c.rstrip().endswith(END_ANSWER):
            if has_answer:
                continue
            has_answer = True
        out.append(c)
    return out
