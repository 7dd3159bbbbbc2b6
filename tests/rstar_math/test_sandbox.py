"""The subprocess sandbox stops runaway, memory-hungry, networked, file-writing and os-importing code."""

import os
import time

import pytest

from icml25.rstar_math.domain.step_format import StepFormat
from icml25.rstar_math.execution.sandbox import SubprocessExecutor
from icml25.rstar_math.search.mcts import MCTS, MCTSConfig

SB = SubprocessExecutor(timeout_s=3, memory_mb=256, workers=2)


def test_ordinary_code_runs():
    r = SB.run("import math\nfrom fractions import Fraction\nprint(math.comb(5, 2), Fraction(1, 3) + Fraction(1, 6))")
    assert r.error is None and r.stdout == "10 1/2"


@pytest.mark.parametrize("code, kind", [
    ("import os\nos.system('echo hi')", "ImportError"),
    ("import subprocess", "ImportError"),
    ("import socket\ns = socket.socket()", "ImportError"),
    ("__import__('os')", "PermissionError"),
    ("open('/tmp/rstar_sandbox_escape.txt', 'w').write('x')", "PermissionError"),
    ("x = bytearray(10 * 1024 ** 3)", "MemoryError"),
    ("1 / 0", "ZeroDivisionError"),
])
def test_dangerous_code_is_stopped_and_reported(code, kind):
    r = SB.run(code)
    assert r.error is not None and r.error.startswith(kind), r
    assert r.is_error
    assert not os.path.exists("/tmp/rstar_sandbox_escape.txt")


def test_infinite_loop_is_killed_on_time():
    t = time.perf_counter()
    r = SB.run("while True:\n    pass")
    assert r.timed_out and r.is_error
    assert time.perf_counter() - t < 10


def test_writing_inside_the_temp_dir_is_allowed():
    r = SB.run("with open('notes.txt', 'w') as f:\n    f.write('ok')\nprint(open('notes.txt').read())")
    assert r.error is None and r.stdout == "ok"


def test_run_many_keeps_order():
    res = SB.run_many(["print(1)", "print(2)", "import os"])
    assert [r.stdout for r in res[:2]] == ["1", "2"] and res[2].error.startswith("ImportError")


class _BadPolicy:
    def sample_steps(self, prompts, n=1, temperature=1.0, stop=None, max_tokens=64, seed=None):
        return [["<code>\nwhile True:\n    pass\n<end_of_step>", "<code>\nimport os\n<end_of_step>",
                 "<code>\nx = 6 * 7\nprint(x)\n<end_of_code>"] if "<end_of_code>" not in p else
                 ["<answer>\\boxed{42}<end_of_answer>"] for p in prompts]


def test_search_goes_on_after_failed_steps():
    fmt = StepFormat.official()
    cfg = MCTSConfig(n_candidates=3, rollouts=2, errors_threshold=1)
    (t,) = MCTS(_BadPolicy(), SubprocessExecutor(timeout_s=2, memory_mb=256), config=cfg, fmt=fmt).search(
        [("What is 6 times 7?", "42")])
    kids = t.root.children
    assert kids[0].timed_out and kids[0].reason == "too_many_code_errors"
    assert kids[1].reason == "too_many_code_errors" and "ImportError" in kids[1].observation
    assert t.solved()


def test_runtime_guards_hold_without_the_static_check():
    class NoStatic(SubprocessExecutor):
        def static_check(self, code):
            return None

    sb = NoStatic(timeout_s=3, memory_mb=256)
    assert sb.run("import os").error.startswith("ImportError")
    assert sb.run("import sympy\nprint(sympy.Integer(3) + 4)").stdout == "7"  # libraries' own imports still work
    assert sb.run("open('../escape.txt', 'w')").error.startswith("PermissionError")
