"""A subprocess sandbox for model-written Python code (spec §2.2, §7 ``SubprocessExecutor``).

Every call runs the code in a fresh ``python -I`` interpreter inside a temporary working directory with
``setrlimit`` limits on address space, CPU time, file size and open files, a wall-clock timeout after which the
whole process group is killed, an empty environment, an import allow-list enforced both statically (AST) and at
run time (an ``__import__`` guard for imports made by the user code), ``open`` restricted to the temporary
directory, and ``socket`` disabled. A killed or failed run is reported as an :class:`ExecResult` error, never
raised, so the search goes on. This is defence in depth for a research tool, not an OS-level jail.
"""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from .executors import ExecResult

__all__ = ["SubprocessExecutor", "DEFAULT_ALLOWED_IMPORTS"]

DEFAULT_ALLOWED_IMPORTS = ("math", "cmath", "fractions", "decimal", "itertools", "functools", "collections",
                           "statistics", "random", "re", "string", "heapq", "bisect", "numbers", "operator",
                           "sympy", "numpy", "scipy")
_FORBIDDEN_NAMES = ("__import__", "eval", "exec", "compile", "globals", "locals", "vars", "breakpoint", "input",
                    "__builtins__", "__loader__", "__spec__", "getattr", "setattr", "delattr")

_WRAPPER = r'''
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


class SubprocessExecutor:
    """Run model-written code in limited subprocesses (implements :class:`~icml25.rstar_math.CodeExecutor`).

    Parameters
    ----------
    timeout_s : float
        Wall-clock limit per run; the process group is killed when it expires (official: 60 s).
    memory_mb : int
        Address-space limit (``RLIMIT_AS``).
    allowed_imports : sequence of str
        Top-level modules the code may import.
    workers : int
        Parallel subprocesses used by :meth:`run_many`.
    max_output_chars : int
        Captured stdout is cut to this many characters.
    """

    def __init__(self, timeout_s: float = 10.0, memory_mb: int = 512,
                 allowed_imports: Sequence[str] = DEFAULT_ALLOWED_IMPORTS, workers: int = 2,
                 max_output_chars: int = 2000) -> None:
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if memory_mb < 64:
            raise ValueError(f"memory_mb must be >= 64, got {memory_mb}")
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.timeout_s, self.memory_mb, self.workers = float(timeout_s), int(memory_mb), int(workers)
        self.allowed_imports = tuple(allowed_imports)
        self.max_output_chars = int(max_output_chars)

    def static_check(self, code: str) -> str | None:
        """Reason the code is rejected before running (syntax, disallowed import, forbidden name), or None."""
        try:
            tree = ast.parse(code)
        except SyntaxError as e:
            return f"SyntaxError: {e.msg}"
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for n in names:
                    if n.split(".")[0] not in self.allowed_imports:
                        return f"ImportError: import of {n!r} is not allowed in the sandbox"
            elif isinstance(node, ast.Name) and node.id in _FORBIDDEN_NAMES:
                return f"PermissionError: use of {node.id!r} is not allowed in the sandbox"
            elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__"):
                return f"PermissionError: dunder attribute {node.attr!r} is not allowed in the sandbox"
        return None

    def run(self, code: str) -> ExecResult:
        """Execute ``code`` in a fresh limited interpreter; see the class docstring."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        bad = self.static_check(code)
        if bad is not None:
            return ExecResult(error=bad)
        mem = self.memory_mb * 1024 * 1024
        cpu = max(1, int(self.timeout_s) + 1)
        args = [sys.executable, "-I", "-c", _WRAPPER, str(mem), str(cpu), str(16 * 1024 * 1024),
                ",".join(self.allowed_imports)]
        with tempfile.TemporaryDirectory(prefix="rstar_sandbox_") as tmp:
            proc = subprocess.Popen(args, cwd=tmp, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env={"PATH": "/usr/bin:/bin", "HOME": tmp},
                                    start_new_session=True, text=True)
            try:
                out, err = proc.communicate(code, timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                proc.communicate()
                return ExecResult(error=f"TimeoutError: execution exceeded {self.timeout_s:g} s and was killed",
                                  timed_out=True)
        out = out[: self.max_output_chars].rstrip()
        if proc.returncode != 0:
            marker = "__SANDBOX_ERROR__"
            if marker in err:
                return ExecResult(stdout=out, error=err.rsplit(marker, 1)[1].strip())
            if proc.returncode < 0:
                sig = signal.Signals(-proc.returncode).name
                return ExecResult(stdout=out, error=f"KilledError: process killed by {sig} (resource limit)")
            last = [ln for ln in err.strip().splitlines() if ln.strip()]
            return ExecResult(stdout=out, error=last[-1] if last else f"RuntimeError: exit code {proc.returncode}")
        return ExecResult(stdout=out)

    def run_many(self, codes: Sequence[str]) -> list[ExecResult]:
        """Run several codes in parallel subprocesses (``workers`` at a time), results in input order."""
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(self.run, codes))


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
