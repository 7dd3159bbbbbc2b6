"""Training-data extraction from annotated trees (spec §2.6 SFT trajectories, §2.7 preference pairs), and the
rejection-sampling SFT baseline of the paper's Table 7 (random correct plain samples, no tree, no Q ranking).

Records are JSON-compatible with the official example files (``sft_data_examples.json``: ``query``/``response``;
``rm_data_examples.json``: ``prompt``/``pos``/``neg``/``pos_count``/``neg_count``) and convert to TRL's
``prompt``/``chosen``/``rejected`` columns.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from ..domain.step_format import OUTPUT, TAGS, StepFormat
from ..search.tree import Node, Tree

__all__ = ["SFTRecord", "PairRecord", "extract_sft", "extract_pairs", "filter_pairs", "final_answer_pairs",
           "edit_distance", "to_trl", "descendant_counts", "code_tokens", "EDIT_UNITS", "rejection_sampled_sft"]

#: units of the pair filter's edit distance: characters of the step text (official) or code tokens
EDIT_UNITS = ("char", "code_token")
_OUTPUT_BLOCK = re.compile(re.escape(OUTPUT) + r".*?(<end_of_output>|$)", re.S)


@dataclass
class SFTRecord:
    """One policy SFT example: ``query`` (question), ``response`` (full solution text), its avg/min Q."""

    query: str
    response: str
    avg_q: float
    min_q: float

    def __post_init__(self) -> None:
        from icml25.core.validation import check_real

        self.avg_q = check_real(self.avg_q, "avg_q")
        self.min_q = check_real(self.min_q, "min_q")

    def to_dict(self) -> dict:
        """Official-format dict (``query``, ``response``) plus the Q statistics."""
        return asdict(self)


@dataclass
class PairRecord:
    """One PPM preference pair: shared ``prompt`` (question + steps up to the parent), ``pos``/``neg`` step
    texts (whole responses for final-answer pairs), counts of positives/negatives chosen at the node, margin."""

    prompt: str
    pos: str
    neg: str
    pos_count: int
    neg_count: int
    margin: float
    kind: str = "step"  # "step" (sibling steps) or "final" (whole trajectories)

    def __post_init__(self) -> None:
        from icml25.core.validation import check_int, check_option, check_real

        self.pos_count = check_int(self.pos_count, "pos_count", low=1)
        self.neg_count = check_int(self.neg_count, "neg_count", low=1)
        self.margin = check_real(self.margin, "margin")
        check_option(self.kind, "kind", ("step", "final"))

    def to_dict(self) -> dict:
        """Official-format dict (``prompt``, ``pos``, ``neg``, ``pos_count``, ``neg_count``) plus extras."""
        return asdict(self)


def _avg_min_q(path: list[Node]) -> tuple[float, float]:
    qs = [n.Q for n in path]
    return sum(qs) / len(qs), min(qs)


def extract_sft(trees: list[Tree], top_k: int = 2, fmt: StepFormat | None = None) -> list[SFTRecord]:
    """Top-``top_k`` correct trajectories per tree ranked by ``(avg Q, min Q)`` descending (spec §2.6).

    Trajectories whose text contains "error" are dropped; trees without a correct trajectory give nothing.
    """
    from icml25.core.validation import check_int

    top_k = check_int(top_k, "top_k", low=1)
    out = []
    for t in trees:
        cands = []
        for path in t.trajectories():
            if not path[-1].correct:
                continue
            text = "".join(n.text for n in path)
            if "error" in text.lower():
                continue
            a, m = _avg_min_q(path)
            cands.append((a, m, text))
        cands.sort(key=lambda x: (-x[0], -x[1]))
        out += [SFTRecord(t.question, text, a, m) for a, m, text in cands[:top_k]]
    return out


def descendant_counts(tree: Tree) -> dict[int, tuple[int, int]]:
    """``id(node) -> (n_correct, n_wrong)``: valid answer terminals in the subtree with Q=+1 / Q=-1 (spec §2.7.1).

    A terminal answer counts as correct when it was checked correct (or, at inference, when Q > 0). Failure
    terminals (code errors, depth, unparsable) are never counted as wrong.
    """
    counts: dict[int, tuple[int, int]] = {}

    def rec(n: Node) -> tuple[int, int]:
        c = w = 0
        if n.is_answer:
            ok = n.correct if n.correct is not None else n.Q > 0
            c, w = (1, 0) if ok else (0, 1)
        for ch in n.children:
            a, b = rec(ch)
            c, w = c + a, w + b
        counts[id(n)] = (c, w)
        return c, w

    rec(tree.root)
    return counts


def _continuation_avg_q(node: Node, counts: dict[int, tuple[int, int]], best: bool) -> float:
    qs, n = [node.Q], node
    while n.children:
        cands = [c for c in n.children if counts[id(c)][0 if best else 1] > 0]
        if not cands:
            break
        n = max(cands, key=lambda c: c.Q) if best else min(cands, key=lambda c: c.Q)
        qs.append(n.Q)
    return sum(qs) / len(qs)


def extract_pairs(trees: list[Tree], min_margin: float = 0.5, min_edit: int = 20, include_final: bool = True,
                  fmt: StepFormat | None = None, edit_unit: str = "char") -> list[PairRecord]:
    """Preference pairs of spec §2.7: 2+2 / 1-vs-4 sibling pairs, continuation check, filters, final pairs.

    Parameters
    ----------
    trees : list of Tree
        Annotated search trees.
    min_margin : float
        Keep pairs with ``Q(pos) - Q(neg) >= min_margin`` (official 0.5; 0 keeps every ordered pair).
    min_edit : int
        Keep pairs whose step texts differ by at least this edit distance (official: 20 characters).
    include_final : bool
        Add final-answer pairs (whole trajectories, 2 best correct vs 2 worst wrong).
    fmt : StepFormat
        Prompt format for the shared prefix.
    edit_unit : str
        ``"char"`` (official: Levenshtein distance of the step texts) or ``"code_token"`` (of their
        :func:`code_tokens`: comments, tags and executor output dropped), see :func:`filter_pairs`.

    Returns
    -------
    list of PairRecord
    """
    from icml25.core.validation import check_int, check_option, check_real

    check_real(min_margin, "min_margin")
    check_int(min_edit, "min_edit", low=0)
    check_option(edit_unit, "edit_unit", EDIT_UNITS)
    fmt = fmt or StepFormat()
    raw: list[PairRecord] = []
    for t in trees:
        counts = descendant_counts(t)
        c_root, w_root = counts[id(t.root)]
        if c_root == 0 or w_root == 0:
            continue  # spec §2.7.6: all-correct or all-wrong problems carry no signal
        queue = deque([t.root])
        while queue:
            node = queue.popleft()
            queue.extend(node.children)
            c, w = counts[id(node)]
            if c == 0 or w == 0 or not node.children:
                continue
            all_pos = sorted([ch for ch in node.children if counts[id(ch)][0] > 0], key=lambda x: -x.Q)
            all_neg = sorted([ch for ch in node.children if counts[id(ch)][1] > 0], key=lambda x: x.Q)
            if not all_pos or not all_neg:
                continue
            pos = all_pos[:4] if len(all_neg) == 1 else all_pos[:2]
            neg = all_neg[:4] if len(all_pos) == 1 else all_neg[:2]
            prefix = fmt.prompt(t.question) + "".join(n.text for n in node.path())
            for p in pos:
                for q in neg:
                    if p is q or not p.Q - q.Q > 0:
                        continue
                    if not _continuation_avg_q(p, counts, True) > _continuation_avg_q(q, counts, False):
                        continue
                    raw.append(PairRecord(prefix, p.text, q.text, len(pos), len(neg), p.Q - q.Q))
        if include_final:
            raw += final_answer_pairs(t, fmt)
    return filter_pairs([r for r in raw if r.kind == "step"], min_margin, min_edit, edit_unit) + \
        [r for r in raw if r.kind == "final"]


def final_answer_pairs(tree: Tree, fmt: StepFormat | None = None) -> list[PairRecord]:
    """Whole-trajectory pairs: the 2 correct trajectories with highest avg Q vs the 2 wrong ones with lowest."""
    fmt = fmt or StepFormat()
    good, bad = [], []
    for path in tree.trajectories():
        a, _ = _avg_min_q(path)
        text = "".join(n.text for n in path)
        (good if path[-1].correct else bad).append((a, text))
    good.sort(key=lambda x: -x[0])
    bad.sort(key=lambda x: x[0])
    good, bad = good[:2], bad[:2]
    prefix = fmt.prompt(tree.question)
    return [PairRecord(prefix, g, b, len(good), len(bad), ga - ba, kind="final")
            for ga, g in good for ba, b in bad]


def filter_pairs(pairs: list[PairRecord], min_margin: float = 0.5, min_edit: int = 20,
                 edit_unit: str = "char") -> list[PairRecord]:
    """Official filter: ``margin >= min_margin`` and edit distance ``>= min_edit``.

    ``edit_unit="char"`` is the official character distance of the two step texts. Its purpose is to drop
    near-duplicate text, but in a domain of one-line steps it also drops the process errors themselves
    (``Bob = Ann + 3`` vs ``Bob = Ann - 3`` are 1 character apart). ``"code_token"`` measures the distance between
    the steps' :func:`code_tokens` instead: two steps whose code is the same (differing only in comments or
    spacing) have distance 0 and are dropped for any ``min_edit >= 1``; a changed operand or operator counts 1.
    """
    from icml25.core.validation import check_int, check_option, check_real

    min_margin = check_real(min_margin, "min_margin")
    min_edit = check_int(min_edit, "min_edit", low=0)
    check_option(edit_unit, "edit_unit", EDIT_UNITS)

    def dist(a: str, b: str) -> int:
        if edit_unit == "char":
            return edit_distance(a, b, cap=min_edit)
        return edit_distance(code_tokens(a), code_tokens(b), cap=min_edit)

    return [p for p in pairs if p.margin >= min_margin and (min_edit == 0 or dist(p.pos, p.neg) >= min_edit)]


def code_tokens(step: str) -> list[str]:
    """The code of a step as whitespace tokens: comment parts (``# ...`` to the end of a line), the
    ``<output>...<end_of_output>`` executor block and the rStar tags are dropped.

    Examples
    --------
    >>> code_tokens(" # Bob has 3 more than Ann \\n Bob = Ann + 3 <end_of_step>")
    ['Bob', '=', 'Ann', '+', '3']
    """
    from .._validation import check_text

    check_text(step, "step", allow_empty=True)
    tags = set(TAGS)
    out: list[str] = []
    for line in _OUTPUT_BLOCK.sub(" ", step).split("\n"):
        out += [w for w in line.split("#", 1)[0].split() if w not in tags]
    return out


def edit_distance(a: str | Sequence[str], b: str | Sequence[str], cap: int | None = None) -> int:
    """Levenshtein distance between two strings (character level) or two token lists; stops early once the
    length difference alone reaches ``cap``.

    Examples
    --------
    >>> edit_distance("kitten", "sitting")
    3
    >>> edit_distance("Bob = Ann + 3", "Bob = Ann - 3")
    1
    """
    from icml25.core.validation import check_int

    from .._validation import check_text

    if isinstance(a, str) or isinstance(b, str):
        check_text(a, "a", allow_empty=True)
        check_text(b, "b", allow_empty=True)
    elif not all(isinstance(x, str) for x in [*a, *b]):
        raise TypeError("a and b must both be strings or both be sequences of strings")
    if cap is not None:
        cap = check_int(cap, "cap", low=1)
    if len(a) < len(b):
        a, b = b, a
    if cap is not None and len(a) - len(b) >= cap:
        return len(a) - len(b)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    return prev[-1]


def to_trl(pairs: list[PairRecord]) -> list[dict]:
    """TRL ``RewardTrainer`` rows: ``{"prompt", "chosen", "rejected", "margin"}``."""
    return [{"prompt": p.prompt, "chosen": p.pos, "rejected": p.neg, "margin": p.margin} for p in pairs]


def rejection_sampled_sft(policy, executor, problems, n_target: int, samples: int = 16, per_problem: int = 2,
                          max_depth: int = 16, seed: int = 0, fmt: StepFormat | None = None,
                          errors_threshold: int = 1, max_tokens: int = 32) -> list[SFTRecord]:
    """SFT data by rejection sampling, the baseline of the paper's Table 7 ("random self-samples"): correct plain
    samples instead of Q-value-ranked verified trajectories.

    Draws ``samples`` independent chains per problem from ``policy`` at temperature 1 (seeded with ``seed``),
    keeps per problem up to ``per_problem`` random distinct correct ones whose text holds no "error" (the filter of
    :func:`extract_sft`), then ``n_target`` of all kept ones at random (all of them when fewer were found), in
    problem order.

    Parameters
    ----------
    policy : StepPolicy
        The generator (``sample_steps``).
    executor : CodeExecutor
        Runs every step's accumulated code.
    problems : list
        Problems with gold answers (objects with ``question``/``answer``, dicts or ``(question, answer)`` tuples).
    n_target : int
        Records to return at most (e.g. the size of the verified set it is compared with).
    samples, per_problem : int
        Plain samples per problem; correct samples kept per problem at most.
    max_depth, errors_threshold, max_tokens : int
        Chain limits of :func:`icml25.rstar_math.sample_chains`.
    seed : int
        Seeds the sampling and the random picks.
    fmt : StepFormat, optional
        Step format (default :class:`StepFormat`).

    Returns
    -------
    list of SFTRecord
        ``SFTRecord(question, response, 0.0, 0.0)`` (no Q-values: the samples come from no tree).
    """
    import numpy as np

    from icml25.core.validation import check_int

    from ..search.mcts import as_problem_list
    from .evaluation import sample_chains

    n_target = check_int(n_target, "n_target", low=1)
    samples = check_int(samples, "samples", low=1)
    per_problem = check_int(per_problem, "per_problem", low=1)
    check_int(seed, "seed", low=0)
    plist = as_problem_list(problems, need_answer=True)
    chains = sample_chains(policy, executor, problems, samples, 1.0, max_depth, errors_threshold, max_tokens,
                           seed=seed, fmt=fmt)
    rng = np.random.default_rng(seed)
    kept = []
    for (question, _), row in zip(plist, chains):
        texts = sorted({"".join(c.steps) for c in row if c.correct})
        texts = [t for t in texts if "error" not in t.lower()]  # the same filter as the verified extraction
        pick = rng.permutation(len(texts))[:per_problem]
        kept += [SFTRecord(question, texts[i], 0.0, 0.0) for i in pick]
    keep = rng.permutation(len(kept))[:n_target]
    return [kept[i] for i in sorted(keep)]
