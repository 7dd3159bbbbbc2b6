"""An OS-isolated sandbox for model-written Python code (spec §2.2, §7 ``SubprocessExecutor``).

Every execution runs in a fresh ``python -I`` child (bootstrap: ``_sandbox_boot.py``) that, before the user code
runs, enters new mount/network/PID/IPC/UTS namespaces and ``chroot``s into a private read-only root whose only
writable place is a size-limited tmpfs working directory (Linux, where the kernel allows it: as root, or as a
user with unprivileged user namespaces), sets resource limits (address space, CPU seconds, file size, open
files, no processes = no fork, backed by a seccomp filter refusing ``fork``/``clone`` of processes), and drops
to ``nobody`` with no supplementary groups when started as root (``no_new_privs``, not dumpable, killed when its
parent dies). The parent reads the output through a bounded reader (the child is killed
past ``max_output_bytes``), kills the child's process group on timeout (and the PID namespace dies with its
first process) and returns a :class:`SandboxResult`. A mechanism that is unavailable is named once in a
:class:`SandboxWarning`; ``strict=True`` raises :class:`SandboxUnavailableError` instead of running code with
less isolation. The static AST filter is only a fast first rejection of obviously bad code, never the boundary;
see the rstar_math README ("Security") for what is enforced where.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .executors import ExecResult

__all__ = ["SubprocessExecutor", "SandboxResult", "SandboxSupport", "SandboxWarning",
           "SandboxUnavailableError", "sandbox_support", "DEFAULT_ALLOWED_IMPORTS"]

DEFAULT_ALLOWED_IMPORTS = ("math", "cmath", "fractions", "decimal", "itertools", "functools", "collections",
                           "statistics", "random", "re", "string", "heapq", "bisect", "numbers", "operator",
                           "sympy", "numpy", "scipy")
_FORBIDDEN_NAMES = ("__import__", "eval", "exec", "compile", "globals", "locals", "vars", "breakpoint", "input",
                    "__builtins__", "__loader__", "__spec__", "getattr", "setattr", "delattr")
_BOOT = Path(__file__).with_name("_sandbox_boot.py")
_SETUP_MARKER, _ERROR_MARKER = "__SANDBOX_SETUP__", "__SANDBOX_ERROR__"
NOBODY_UID = NOBODY_GID = 65534


class SandboxWarning(RuntimeWarning):
    """An isolation mechanism is unavailable here and the sandbox runs without it."""


class SandboxUnavailableError(RuntimeError):
    """``strict=True`` and an isolation mechanism is unavailable on this machine."""


@dataclass(frozen=True)
class SandboxResult(ExecResult):
    """Structured result of one sandboxed execution (an :class:`ExecResult` with more detail).

    Attributes
    ----------
    error_type : str or None
        Exception class name raised by the code (``"ZeroDivisionError"``), or the sandbox's own kind:
        ``"TimeoutError"``, ``"OutputLimitError"``, ``"KilledError"`` (a resource limit's signal),
        ``"SandboxError"`` (isolation could not be set up), or the static filter's ``"ImportError"`` /
        ``"PermissionError"`` / ``"SyntaxError"``.
    output_truncated : bool
        Stdout was longer than ``max_output_chars`` (cut) or ``max_output_bytes`` (child killed).
    rejected_statically : bool
        The static filter refused the code before any process was started.
    """

    error_type: str | None = None
    output_truncated: bool = False
    rejected_statically: bool = False

    @property
    def ok(self) -> bool:
        """True when the code ran to completion without error, timeout or output overflow."""
        return self.error is None and not self.timed_out


@dataclass(frozen=True)
class SandboxSupport:
    """What the sandbox can enforce on this machine (measured once by a probe child).

    Attributes
    ----------
    platform : str
        ``sys.platform``.
    root : bool
        The parent runs as root (then the child drops to ``nobody``).
    namespaces : str or None
        ``"root"`` (namespaces created with root's privileges), ``"user"`` (through a user namespace) or None.
    privilege_drop : bool
        The child runs as an unprivileged uid, or without capabilities in its user namespace.
    rlimits : bool
        ``setrlimit`` limits are applied (POSIX).
    missing : tuple of str
        Human-readable names of the unavailable mechanisms (empty = full isolation).
    seccomp : bool
        The seccomp filter refusing ``fork``/``clone`` of processes is installed (Linux x86_64/aarch64).
    """

    platform: str
    root: bool
    namespaces: str | None
    privilege_drop: bool
    rlimits: bool
    missing: tuple[str, ...]
    seccomp: bool = False


_SUPPORT: SandboxSupport | None = None
_SUPPORT_LOCK = threading.Lock()
_WARNED = False


@functools.lru_cache(maxsize=1)
def _boot_source() -> str:
    return _BOOT.read_text()


@functools.lru_cache(maxsize=1)
def _ro_paths() -> tuple[list[str], list[tuple[str, str]]]:
    """Directories the child needs read-only (interpreter, libraries) and top-level symlinks to recreate."""
    dirs: list[str] = []
    links: list[tuple[str, str]] = []
    for top in ("/bin", "/lib", "/lib64", "/lib32", "/libx32", "/sbin", "/usr"):
        if os.path.islink(top):
            links.append((top, os.readlink(top)))
        elif os.path.isdir(top):
            dirs.append(top)
    cands = [sys.base_prefix, sys.prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    cands += [sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    for c in cands:
        p = os.path.realpath(c)
        if os.path.isdir(p) and not any(p == d or p.startswith(d.rstrip("/") + "/") for d in dirs):
            dirs = [d for d in dirs if not d.startswith(p.rstrip("/") + "/")] + [p]
    return sorted(dirs), links


def _reachable_by_others(path: str) -> bool:
    """Every directory above ``path`` is searchable by other users (so a dropped uid can import from it)."""
    p = os.path.realpath(path)
    while True:
        try:
            if not os.stat(p).st_mode & 0o001:
                return False
        except OSError:
            return False
        if p == os.path.dirname(p):
            return True
        p = os.path.dirname(p)


@functools.lru_cache(maxsize=1)
def _interpreter_reachable() -> bool:
    return all(_reachable_by_others(d) for d in (sys.prefix, sys.base_prefix))


def _config(*, root_dir: str, ns: bool, userns: bool, drop: bool, probe: bool, mem: int, cpu: int, fsize: int,
            work_bytes: int, guards: bool, allowed: Sequence[str], seccomp: bool) -> str:
    dirs, links = _ro_paths()
    return json.dumps({"root_dir": root_dir, "ns": ns, "userns": userns, "drop": drop, "probe": probe,
                       "mem": mem, "cpu": cpu, "fsize": fsize, "nofile": 64, "work_bytes": work_bytes,
                       "uid": NOBODY_UID, "gid": NOBODY_GID, "guards": guards, "seccomp": seccomp,
                       "allowed": list(allowed),
                       "ro_paths": dirs, "symlinks": links, "ro_files": ["/etc/ld.so.cache"],
                       "preimport": not _interpreter_reachable()})


def _probe(ns: bool, userns: bool) -> tuple[dict | None, str]:
    """Start one bootstrap child in probe mode: (its JSON report or None when the setup failed, the reason)."""
    root = os.geteuid() == 0
    with tempfile.TemporaryDirectory(prefix="rstar_sandbox_probe_") as tmp:
        cfg = _config(root_dir=tmp, ns=ns, userns=userns, drop=root and not userns, probe=True,
                      mem=1 << 30, cpu=5, fsize=1 << 20, work_bytes=1 << 20, guards=False, allowed=(),
                      seccomp=False)
        try:
            out = subprocess.run([sys.executable, "-I", "-c", _boot_source(), cfg], capture_output=True,
                                 text=True, timeout=30, env={"PATH": "/usr/bin:/bin"}, cwd=tmp,
                                 start_new_session=True)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"{type(e).__name__}: {e}"
    if out.returncode != 0:
        why = out.stderr.rsplit(_SETUP_MARKER, 1)[-1].strip().splitlines()
        return None, (why[-1] if why else f"exit status {out.returncode}")[:300]
    try:
        return json.loads(out.stdout.strip().splitlines()[-1]), ""
    except (ValueError, IndexError):
        return None, "unreadable probe report"


def sandbox_support(refresh: bool = False) -> SandboxSupport:
    """Measure (once per process) which isolation mechanisms work here; see :class:`SandboxSupport`."""
    global _SUPPORT
    with _SUPPORT_LOCK:
        if _SUPPORT is not None and not refresh:
            return _SUPPORT
        root = hasattr(os, "geteuid") and os.geteuid() == 0
        if not sys.platform.startswith("linux"):
            missing = ("namespaces (network, mount, PID: Linux only), hence no network or file-system isolation",
                       "private read-only root file system (Linux only)", "seccomp fork filter (Linux only)")
            rep, why = _probe(ns=False, userns=False) if os.name == "posix" else (None, "not POSIX")
            if rep is None:
                missing += (f"resource limits and privilege drop (the bootstrap child failed: {why})",)
            drop = rep is not None and (rep.get("uid") == NOBODY_UID if root else True)
            _SUPPORT = SandboxSupport(sys.platform, root, None, drop, rep is not None, missing)
            return _SUPPORT
        namespaces, missing = None, []
        rep, why = _probe(ns=True, userns=not root)
        if rep is not None:
            namespaces = "root" if root else "user"
        else:
            missing.append("namespaces and with them the private read-only root file system and the network "
                           f"isolation ({'as root' if root else 'through a user namespace'}: {why})")
            rep, why = _probe(ns=False, userns=False)
        drop = rep is not None and (rep.get("uid") == NOBODY_UID if root else True)
        if rep is not None and root and not drop:
            missing.append(f"privilege drop to uid {NOBODY_UID} (setuid did not hold)")
        if rep is not None and rep.get("seccomp") is not True:
            missing.append(f"seccomp fork filter ({rep.get('seccomp')}); forks are refused by RLIMIT_NPROC only")
        if rep is None:
            missing.append(f"resource limits and privilege drop (the bootstrap child failed: {why})")
        _SUPPORT = SandboxSupport(sys.platform, root, namespaces, drop, rep is not None, tuple(missing),
                                  seccomp=rep is not None and rep.get("seccomp") is True)
        return _SUPPORT


def _warn_once(support: SandboxSupport) -> None:
    global _WARNED
    if support.missing and not _WARNED:
        _WARNED = True
        warnings.warn("rstar_math sandbox: running WITHOUT " + "; ".join(support.missing)
                      + ". Model-written code is less isolated; use SubprocessExecutor(strict=True) to refuse.",
                      SandboxWarning, stacklevel=3)


class SubprocessExecutor:
    """Run model-written code in OS-isolated children (implements :class:`~icml25.rstar_math.CodeExecutor`).

    Parameters
    ----------
    timeout_s : float
        Wall-clock limit per run, from launch; the child's process group (and PID namespace) is killed when it
        expires (official: 60 s). The CPU-time limit is ``ceil(timeout_s) + 1`` s.
    memory_mb : int
        Address-space limit (``RLIMIT_AS``) of the child.
    allowed_imports : sequence of str
        Top-level modules the static filter (and the optional Python guards) accept.
    workers : int
        Children run at once by :meth:`run_many` (the pool used for one MCTS wave).
    max_output_chars : int
        Stdout kept in the result; longer output is cut and flagged ``output_truncated``.
    max_output_bytes : int
        Hard cap on bytes read from the child's stdout; past it the child is killed (``OutputLimitError``).
    file_size_mb : int
        Size of the writable tmpfs working directory and ``RLIMIT_FSIZE`` of any one file.
    strict : bool
        Refuse (:class:`SandboxUnavailableError`) unless namespaces, the private root, resource limits and
        (when root) the privilege drop are all available.
    python_guards : bool
        Also install the import allow-list and ``open`` confinement inside the child (clearer error messages;
        not a security boundary).
    """

    def __init__(self, timeout_s: float = 10.0, memory_mb: int = 512,
                 allowed_imports: Sequence[str] = DEFAULT_ALLOWED_IMPORTS, workers: int = 2,
                 max_output_chars: int = 2000, max_output_bytes: int = 1 << 20, file_size_mb: int = 16,
                 strict: bool = False, python_guards: bool = True) -> None:
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if memory_mb < 64:
            raise ValueError(f"memory_mb must be >= 64, got {memory_mb}")
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if max_output_chars < 1 or max_output_bytes < max_output_chars:
            raise ValueError("need 1 <= max_output_chars <= max_output_bytes, got "
                             f"max_output_chars={max_output_chars}, max_output_bytes={max_output_bytes}")
        if file_size_mb < 1:
            raise ValueError(f"file_size_mb must be >= 1, got {file_size_mb}")
        self.timeout_s, self.memory_mb, self.workers = float(timeout_s), int(memory_mb), int(workers)
        self.allowed_imports = tuple(allowed_imports)
        self.max_output_chars, self.max_output_bytes = int(max_output_chars), int(max_output_bytes)
        self.file_size_mb, self.strict, self.python_guards = int(file_size_mb), bool(strict), bool(python_guards)

    # -- isolation ----------------------------------------------------------------------------------------
    def support(self) -> SandboxSupport:
        """The mechanisms in force for this executor; warns once, or raises when ``strict``."""
        sup = sandbox_support()
        if self.strict and sup.missing:
            raise SandboxUnavailableError("strict sandbox refused to run: missing " + "; ".join(sup.missing))
        _warn_once(sup)
        return sup

    def static_check(self, code: str) -> str | None:
        """Reason the code is rejected before running (syntax, disallowed import, forbidden name), or None.

        A fast first rejection only: it is easily bypassed and the OS isolation is what contains the code.
        """
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

    # -- execution ----------------------------------------------------------------------------------------
    def run(self, code: str) -> SandboxResult:
        """Execute ``code`` in a fresh isolated child; see the class docstring. Never raises for bad code."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        sup = self.support()  # strict: refuse before anything else
        bad = self.static_check(code)
        if bad is not None:
            return SandboxResult(error=bad, error_type=bad.split(":", 1)[0], rejected_statically=True)
        root = sup.root
        with tempfile.TemporaryDirectory(prefix="rstar_sandbox_") as tmp:
            if root and sup.namespaces is None:
                os.chown(tmp, NOBODY_UID, NOBODY_GID)  # fallback: the dropped uid works in the host folder
            cfg = _config(root_dir=tmp, ns=sup.namespaces is not None, userns=sup.namespaces == "user",
                          drop=root and sup.namespaces != "user", probe=False,
                          mem=self.memory_mb << 20, cpu=int(self.timeout_s) + 2, fsize=self.file_size_mb << 20,
                          work_bytes=self.file_size_mb << 20, guards=self.python_guards,
                          allowed=self.allowed_imports, seccomp=sup.seccomp)
            try:
                return self._launch(cfg, code, tmp)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)

    def _launch(self, cfg: str, code: str, cwd: str) -> SandboxResult:
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-I", "-c", _boot_source(), cfg], cwd=cwd,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={"PATH": "/usr/bin:/bin", "HOME": "/sandbox", "TMPDIR": "/sandbox",
                                     "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
                                start_new_session=True)
        deadline = t0 + self.timeout_s
        out, err, over, timed_out = self._pump(proc, code.encode(), deadline)
        if not (over or timed_out):  # the pipes closed; the child may still run (it closed them itself)
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
        if over or timed_out:
            _kill_tree(proc)
        proc.wait()
        stdout = out.decode("utf-8", "replace")
        truncated = over or len(stdout) > self.max_output_chars
        stdout = stdout[: self.max_output_chars].rstrip()
        errtext = err.decode("utf-8", "replace")
        if timed_out:
            return SandboxResult(stdout=stdout, timed_out=True, error_type="TimeoutError", output_truncated=truncated,
                                 error=f"TimeoutError: execution exceeded {self.timeout_s:g} s and was killed")
        if over:
            return SandboxResult(stdout=stdout, output_truncated=True, error_type="OutputLimitError",
                                 error=f"OutputLimitError: output exceeded {self.max_output_bytes} bytes; "
                                       "the process was killed")
        if proc.returncode == 0:
            return SandboxResult(stdout=stdout, output_truncated=truncated)
        if _SETUP_MARKER in errtext:
            msg = errtext.rsplit(_SETUP_MARKER, 1)[1].strip()
            return SandboxResult(stdout=stdout, error=f"SandboxError: isolation could not be set up ({msg})",
                                 error_type="SandboxError", output_truncated=truncated)
        if _ERROR_MARKER in errtext:
            msg = errtext.rsplit(_ERROR_MARKER, 1)[1].strip()
            return SandboxResult(stdout=stdout, error=msg, error_type=msg.split(":", 1)[0],
                                 output_truncated=truncated)
        if proc.returncode < 0:
            sig = signal.Signals(-proc.returncode).name
            return SandboxResult(stdout=stdout, error=f"KilledError: process killed by {sig} (resource limit)",
                                 error_type="KilledError", output_truncated=truncated)
        last = [ln for ln in errtext.strip().splitlines() if ln.strip()]
        msg = last[-1] if last else f"RuntimeError: exit code {proc.returncode}"
        return SandboxResult(stdout=stdout, error=msg, error_type=msg.split(":", 1)[0].strip() or "RuntimeError",
                             output_truncated=truncated)

    def _pump(self, proc: subprocess.Popen, data: bytes, deadline: float) -> tuple[bytes, bytes, bool, bool]:
        """Feed stdin and read stdout/stderr in chunks until EOF, the byte cap or the deadline.

        Returns ``(stdout, stderr_tail, over_limit, timed_out)``; memory held is bounded by the caps.
        """
        out, err = bytearray(), bytearray()
        err_cap = 64 * 1024
        sel = selectors.DefaultSelector()
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        os.set_blocking(proc.stdin.fileno(), False)
        sel.register(proc.stdout, selectors.EVENT_READ)
        sel.register(proc.stderr, selectors.EVENT_READ)
        if data:
            sel.register(proc.stdin, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        view, over, timed_out = memoryview(data), False, False
        try:
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                for key, _ in sel.select(timeout=min(left, 0.5)):
                    f = key.fileobj
                    if f is proc.stdin:
                        try:
                            view = view[os.write(proc.stdin.fileno(), view[:65536]):]
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:  # the child stopped reading; its exit status tells why
                            view = view[len(view):]
                        if not len(view):
                            sel.unregister(proc.stdin)
                            proc.stdin.close()
                        continue
                    chunk = os.read(f.fileno(), 65536)
                    if not chunk:
                        sel.unregister(f)
                        continue
                    if f is proc.stdout:
                        out += chunk
                        if len(out) > self.max_output_bytes:
                            del out[self.max_output_bytes:]
                            over = True
                    else:
                        err += chunk
                        if len(err) > err_cap:
                            del err[: len(err) - err_cap]
                if over:
                    break
        finally:
            sel.close()
            for f in (proc.stdin, proc.stdout, proc.stderr):
                try:
                    f.close()
                except OSError:
                    pass
        return bytes(out), bytes(err), over, timed_out

    def run_many(self, codes: Sequence[str]) -> list[SandboxResult]:
        """Run several codes through a pool of ``workers`` concurrent sandboxed children; input order kept.

        This is how MCTS executes all step programs of one wave together.
        """
        codes = list(codes)
        if len(codes) <= 1 or self.workers == 1:
            return [self.run(c) for c in codes]
        self.support()  # probe and warn once, before the threads start
        with ThreadPoolExecutor(max_workers=min(self.workers, len(codes))) as pool:
            return list(pool.map(self.run, codes))


def _kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL the child's process group; the PID namespace (when used) dies with its first process."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass
