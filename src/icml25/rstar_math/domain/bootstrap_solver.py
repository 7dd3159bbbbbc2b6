"""The noisy rule-based bootstrap solver (spec §5, option A): the CPU stand-in for the paper's 236B model.

It reads the problem through the generator's own structure (it is given the problems it may be asked about and
looks each up by question text), reconstructs what the partial solution already defined, and proposes a next
step with controlled error rates: wrong operand, wrong operation, distractor use, premature print, undefined
name. Rates grow with the level. It implements the :class:`~icml25.rstar_math.search.policies.StepPolicy` protocol.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .step_format import OUTPUT, StepFormat
from .steparith import SYMBOL, Op, Problem, answer_step, print_step, step_text

__all__ = ["ErrorRates", "NoisyRuleSolver"]

_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*=", re.M)


@dataclass(frozen=True)
class ErrorRates:
    """Per-step error probabilities of the bootstrap solver (spec §5 defaults), multiplied by
    ``1 + level_scale * (level - 1)``."""

    wrong_operand: float = 0.15  # copy a wrong number / quantity into one operand
    wrong_operation: float = 0.10  # use another arithmetic operator
    distractor: float = 0.10  # use a distractor (or unrelated) quantity as an operand
    premature_print: float = 0.05  # print an intermediate quantity and close the code block
    undefined_name: float = 0.03  # refer to a quantity that is not defined yet (NameError)
    level_scale: float = 0.15  # relative increase of every rate per extra level
    inline_bases: float = 0.5  # probability of inlining a base constant instead of a separate step

    def __post_init__(self) -> None:
        from icml25.core.validation import check_probability, check_real

        for name in ("wrong_operand", "wrong_operation", "distractor", "premature_print", "undefined_name",
                     "inline_bases"):
            check_probability(getattr(self, name), name)
        check_real(self.level_scale, "level_scale", low=0.0)

    def scaled(self, level: int) -> tuple[float, float, float, float, float]:
        """The five error rates at ``level``."""
        f = 1.0 + self.level_scale * (level - 1)
        return (self.wrong_operand * f, self.wrong_operation * f, self.distractor * f, self.premature_print * f,
                self.undefined_name * f)


class NoisyRuleSolver:
    """Rule-based noisy step generator over StepArith problems.

    Parameters
    ----------
    problems : sequence of Problem
        The problems it may be asked about (looked up by question text).
    rates : ErrorRates
        Error probabilities.
    fmt : StepFormat
        Prompt format used by the search (to recover the question from a prompt).
    seed : int
        Random seed of the solver's own generator.
    """

    def __init__(self, problems: Sequence[Problem], rates: ErrorRates | None = None,
                 fmt: StepFormat | None = None, seed: int = 0) -> None:
        self.fmt = fmt or StepFormat()
        self.rates = rates or ErrorRates()
        self.seed = seed
        self.rng = random.Random(seed)
        self._calls_per_question: dict[str, int] = {}
        self.by_question = {p.question: p for p in problems}
        self.calls = 0
        self.generated_steps = 0

    def add_problems(self, problems: Sequence[Problem]) -> None:
        """Make more problems known to the solver."""
        self.by_question.update({p.question: p for p in problems})

    def sample_steps(self, prompts: list[str], n: int = 1, temperature: float = 1.0,
                     stop: Sequence[str] | None = None, max_tokens: int = 64,
                     seed: int | None = None) -> list[list[str]]:
        """``n`` candidate next steps for each prompt (question prompt + partial solution)."""
        from .._validation import check_sampling

        n, temperature, max_tokens = check_sampling(n, temperature, max_tokens)
        self.calls += 1
        out = []
        for prompt in prompts:
            prob, partial = self._locate(prompt)
            # a per-problem stream: results do not depend on which other problems share the batch (sharding)
            k = self._calls_per_question.get(prob.question, 0)
            self._calls_per_question[prob.question] = k + 1
            self.rng = random.Random(f"{self.seed}|{k}|{prob.question}")
            cands = []
            for _ in range(n):
                cands.append(self._next_step(prob, partial, greedy=temperature == 0))
            self.generated_steps += n
            out.append(cands)
        return out

    def greedy(self, prompts: list[str]) -> list[str]:
        """Error-free next step (temperature 0 removes the noise)."""
        return [c[0] for c in self.sample_steps(prompts, 1, temperature=0.0)]

    # -- internals ------------------------------------------------------------------------------------------
    def _locate(self, prompt: str) -> tuple[Problem, str]:
        try:
            q = self.fmt.question_of(prompt)
        except ValueError:
            q = None
        if q in self.by_question:
            head = self.fmt.prompt(q)
            if prompt.startswith(head):
                return self.by_question[q], prompt[len(head):]
        for q, p in self.by_question.items():
            head = self.fmt.prompt(q)
            if prompt.startswith(head):
                return p, prompt[len(head):]
        raise KeyError("the bootstrap solver does not know this problem (pass it in `problems`)")

    def _next_step(self, p: Problem, partial: str, greedy: bool) -> str:
        rng = self.rng
        if OUTPUT in partial:
            obs = partial.rsplit(OUTPUT, 1)[1].split("<end_of_output>")[0].strip()
            return answer_step(obs.split()[-1] if obs.split() else obs)
        code = self.fmt.code_of(partial)
        defined = set(_ASSIGN.findall(code))
        prefix = "" if partial.strip() else " <code>"
        e_opd, e_op, e_dis, e_pr, e_und = (0.0,) * 5 if greedy else self.rates.scaled(p.level)
        if p.final in defined:
            return prefix + print_step(p.final)
        defs = {d.target: d for d in p.defs if d.target not in p.distractors}
        bases = {t: d.value for t, d in defs.items() if d.op is None}
        needed = {o for d in defs.values() for o in d.operands}
        ready = [d for t, d in defs.items() if t not in defined and d.op is not None
                 and all(o in defined or o in bases for o in d.operands)]
        pending_bases = [defs[t] for t in bases if t not in defined and t in needed]
        if defined and rng.random() < e_pr:
            var = rng.choice(sorted(defined))
            return prefix + print_step(var)
        choices = ready + ([b for b in pending_bases] if rng.random() >= self.rates.inline_bases else [])
        d = rng.choice(choices) if choices else rng.choice(ready or pending_bases)
        if d.op is None:
            return prefix + step_text(d)
        inline = {o: bases[o] for o in d.operands if o in bases and o not in defined}
        left, right, op = d.left, d.right, d.op
        u = rng.random()
        if u < e_opd:
            left, right = self._wrong_operand(p, d, defined)
        elif u < e_opd + e_op:
            op = rng.choice([o for o in SYMBOL if o != d.op])
        elif u < e_opd + e_op + e_dis:
            pool = p.distractors or [t for t in p.values if t not in defs or t == d.target]
            if pool:
                src = rng.choice(pool)
                inline[src] = p.values[src]
                left = src
        elif u < e_opd + e_op + e_dis + e_und:
            missing = [t for t in defs if t not in defined and t not in bases and t != d.target]
            if missing:
                left = rng.choice(missing)
        bad = Op(d.target, op, left, right, d.value, d.sentence, d.comment, d.indirect)
        return prefix + step_text(bad, inline)

    def _wrong_operand(self, p: Problem, d: Op, defined: set[str]) -> tuple[str, str]:
        rng = self.rng
        left, right = d.left, d.right
        if right.isdigit() and rng.random() < 0.6:
            k = int(right)
            alt = [v for v in range(1, 10) if v != k]
            return left, str(rng.choice(alt))
        others = [t for t in sorted(defined) if t not in d.operands]
        if others:
            return (rng.choice(others), right) if rng.random() < 0.5 or not right or right.isdigit() \
                else (left, rng.choice(others))
        nums = [v for v in range(2, 31) if v != p.values.get(left, -1)]
        return str(rng.choice(nums)), right
