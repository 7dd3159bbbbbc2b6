"""Goal-specific state abstraction functions F(.; g) written as code (TEDUO §4.1, step 1a), run in a sandbox.

An annotator (an LLM, or the rule-based template writer) returns Python source defining ``abstract(state)``. The
source is checked statically (no imports, no dunder or private attributes, no ``while`` loops, no access to
``eval``/``exec``/``open``/``hash``/``id``/...), executed with a whitelist of builtins only, and validated on sample
states: it must not raise, must return hashable values and must be deterministic (two calls on every sample state
give equal results). Code that fails is rejected with an :class:`AbstractionError` saying why.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .babyai import ROOM, SymbolicState, parse_goal

__all__ = ["AbstractionError", "AbstractionFn", "compile_abstraction", "template_abstraction_code",
           "identity_abstraction", "STATE_FORMAT"]

#: what an abstraction writer is told about the state argument
STATE_FORMAT = (
    "`state` has fields: state.x, state.y (agent cell, 1..6 in an 8x8 room whose border cells are walls), "
    "state.direction (0=east/+x, 1=south/+y, 2=west/-x, 3=north/-y), state.carrying ((colour, type) tuple or None), "
    "state.objects (tuple of (colour, type, x, y) tuples of the objects on the floor).")

_SAFE_BUILTINS = ("abs", "all", "any", "bool", "dict", "divmod", "enumerate", "float", "frozenset", "int",
                  "isinstance", "len", "list", "max", "min", "range", "reversed", "round", "set", "sorted", "str",
                  "sum", "tuple", "zip", "None", "True", "False")
_BANNED_NAMES = {"eval", "exec", "compile", "open", "input", "globals", "locals", "vars", "getattr", "setattr",
                 "delattr", "hash", "id", "breakpoint", "memoryview", "object", "type", "super", "help", "exit",
                 "quit", "print", "random", "time", "os", "sys"}


class AbstractionError(ValueError):
    """Generated abstraction code was rejected (the message says why)."""


@dataclass
class AbstractionFn:
    """A validated abstraction function F(.; g): ``fn(state) -> hashable`` (``None`` = goal object absent).

    Attributes
    ----------
    goal : str
    code : str
        The source that defined it (empty for the identity fallback).
    origin : str
        ``"template"``, ``"llm"`` or ``"identity"``.
    rejection : str
        Why a written function was rejected and the identity used instead (empty otherwise).
    """

    goal: str
    code: str
    origin: str
    fn: Any
    rejection: str = ""

    def __call__(self, state: SymbolicState) -> Any:
        return self.fn(state)


def _check_ast(code: str, name: str) -> ast.Module:
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise AbstractionError(f"abstraction code does not parse: {e.msg} (line {e.lineno})") from None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            raise AbstractionError(f"abstraction code imports a module (line {node.lineno}); imports are not allowed")
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            raise AbstractionError(f"abstraction code uses global/nonlocal state (line {node.lineno})")
        if isinstance(node, (ast.While, ast.AsyncFunctionDef, ast.Await, ast.Yield, ast.YieldFrom)):
            raise AbstractionError(f"abstraction code uses {type(node).__name__} (line {node.lineno}), which is not "
                                   "allowed (unbounded loops, async and generators are rejected)")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise AbstractionError(f"abstraction code accesses the private attribute {node.attr!r} "
                                   f"(line {node.lineno})")
        if isinstance(node, ast.Name) and (node.id.startswith("__") or node.id in _BANNED_NAMES):
            raise AbstractionError(f"abstraction code uses the forbidden name {node.id!r} (line {node.lineno})")
    if not any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body):
        raise AbstractionError(f"abstraction code defines no top-level function {name}(state)")
    return tree


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def compile_abstraction(code: str, goal: str, sample_states: Sequence[SymbolicState], name: str = "abstract",
                        origin: str = "llm") -> AbstractionFn:
    """Check, execute in a restricted namespace, and validate generated abstraction code.

    Parameters
    ----------
    code : str
        Python source defining ``<name>(state)``.
    goal : str
        The goal the function is for.
    sample_states : sequence of SymbolicState
        States the function is run on (twice each) to check that it neither raises nor is non-deterministic and
        returns hashable values.
    name : str
        The function's name.
    origin : str
        Recorded on the result (``"llm"`` or ``"template"``).

    Returns
    -------
    AbstractionFn

    Raises
    ------
    AbstractionError
        With the reason: parse error, import, forbidden name, exception on a sample state, unhashable output,
        non-deterministic output.

    Examples
    --------
    >>> s = SymbolicState(1, 1, 0, None, (("red", "key", 3, 1),))
    >>> f = compile_abstraction("def abstract(state):\\n    return (state.x, state.y)", "go to the red key", [s])
    >>> f(s)
    (1, 1)
    >>> compile_abstraction("import random\\ndef abstract(state):\\n    return 1", "go to the red key", [s])
    Traceback (most recent call last):
    ...
    icml25.teduo.abstraction.AbstractionError: abstraction code imports a module (line 1); imports are not allowed
    """
    if not isinstance(code, str) or not code.strip():
        raise AbstractionError(f"code must be a non-empty string of Python source, got {code!r:.60}")
    parse_goal(goal)
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a Python identifier (the function's name), got {name!r}")
    if len(sample_states) == 0:
        raise ValueError("sample_states must hold at least one state to validate the abstraction on")
    tree = _check_ast(code, name)
    namespace: dict[str, Any] = {"__builtins__": {k: getattr(builtins, k) for k in _SAFE_BUILTINS}}
    try:
        exec(compile(tree, f"<abstraction for {goal!r}>", "exec"), namespace)  # noqa: S102 (checked source)
    except Exception as e:  # noqa: BLE001 (any failure of generated code is a rejection)
        raise AbstractionError(f"abstraction code raised {type(e).__name__}: {e} when defined") from None
    fn = namespace[name]
    for s in sample_states:
        try:
            a, b = fn(s), fn(s)
        except Exception as e:  # noqa: BLE001
            raise AbstractionError(f"abstraction code raised {type(e).__name__}: {e} on a sample state") from None
        if not _hashable(a):
            raise AbstractionError(f"abstraction code returned an unhashable {type(a).__name__}; return a tuple")
        if a != b:
            raise AbstractionError("abstraction code is non-deterministic: two calls on the same state returned "
                                   f"{a!r} and {b!r}")
    return AbstractionFn(goal, code, origin, fn)


def identity_abstraction(goal: str, rejection: str = "") -> AbstractionFn:
    """The fallback F(s; g) = s (no abstraction), recording why a written function was rejected."""
    g = parse_goal(goal)

    def present(s: SymbolicState) -> Any:
        ok = s.carrying == (g.colour, g.type) or any(c == g.colour and t == g.type for c, t, _, _ in s.objects)
        return s if ok else None

    return AbstractionFn(g.text, "", "identity", present, rejection)


def template_abstraction_code(goal: str) -> str:
    """The rule-based writer's code for A1 (spec §6): target position in the agent's frame (``None`` once carried),
    cell ahead blocked (wall or non-target object), target carried, anything carried; ``None`` when the target
    object is not in the room.

    Examples
    --------
    >>> "def abstract(state)" in template_abstraction_code("pick up the red key")
    True
    """
    g = parse_goal(goal)
    c, t, hi = g.colour, g.type, ROOM - 2
    return f'''def abstract(state):
    dx, dy = ((1, 0), (0, 1), (-1, 0), (0, -1))[state.direction]
    carried = state.carrying == ("{c}", "{t}")
    best = None
    for colour, kind, x, y in state.objects:
        if colour == "{c}" and kind == "{t}":
            f = (x - state.x) * dx + (y - state.y) * dy
            r = (x - state.x) * (-dy) + (y - state.y) * dx
            key = (abs(f) + abs(r), -f, r)
            if best is None or key < best:
                best = key
    if best is None and not carried:
        return None
    target = None if best is None else (-best[1], best[2])
    fx, fy = state.x + dx, state.y + dy
    wall = not (1 <= fx <= {hi} and 1 <= fy <= {hi})
    other = any(x == fx and y == fy and (colour, kind) != ("{c}", "{t}") for colour, kind, x, y in state.objects)
    return (target, wall or other, carried, state.carrying is not None)
'''
