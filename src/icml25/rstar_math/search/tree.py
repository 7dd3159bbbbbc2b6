"""Search-tree nodes, the UCT rule and Q-value back-up of rStar-Math (spec §2.1, §2.3, §2.5).

Trees serialise to JSON in the manner of the official node dump (``tag``, ``text``, ``q_value``,
``visit_count``, ``value`` plus the fields needed to resume a search).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from icml25.core.validation import check_option, check_real

__all__ = ["Node", "Tree", "uct_score", "select_child", "update", "update_recursive",
           "TOO_MANY_CODE_ERRORS", "TOO_MANY_STEPS", "NO_VALID_CHILD", "FAILURE_REASONS"]

TOO_MANY_CODE_ERRORS = "too_many_code_errors"
TOO_MANY_STEPS = "too_many_steps"
NO_VALID_CHILD = "no_valid_child"
FAILURE_REASONS = (TOO_MANY_CODE_ERRORS, TOO_MANY_STEPS, NO_VALID_CHILD)


@dataclass(eq=False)
class Node:
    """One step of a search tree.

    Attributes
    ----------
    text : str
        The step text (with ``<output>...<end_of_output>`` appended when it closes a code block).
    N, W : float
        Visit count and sum of backed-up values; ``Q = W / N`` (0 when ``N = 0``).
    v0 : float or None
        First value ever assigned (official ``value``).
    depth : int
        Root has depth 0.
    errors : int
        Consecutive code-error count along the path.
    terminal : bool
        Terminal flag (answer node, failure terminal, or all children terminal).
    answer : str or None
        Parsed final answer of an answer node.
    reason : str or None
        Failure reason (one of ``FAILURE_REASONS``) for failure terminals.
    correct : bool or None
        For answer nodes scored against a gold answer: whether the answer is equivalent.
    code : str
        The step's executable code; ``observation`` the executor output; ``timed_out`` the executor flag.
    n_local, n_origin : int
        Updates applied to this node only (failure value, PPM prior) / back-ups that started here (audit).
    """

    text: str = ""
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    N: float = 0
    W: float = 0.0
    v0: float | None = None
    depth: int = 0
    errors: int = 0
    terminal: bool = False
    answer: str | None = None
    reason: str | None = None
    correct: bool | None = None
    code: str = ""
    observation: str = ""
    timed_out: bool = False
    closes_block: bool = False
    n_local: int = 0
    n_origin: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"text must be a string, got {type(self.text).__name__}")
        check_real(self.N, "N", low=0.0)
        check_real(self.W, "W")

    @property
    def Q(self) -> float:  # noqa: N802 - paper notation
        """Mean backed-up value ``W / N`` (0 when unvisited)."""
        return self.W / self.N if self.N > 0 else 0.0

    @property
    def is_answer(self) -> bool:
        """A valid answer node (terminal with a parsed answer, not a failure)."""
        return self.terminal and self.answer is not None and self.reason is None

    def path(self) -> list[Node]:
        """Nodes from the first step (root excluded) down to this node."""
        out, n = [], self
        while n.parent is not None:
            out.append(n)
            n = n.parent
        return out[::-1]

    def iter_subtree(self):
        """Depth-first iterator over this node and all descendants (creation order)."""
        stack = [self]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(n.children))


def update(node: Node, value: float) -> None:
    """``N += 1; W += value``; the first update also sets ``v0`` (spec §2.5)."""
    value = check_real(value, "value")
    if node.v0 is None:
        node.v0 = float(value)
    node.N += 1
    node.W += float(value)


def update_recursive(node: Node, value: float) -> None:
    """:func:`update` on ``node`` and every ancestor up to and including the root (spec §2.5)."""
    value = check_real(value, "value")
    node.n_origin += 1
    n: Node | None = node
    while n is not None:
        update(n, value)
        n = n.parent


def uct_score(node: Node, c: float = 2.0, unvisited_bonus: str = "zero") -> float:
    """``Q(s) + c sqrt(ln N(parent) / N(s))`` (spec §2.3).

    With ``unvisited_bonus="zero"`` (official rule) a child with ``N = 0`` or a parent with ``N = 0`` scores
    ``0`` (its Q is 0 and the exploration term is 0); with ``"infinite"`` an unvisited child scores ``+inf``
    (textbook UCT).

    Examples
    --------
    >>> root = Node(N=4)
    >>> child = Node(parent=root, N=2, W=1.0)
    >>> root.children.append(child)
    >>> round(uct_score(child, c=2.0), 4)  # 0.5 + 2 * sqrt(ln 4 / 2)
    2.1651
    >>> uct_score(Node(parent=root), c=2.0)  # unvisited child, official zero bonus
    0.0
    """
    c = check_real(c, "c", low=0.0)
    check_option(unvisited_bonus, "unvisited_bonus", ("zero", "infinite"))
    return _uct(node, c, unvisited_bonus)


def _uct(node: Node, c: float, unvisited_bonus: str) -> float:
    parent_n = node.parent.N if node.parent is not None else 0
    if node.N == 0:
        return math.inf if unvisited_bonus == "infinite" else 0.0
    if parent_n == 0:
        return node.Q
    return node.Q + c * math.sqrt(math.log(parent_n) / node.N) if parent_n > 0 else node.Q


def select_child(node: Node, c: float = 2.0, unvisited_bonus: str = "zero") -> Node | None:
    """Argmax-UCT over the non-terminal children (ties: first in creation order); None if all are terminal."""
    c = check_real(c, "c", low=0.0)
    check_option(unvisited_bonus, "unvisited_bonus", ("zero", "infinite"))
    best, best_s = None, -math.inf
    for ch in node.children:
        if ch.terminal:
            continue
        s = _uct(ch, c, unvisited_bonus)
        if s > best_s:
            best, best_s = ch, s
    return best


_FIELDS = ("text", "N", "W", "v0", "depth", "errors", "terminal", "answer", "reason", "correct", "code",
           "observation", "timed_out", "closes_block", "n_local", "n_origin")


@dataclass(eq=False)
class Tree:
    """A search tree for one problem: ``question``, ``gold`` answer (None at inference) and the ``root``."""

    question: str
    gold: str | None = None
    root: Node = field(default_factory=Node)
    meta: dict[str, Any] = field(default_factory=dict)
    rollouts_done: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.question, str) or not self.question.strip():
            raise (TypeError if not isinstance(self.question, str) else ValueError)(
                f"question must be a non-empty string, got {self.question!r}")

    def nodes(self) -> list[Node]:
        """All nodes, root first, depth-first creation order."""
        return list(self.root.iter_subtree())

    def leaves(self) -> list[Node]:
        """Terminal nodes and unexpanded leaves (root excluded)."""
        return [n for n in self.nodes() if not n.children and n.parent is not None]

    def trajectories(self) -> list[list[Node]]:
        """Root-to-leaf paths (root excluded) ending in a valid answer node."""
        return [n.path() for n in self.nodes() if n.is_answer]

    def solved(self) -> bool:
        """Whether any valid answer node is correct (MCTS coverage)."""
        return any(n.is_answer and n.correct for n in self.nodes())

    # -- serialisation --------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """Official-style node dump: ``{"question", "answer", "nodes": {tag: {...}}}`` with tags ``0.1.2``."""
        nodes: dict[str, Any] = {}

        def walk(n: Node, tag: str) -> None:
            d = {k: getattr(n, k) for k in _FIELDS}
            d.update(tag=tag, q_value=n.Q, visit_count=n.N, value=n.v0)
            nodes[tag] = d
            for i, ch in enumerate(n.children):
                walk(ch, f"{tag}.{i + 1}")

        walk(self.root, "0")
        return {"question": self.question, "answer": self.gold, "meta": self.meta,
                "rollouts_done": self.rollouts_done, "nodes": nodes}

    @classmethod
    def from_json(cls, data: dict[str, Any] | str) -> Tree:
        """Rebuild a tree written by :meth:`to_json` (search can resume from it)."""
        if isinstance(data, str):
            data = json.loads(data)
        if not isinstance(data, dict) or "nodes" not in data or "0" not in data["nodes"]:
            raise ValueError("tree JSON must be a dict with a 'nodes' mapping containing the root tag '0'")
        by_tag: dict[str, Node] = {}
        for tag in sorted(data["nodes"], key=lambda t: [int(x) for x in t.split(".")]):
            d = data["nodes"][tag]
            n = Node(**{k: d[k] for k in _FIELDS if k in d})
            if tag != "0":
                parent = by_tag[tag.rsplit(".", 1)[0]]
                n.parent = parent
                parent.children.append(n)
            by_tag[tag] = n
        return cls(data["question"], data.get("answer"), by_tag["0"], dict(data.get("meta", {})),
                   int(data.get("rollouts_done", 0)))


def check_invariants(tree: Tree) -> list[str]:
    """Audit a tree; returns the list of violated invariants (empty when all hold).

    Checked: ``N(s) = n_local(s) + R(s)`` with ``R(s) = n_origin(s) + Σ_children R(c)`` (every visit is
    accounted for by the children's back-ups or the node's own updates), ``Q ∈ [-1, 1]``, failure terminals
    have ``N = 1`` and ``W = -1``.
    """
    problems: list[str] = []

    def rec(n: Node) -> int:
        r = n.n_origin + sum(rec(c) for c in n.children)
        if n.parent is not None and n.N != n.n_local + r:
            problems.append(f"visit count of node at depth {n.depth}: N={n.N} != {n.n_local}+{r}")
        if not -1.0 - 1e-9 <= n.Q <= 1.0 + 1e-9:
            problems.append(f"Q out of range: {n.Q}")
        if n.reason in FAILURE_REASONS and (n.N != 1 or n.W != -1):
            problems.append(f"failure terminal with N={n.N}, W={n.W}")
        return r

    r_root = rec(tree.root)
    if tree.root.N != r_root + tree.root.n_local:
        problems.append(f"root N={tree.root.N} != {r_root}")
    return problems
