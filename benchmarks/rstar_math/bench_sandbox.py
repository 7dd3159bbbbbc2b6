"""Sandboxed code execution: serial (one child after another, as MCTS did before issue 33) vs pooled.

Two measurements in the same run, same machine load:

1. raw: ``n_programs`` GSM8K-style step programs, ``executor.run`` in a loop vs ``executor.run_many`` (a pool
   of ``workers`` concurrent sandboxed children);
2. MCTS: the same seeded search (a scripted policy that writes arithmetic code steps, some failing, some
   importing sympy) with an executor that only offers ``run`` (serial) vs the pooled executor; the two searches
   must build identical trees (same texts, observations and values), so the speed-up costs nothing.

A third timing runs the same search with the pre-issue-33 executor (Python-level filter, serial), the speed
baseline the pooled OS sandbox must match. Prints executions/s for each and the ratios. Run:
``PYTHONPATH=src .venv/bin/python benchmarks/rstar_math/bench_sandbox.py [--workers 4] [--problems 6]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
import zlib

import numpy as np
from tqdm import tqdm

from icml25.rstar_math import MCTS, MCTSConfig, StepFormat
from icml25.rstar_math.execution.code_executors import ExecResult
from icml25.rstar_math.execution.sandbox import DEFAULT_ALLOWED_IMPORTS, SubprocessExecutor, sandbox_support

# The executor MCTS used before issue 33 (a Python-level filter in a plain subprocess, run serially), kept here
# only as the speed baseline: it is escapable (see the README's security section).
_LEGACY_WRAPPER = r'''
import builtins, os, sys, resource
mem, cpu, fsize = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
allowed = set(sys.argv[4].split(",")) if sys.argv[4] else set()
resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
try:
    import socket
    def _no_net(*a, **k):
        raise PermissionError("network access is disabled in the sandbox")
    socket.socket = _no_net
    socket.create_connection = _no_net
except Exception:
    pass
_root = os.path.realpath(os.getcwd())
_real_open, _real_import = builtins.open, builtins.__import__
def _open(file, mode="r", *a, **k):
    p = os.path.realpath(os.path.join(_root, os.fspath(file)))
    if not (p == _root or p.startswith(_root + os.sep)):
        raise PermissionError(f"writing or reading outside the sandbox directory is not allowed: {file}")
    return _real_open(p, mode, *a, **k)
def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if (globals or {}).get("__name__") == "__sandbox__" and name.split(".")[0] not in allowed:
        raise ImportError(f"import of {name!r} is not allowed in the sandbox")
    return _real_import(name, globals, locals, fromlist, level)
code = sys.stdin.read()
builtins.__import__ = _import
builtins.open = _open
ns = {"__name__": "__sandbox__", "__builtins__": builtins}
try:
    exec(compile(code, "<step>", "exec"), ns)
except BaseException as e:
    sys.stdout.flush()
    sys.stderr.write("\n__SANDBOX_ERROR__" + type(e).__name__ + ": " + str(e).replace("\n", " ")[:500])
    sys.exit(1)
'''


class LegacyFilterExecutor:
    """Pre-issue-33 execution path: one ``python -I`` child per step with the Python-level filter, serial."""

    def __init__(self, timeout_s: float = 10.0, memory_mb: int = 512) -> None:
        self.timeout_s, self.memory_mb, self.calls = timeout_s, memory_mb, 0
        self.static = SubprocessExecutor(timeout_s=timeout_s)

    def run(self, code: str) -> ExecResult:
        self.calls += 1
        bad = self.static.static_check(code)
        if bad is not None:
            return ExecResult(error=bad)
        args = [sys.executable, "-I", "-c", _LEGACY_WRAPPER, str(self.memory_mb << 20), str(int(self.timeout_s) + 1),
                str(16 << 20), ",".join(DEFAULT_ALLOWED_IMPORTS)]
        with tempfile.TemporaryDirectory(prefix="rstar_legacy_") as tmp:
            proc = subprocess.Popen(args, cwd=tmp, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin", "HOME": tmp},
                                    start_new_session=True, text=True)
            out, err = proc.communicate(code, timeout=self.timeout_s)
        out = out[:2000].rstrip()
        if proc.returncode != 0:
            return ExecResult(stdout=out, error=err.rsplit("__SANDBOX_ERROR__", 1)[-1].strip() or "RuntimeError")
        return ExecResult(stdout=out)


def program(rng: np.random.Generator, i: int) -> str:
    """One GSM8K-style step program (some use sympy/fractions, one in ten raises)."""
    a, b = (int(v) for v in rng.integers(2, 99, size=2))
    kind = i % 10
    if kind == 9:
        return f"x = {a} / 0"
    if kind == 3:
        return f"import sympy\nx = sympy.Rational({a}, {b}) + 1\nprint(x)"
    if kind == 5:
        return f"from fractions import Fraction\nprint(Fraction({a}, {b}) * 3)"
    return f"x = {a} * {b}\ny = x - {b}\nprint(y)"


class ScriptedCodePolicy:
    """Deterministic policy: code steps (one closes the block) and, deeper, a boxed answer."""

    def sample_steps(self, prompts, n=1, temperature=1.0, stop=None, max_tokens=64, seed=None):
        out = []
        for p in prompts:
            rng = np.random.default_rng([int(seed or 0), zlib.crc32(p.encode())])
            depth = p.count("<end_of_step>") + p.count("<end_of_code>")
            cands = []
            for j in range(n):
                if depth >= 3 and j == 0:
                    cands.append(f"<answer>\\boxed{{{int(rng.integers(0, 50))}}}<end_of_answer>")
                    continue
                body = program(rng, int(rng.integers(0, 10)))
                end = "<end_of_code>" if j == n - 1 else "<end_of_step>"
                cands.append(f"<code>\n{body}\n{end}")
            out.append(cands)
        return out


class SerialOnly:
    """Hides ``run_many``: MCTS then executes one step program after another (the pre-issue-33 path)."""

    def __init__(self, ex: SubprocessExecutor) -> None:
        self.ex, self.calls = ex, 0

    def run(self, code: str):
        self.calls += 1
        return self.ex.run(code)


class CountingPool(SubprocessExecutor):
    """The pooled executor, counting executions."""

    calls = 0
    _lock = threading.Lock()

    def run(self, code: str):
        with self._lock:
            type(self).calls += 1
        return super().run(code)


def tree_signature(trees) -> list:
    return [[(n.text, n.observation, round(n.Q, 9), n.N) for n in t.nodes()] for t in trees]


def main(n_programs: int = 48, workers: int = 4, problems: int = 6, rollouts: int = 2, seed: int = 0) -> dict:
    sup = sandbox_support()
    print(f"sandbox: namespaces={sup.namespaces} privilege_drop={sup.privilege_drop} missing={list(sup.missing)}")
    rng = np.random.default_rng(seed)
    codes = [program(rng, i) for i in range(n_programs)]
    ex = SubprocessExecutor(timeout_s=10, workers=workers)
    ex.run("print(1)")  # warm the probe and the page cache

    t = time.perf_counter()
    serial = [ex.run(c) for c in tqdm(codes, desc="raw serial", leave=False)]
    dt_serial = time.perf_counter() - t
    t = time.perf_counter()
    pooled = ex.run_many(codes)
    dt_pooled = time.perf_counter() - t
    assert serial == pooled, "pooled results differ from serial results"
    res = {"raw_serial_exec_per_s": n_programs / dt_serial, "raw_pooled_exec_per_s": n_programs / dt_pooled}

    fmt = StepFormat.official()
    cfg = MCTSConfig(n_candidates=4, rollouts=rollouts, max_depth=6, errors_threshold=2, seed=seed)
    qs = [(f"Problem {i}: compute something.", str(i)) for i in range(problems)]
    leg = LegacyFilterExecutor(timeout_s=10)
    t = time.perf_counter()
    MCTS(ScriptedCodePolicy(), leg, config=cfg, fmt=fmt).search(qs)
    dt_leg = time.perf_counter() - t
    ser = SerialOnly(SubprocessExecutor(timeout_s=10, workers=workers))
    t = time.perf_counter()
    trees_s = MCTS(ScriptedCodePolicy(), ser, config=cfg, fmt=fmt).search(qs)
    dt_ms = time.perf_counter() - t
    pool = CountingPool(timeout_s=10, workers=workers)
    t = time.perf_counter()
    trees_p = MCTS(ScriptedCodePolicy(), pool, config=cfg, fmt=fmt).search(qs)
    dt_mp = time.perf_counter() - t
    assert tree_signature(trees_s) == tree_signature(trees_p), "pooled MCTS built a different tree"
    assert ser.calls == CountingPool.calls
    res.update(mcts_legacy_serial_exec_per_s=leg.calls / dt_leg, mcts_legacy_serial_s=dt_leg)
    res.update(mcts_executions=ser.calls, mcts_serial_exec_per_s=ser.calls / dt_ms,
               mcts_pooled_exec_per_s=CountingPool.calls / dt_mp, mcts_serial_s=dt_ms, mcts_pooled_s=dt_mp)
    print(f"raw  ({n_programs} programs, {workers} workers): serial {res['raw_serial_exec_per_s']:.1f} exec/s, "
          f"pooled {res['raw_pooled_exec_per_s']:.1f} exec/s, ratio "
          f"{res['raw_pooled_exec_per_s'] / res['raw_serial_exec_per_s']:.2f}x")
    print(f"MCTS ({problems} problems x {rollouts} rollouts, {ser.calls} executions, identical trees): serial "
          f"{res['mcts_serial_exec_per_s']:.1f} exec/s ({dt_ms:.1f} s), pooled {res['mcts_pooled_exec_per_s']:.1f} "
          f"exec/s ({dt_mp:.1f} s), ratio {res['mcts_pooled_exec_per_s'] / res['mcts_serial_exec_per_s']:.2f}x")
    print(f"MCTS with the pre-issue-33 executor (Python filter, serial): {res['mcts_legacy_serial_exec_per_s']:.1f} "
          f"exec/s ({dt_leg:.1f} s); pooled OS sandbox / legacy serial = "
          f"{res['mcts_pooled_exec_per_s'] / res['mcts_legacy_serial_exec_per_s']:.2f}x")
    return res


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=48)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--problems", type=int, default=6)
    ap.add_argument("--rollouts", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    main(a.programs, a.workers, a.problems, a.rollouts, a.seed)
