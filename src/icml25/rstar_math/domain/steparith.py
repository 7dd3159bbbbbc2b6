"""StepArith: the synthetic multi-step word-problem domain of the CPU reproduction (spec §5).

Each problem is a random expression tree over named quantities ("Ann has 7 apples .") combined by ``+ - * //``
operations ("Bob has 3 more than Ann ."), rendered as one templated sentence per fact, with a question about the
root quantity. Levels L1-L6 = number of operations; distractor sentences (L3+), shuffled sentence order where
dependencies allow (L4+) and indirect references ("the total from before", L5+) add difficulty. Any
topological order of the steps is a correct solution, so search trees have many correct branches. Text is
word-level: tokens separated by single spaces, newlines are the token ``\\n``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .step_format import StepFormat

__all__ = ["NAMES", "ITEMS", "Op", "Problem", "StepArithGenerator", "step_text", "print_step", "answer_step"]

NAMES = ("Ann", "Bob", "Cara", "Dan", "Eve", "Finn", "Gus", "Hana", "Ivy", "Jack", "Kai", "Liam", "Mia", "Noah",
         "Olga", "Pete", "Quinn", "Rosa", "Sam", "Tom")
ITEMS = ("apples", "pens", "books", "cards", "coins", "stamps", "shells", "marbles", "cookies", "stickers",
         "beads", "rocks", "toys", "plums", "pears", "eggs", "nuts", "keys", "cups", "hats")
SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "//"}


@dataclass(frozen=True)
class Op:
    """One quantity definition: ``target = left <op> right`` (``op`` None for a base fact ``target = value``).

    ``left``/``right`` are quantity names or integer constants (as strings); ``indirect`` marks an unnamed
    intermediate (a ``t`` variable) referred to later as "the total from before".
    """

    target: str
    op: str | None
    left: str
    right: str = ""
    value: int = 0
    sentence: str = ""
    comment: str = ""
    indirect: bool = False

    @property
    def operands(self) -> tuple[str, ...]:
        """Quantity names this definition reads."""
        if self.op is None:
            return ()
        return tuple(x for x in (self.left, self.right) if x and not x.lstrip("-").isdigit())

    def code(self, inline: dict[str, int] | None = None) -> str:
        """Python for this definition; names in ``inline`` are replaced by their constants."""
        if self.op is None:
            return f"{self.target} = {self.value}"
        inline = inline or {}
        a, b = (str(inline.get(x, x)) for x in (self.left, self.right))
        return f"{self.target} = {a} {SYMBOL[self.op]} {b}"


@dataclass
class Problem:
    """A StepArith problem.

    Attributes
    ----------
    question : str
        Word-level problem text (facts + question sentence).
    answer : str
        Gold final answer (an integer as text).
    level : int
        Number of operations (1-6).
    defs : list of Op
        Base facts and operations in canonical (creation) order.
    final : str
        Name of the asked quantity.
    values : dict
        True value of every quantity, distractors included.
    distractors : list of str
        Names defined only by distractor sentences.
    """

    question: str
    answer: str
    level: int
    defs: list[Op]
    final: str
    values: dict[str, int]
    distractors: list[str] = field(default_factory=list)
    item: str = "apples"

    def __post_init__(self) -> None:
        from icml25.core.validation import check_int

        from .._validation import check_text

        check_text(self.question, "question")
        check_text(self.answer, "answer")
        check_int(self.level, "level", low=1)

    def canonical_steps(self, inline_bases: bool = False) -> list[str]:
        """One canonical solution (creation order) as step texts, print and answer steps included."""
        steps = []
        bases = {d.target: d.value for d in self.defs if d.op is None and d.target not in self.distractors}
        for d in self.defs:
            if d.target in self.distractors:
                continue
            if d.op is None:
                if not inline_bases:
                    steps.append(step_text(d))
            else:
                steps.append(step_text(d, bases if inline_bases else None))
        steps[0] = " <code>" + steps[0]
        steps.append(print_step(self.final) + f" <output> {self.answer} <end_of_output>")
        steps.append(answer_step(self.answer))
        return steps

    def to_record(self) -> dict:
        """Official eval-data record ``{"question", "answer"}`` plus the level."""
        return {"question": self.question, "answer": self.answer, "level": self.level}


def step_text(d: Op, inline: dict[str, int] | None = None) -> str:
    """Step text ``" # <comment> \\n <code> <end_of_step>"`` of one definition."""
    return f" # {d.comment} \n {d.code(inline)} <end_of_step>"


def print_step(var: str) -> str:
    """The closing code step printing ``var``."""
    return f" # Now print the final answer \n print ( {var} ) <end_of_code>"


def answer_step(answer: str) -> str:
    """The answer step ``<answer> \\boxed{ a } <end_of_answer>``."""
    return f" <answer> \\boxed{{ {answer} }} <end_of_answer>"


class StepArithGenerator:
    """Seeded generator of StepArith problems (spec §5).

    Parameters
    ----------
    levels : sequence of int
        Difficulty levels to draw from (number of operations, 1-6).
    distractors : bool
        Add 0-2 distractor sentences at L3+.
    shuffle : bool
        Shuffle sentence order (respecting dependencies) at L4+.
    indirect : bool
        Use indirect references ("the total from before") at L5+.
    seed : int
        Random seed (pure-Python ``random.Random``).

    Examples
    --------
    >>> from icml25.rstar_math import SafeArithExecutor
    >>> p = StepArithGenerator(levels=(2,), seed=0).sample(1)[0]
    >>> p.level, len(p.canonical_steps())  # 2 operations over 3 quantities, print and answer steps
    (2, 6)
    >>> code = "; ".join(d.code() for d in p.defs) + f"; print({p.final})"
    >>> SafeArithExecutor().run(code).stdout.strip() == p.answer
    True
    """

    def __init__(self, levels=(1, 2, 3, 4, 5, 6), distractors: bool = True, shuffle: bool = True,
                 indirect: bool = True, seed: int = 0) -> None:
        from icml25.core.validation import check_int

        if isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__"):
            raise TypeError(f"levels must be a non-empty sequence of ints in 1..6, got {levels!r}")
        levels = tuple(check_int(v, "levels", low=1, high=6) for v in levels)
        if not levels:
            raise ValueError("levels must be a non-empty sequence of ints in 1..6, got an empty one")
        self.levels, self.distractors, self.shuffle, self.indirect = levels, distractors, shuffle, indirect
        self.rng = random.Random(seed)

    def sample(self, n: int, level: int | None = None) -> list[Problem]:
        """Draw ``n`` problems (levels cycle through ``levels`` unless ``level`` is given)."""
        from icml25.core.validation import check_int

        n = check_int(n, "n", low=0)
        if level is not None:
            level = check_int(level, "level", low=1, high=6)
        return [self._one(level if level is not None else self.levels[i % len(self.levels)]) for i in range(n)]

    # -- construction ---------------------------------------------------------------------------------------
    def _one(self, level: int) -> Problem:
        for _ in range(200):
            p = self._try(level)
            if p is not None:
                return p
        raise RuntimeError(f"could not generate a level-{level} problem")  # pragma: no cover

    def _try(self, level: int) -> Problem | None:
        rng = self.rng
        names = list(NAMES)
        rng.shuffle(names)
        self._names = names
        self._defs: list[Op] = []
        self._values: dict[str, int] = {}
        self._tcount = 0
        use_indirect = self.indirect and level >= 5
        self._want_indirect = use_indirect
        try:
            final = self._build(level, top=True)
        except _Retry:
            return None
        item = rng.choice(ITEMS)
        defs = [self._with_text(d, item) for d in self._defs]
        distract: list[str] = []
        if self.distractors and level >= 3:
            for _ in range(rng.randint(0, 2)):
                name = self._names.pop()
                if rng.random() < 0.5:
                    v = rng.randint(2, 30)
                    d = Op(name, None, str(v), value=v)
                else:
                    src = rng.choice([x.target for x in defs if not x.indirect])
                    k = rng.randint(2, 9)
                    d = Op(name, "add", src, str(k), value=self._values[src] + k)
                self._values[name] = d.value
                distract.append(name)
                defs.append(self._with_text(d, item))
        order = self._order(defs, shuffle=self.shuffle and level >= 4)
        words = [w for d in order for w in d.sentence.split()]
        question = " ".join(words + ["How", "many", item, "does", final, "have", "?"])
        if question.count(" ") + 1 > 96:
            return None
        return Problem(question, str(self._values[final]), level, defs, final, dict(self._values), distract, item)

    def _order(self, defs: list[Op], shuffle: bool) -> list[Op]:
        if not shuffle:
            return defs
        done: set[str] = set()
        left, out = list(defs), []
        while left:
            ready = [d for d in left if all(o in done for o in d.operands)]
            d = self.rng.choice(ready)
            out.append(d)
            done.add(d.target)
            left.remove(d)
        return out

    def _new_base(self) -> str:
        name = self._names.pop()
        v = self.rng.randint(2, 30)
        self._values[name] = v
        self._defs.append(Op(name, None, str(v), value=v))
        return name

    def _build(self, n_ops: int, top: bool = False) -> str:
        rng = self.rng
        if n_ops == 0:
            return self._new_base()
        binary = n_ops >= 2 and rng.random() < 0.5
        if binary:
            n1 = rng.randint(0, n_ops - 1)
            a, b = self._build(n1), self._build(n_ops - 1 - n1)
            va, vb = self._values[a], self._values[b]
            kind = rng.choice(["add", "sub"]) if va != vb else "add"
            if kind == "sub" and va < vb:
                a, b, va, vb = b, a, vb, va
            val = va + vb if kind == "add" else va - vb
            indirect = self._want_indirect and kind == "add" and not top
            if indirect:
                self._want_indirect = False
                self._tcount += 1
                target = f"t{self._tcount}"
            else:
                target = self._names.pop()
            if val > 999:
                raise _Retry
            self._values[target] = val
            self._defs.append(Op(target, kind, a, b, value=val, indirect=indirect))
            return target
        src = self._build(n_ops - 1)
        v = self._values[src]
        kinds = ["add", "sub", "mul", "div"]
        rng.shuffle(kinds)
        for kind in kinds:
            if kind == "add":
                k = rng.randint(2, 9)
                val = v + k
            elif kind == "sub":
                if v < 3:
                    continue
                k = rng.randint(1, min(9, v - 1))
                val = v - k
            elif kind == "mul":
                k = rng.randint(2, 4)
                val = v * k
                if val > 999:
                    continue
            else:
                ks = [k for k in (2, 3, 4, 5) if v % k == 0 and v // k >= 1]
                if not ks:
                    continue
                k = rng.choice(ks)
                val = v // k
            target = self._names.pop()
            self._values[target] = val
            self._defs.append(Op(target, kind, src, str(k), value=val))
            return target
        raise _Retry

    def _with_text(self, d: Op, item: str) -> Op:
        ref = {x.target: ("the total from before" if x.indirect else x.target) for x in self._defs}
        a = ref.get(d.left, d.left)
        b = ref.get(d.right, d.right)
        if d.op is None:
            s = f"{d.target} has {d.value} {item} ."
            c = f"{d.target} has {d.value}"
        elif d.indirect:
            s = f"{a} and {b} put their {item} together ."
            c = f"{a} and {b} together"
        elif d.right.isdigit():
            phr = {"add": f"has {b} more than {a}", "sub": f"has {b} fewer than {a}",
                   "mul": f"has {b} times as many as {a}", "div": f"has {a} shared equally among {b}"}[d.op]
            s = f"{d.target} {phr} ."
            c = f"{d.target} {phr}"
        else:
            phr = {"add": f"has as many as {a} and {b} together",
                   "sub": f"has as many as {a} has more than {b}"}[d.op]
            s = f"{d.target} {phr} ."
            c = f"{d.target} {phr}"
        return Op(d.target, d.op, d.left, d.right, d.value, s, c, d.indirect)


class _Retry(Exception):
    pass


def _format() -> StepFormat:
    return StepFormat()


def step_is_consistent(problem: Problem, partial: str, step: str) -> bool:
    """Ground-truth step semantics: is ``step`` (after the solution prefix ``partial``) consistent with some
    correct continuation?

    A code step is consistent when its accumulated code runs and every quantity it has assigned so far holds
    its true value (``t`` variables: the value of some unnamed intermediate), and a print prints the answer; an
    answer step is consistent when its answer equals the gold answer.
    """
    from ..execution.code_executors import SafeArithExecutor
    from .step_format import OUTPUT, extract_boxed

    fmt = StepFormat()
    if "boxed" in step:
        return extract_boxed(step) == problem.answer
    text = partial + step
    cut = text.find(OUTPUT)
    code = fmt.code_of(text if cut < 0 else text[:cut])
    res = SafeArithExecutor(allow_float=False).run(code)
    if res.error is not None:
        return False
    if "print" in fmt.code_of(step):
        return res.stdout.strip() == problem.answer
    env = _assigned_values(code)
    indirect = {d.value for d in problem.defs if d.indirect}
    for name, v in env.items():
        if name in problem.values:
            if v != problem.values[name]:
                return False
        elif not (name.startswith("t") and v in indirect):
            return False
    return True


def _assigned_values(code: str) -> dict[str, int]:
    from ..execution.code_executors import SafeArithExecutor

    ex = SafeArithExecutor(allow_float=False)
    names = []
    for line in code.split("\n"):
        if "=" in line and not line.lstrip().startswith("#"):
            names.append(line.split("=")[0].strip())
    if not names:
        return {}
    res = ex.run(code + "\nprint(" + ", ".join(names) + ")")
    vals = res.stdout.split("\n")[-1].split() if res.error is None else []
    return {n: int(v) for n, v in zip(names, vals)}
