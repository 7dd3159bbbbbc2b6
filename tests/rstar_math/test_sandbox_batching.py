"""MCTS runs one wave's step programs together (``run_many``) and builds exactly the tree of serial execution."""

import zlib

import numpy as np
import pytest

from icml25.rstar_math.domain.step_format import StepFormat
from icml25.rstar_math.execution.code_executors import SafeArithExecutor
from icml25.rstar_math.execution.sandbox import SandboxUnavailableError, SubprocessExecutor
from icml25.rstar_math.search.mcts import MCTS, MCTSConfig


class _CodePolicy:
    """Seeded code steps (one raises, one closes the block) and, from depth 2, a boxed answer."""

    def sample_steps(self, prompts, n=1, temperature=1.0, stop=None, max_tokens=64, seed=None):
        out = []
        for p in prompts:
            rng = np.random.default_rng([int(seed or 0), zlib.crc32(p.encode())])
            depth = p.count("<end_of_step>") + p.count("<end_of_code>")
            cands = []
            for j in range(n):
                a, b = (int(v) for v in rng.integers(2, 30, size=2))
                if depth >= 2 and j == 0:
                    cands.append(f"<answer>\\boxed{{{a * b % 7}}}<end_of_answer>")
                elif j == 1:
                    cands.append(f"<code>\nz = {a} // 0\n<end_of_step>")
                else:
                    cands.append(f"<code>\nx = {a} * {b}\nprint(x)\n" + ("<end_of_code>" if j == n - 1 else
                                                                         "<end_of_step>"))
            out.append(cands)
        return out


class _RecordingExecutor:
    """SafeArith with ``run_many`` that records the batch sizes MCTS hands it."""

    def __init__(self):
        self.inner, self.batches = SafeArithExecutor(), []

    def run(self, code):
        return self.inner.run(code)

    def run_many(self, codes):
        self.batches.append(len(codes))
        return [self.inner.run(c) for c in codes]


class _OnlyRun:
    def __init__(self, ex):
        self.ex, self.calls = ex, 0

    def run(self, code):
        self.calls += 1
        return self.ex.run(code)


def _sig(trees):
    return [[(n.text, n.observation, n.reason, round(n.Q, 12), n.N) for n in t.nodes()] for t in trees]


PROBLEMS = [(f"Problem {i}", str(i % 7)) for i in range(3)]
CFG = MCTSConfig(n_candidates=3, rollouts=2, max_depth=5, errors_threshold=2, seed=3)


def test_one_call_per_wave_and_same_tree_as_serial():
    fmt = StepFormat.official()
    rec = _RecordingExecutor()
    trees_batched = MCTS(_CodePolicy(), rec, config=CFG, fmt=fmt).search(PROBLEMS)
    serial = _OnlyRun(SafeArithExecutor())
    trees_serial = MCTS(_CodePolicy(), serial, config=CFG, fmt=fmt).search(PROBLEMS)
    assert _sig(trees_batched) == _sig(trees_serial)
    assert sum(rec.batches) == serial.calls and max(rec.batches) > 3  # programs of several trees per call
    assert any("ZeroDivisionError" in n.observation for t in trees_serial for n in t.nodes())


def test_sandbox_pool_builds_the_same_tree_as_serial_sandbox_runs():
    fmt = StepFormat.official()
    cfg = MCTSConfig(n_candidates=3, rollouts=1, max_depth=4, errors_threshold=2, seed=3)
    pooled = MCTS(_CodePolicy(), SubprocessExecutor(timeout_s=5, workers=3), config=cfg, fmt=fmt).search(
        PROBLEMS[:2])
    serial = MCTS(_CodePolicy(), _OnlyRun(SubprocessExecutor(timeout_s=5)), config=cfg, fmt=fmt).search(
        PROBLEMS[:2])
    assert _sig(pooled) == _sig(serial)


def test_a_failing_run_many_falls_back_to_single_runs_and_a_strict_refusal_stops_the_search():
    class Flaky(_RecordingExecutor):
        def run_many(self, codes):
            raise RuntimeError("pool broke")

    fmt = StepFormat.official()
    trees = MCTS(_CodePolicy(), Flaky(), config=CFG, fmt=fmt).search(PROBLEMS)
    ref = MCTS(_CodePolicy(), _OnlyRun(SafeArithExecutor()), config=CFG, fmt=fmt).search(PROBLEMS)
    assert _sig(trees) == _sig(ref)

    class Refusing(_RecordingExecutor):
        def run(self, code):
            raise SandboxUnavailableError("strict sandbox refused to run: missing namespaces")

        run_many = None

    with pytest.raises(SandboxUnavailableError):
        MCTS(_CodePolicy(), Refusing(), config=CFG, fmt=fmt).search(PROBLEMS)

    class Crashing(_RecordingExecutor):
        def run(self, code):
            raise OSError("disk full")

        run_many = None

    (t, *_) = MCTS(_CodePolicy(), Crashing(), config=CFG, fmt=fmt).search(PROBLEMS)
    obs = [n.observation for n in t.nodes() if n.code]
    assert obs and all(o == "OSError: disk full" for o in obs)
