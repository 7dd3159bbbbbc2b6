"""The abstraction sandbox: good code accepted, importing / raising / non-deterministic / unsafe code rejected."""

from __future__ import annotations

import pytest

from icml25.teduo import (
    AbstractionError,
    RuleBackend,
    SymbolicState,
    compile_abstraction,
    extract_code,
    relative_position,
    template_abstraction_code,
)
from icml25.teduo.babyai import front_cell
from icml25.teduo.labeling import Abstractor

S = [SymbolicState(2, 2, d, c, (("red", "key", 4, 2), ("red", "key", 2, 3), ("blue", "ball", 3, 2)))
     for d in range(4) for c in (None, ("blue", "box"))]
G = "go to the red key"


@pytest.mark.parametrize("code, reason", [
    ("import os\ndef abstract(state):\n    return 1", "imports"),
    ("from random import random\ndef abstract(state):\n    return random()", "imports"),
    ("def abstract(state):\n    return 1 / 0", "raised ZeroDivisionError"),
    ("def abstract(state, _c=[0]):\n    _c[0] += 1\n    return _c[0]", "non-deterministic"),
    ("def abstract(state):\n    return [state.x]", "unhashable"),
    ("def abstract(state):\n    return hash(state)", "forbidden name 'hash'"),
    ("def abstract(state):\n    return open('/etc/passwd').read()", "forbidden name 'open'"),
    ("def abstract(state):\n    return state.__class__", "private attribute"),
    ("def abstract(state):\n    while True:\n        pass", "While"),
    ("def abstract(state):\n    return __import__('os')", "forbidden name"),
    ("def f(state):\n    return 1", "no top-level function abstract"),
    ("def abstract(state:\n", "does not parse"),
    ("x = undefined_name\ndef abstract(state):\n    return 1", "raised NameError"),
])
def test_rejected(code: str, reason: str) -> None:
    with pytest.raises(AbstractionError, match=reason):
        compile_abstraction(code, G, S)


def test_template_matches_brute_force() -> None:
    """A1 from the template equals a direct computation (nearest target in the agent frame, ahead blocked, flags)."""
    f = compile_abstraction(template_abstraction_code(G), G, S, origin="template")
    for s in S:
        rel = sorted((abs(a) + abs(b), -a, b) for a, b in
                     (relative_position(s, x, y) for c, t, x, y in s.objects if (c, t) == ("red", "key")))
        fx, fy = front_cell(s)
        blocked = not (1 <= fx <= 6 and 1 <= fy <= 6) or any(
            (x, y) == (fx, fy) and (c, t) != ("red", "key") for c, t, x, y in s.objects)
        assert f(s) == ((-rel[0][1], rel[0][2]), blocked, False, s.carrying is not None)


def test_template_absent_object_is_none() -> None:
    f = compile_abstraction(template_abstraction_code("go to the grey box"), "go to the grey box", S)
    assert all(f(s) is None for s in S)


def test_abstractor_falls_back_to_identity_with_reason() -> None:
    class Bad(RuleBackend):
        def abstraction_code(self, goal: str) -> str:
            return "import os\ndef abstract(state):\n    return 1"

    fn = Abstractor(Bad()).build(G, S)
    assert fn.origin == "identity" and "imports" in fn.rejection and fn(S[0]) == S[0]


def test_extract_code_from_chatty_reply() -> None:
    reply = "Sure! Here it is:\n```python\ndef abstract(state):\n    return state.x\n```\nHope it helps."
    assert extract_code(reply) == "def abstract(state):\n    return state.x\n"
    assert extract_code("I cannot do that.") is None
