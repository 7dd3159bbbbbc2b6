"""An OS-isolated sandbox for model-written Python code (spec §2.2, §7 ``SubprocessExecutor``).

Every execution runs in a fresh ``python -I`` child (bootstrap: ``_sandbox_boot.py``) that, before the user code
runs, enters new mount/network/PID/IPC/UTS namespaces and ``chroot``s into a private read-only root whose only
writable place is a size-limited tmpfs working directory (Linux, where the kernel allows it: as root, or as a
user with unprivileged user namespaces), sets resource limits (address space, CPU seconds, file size, open
files, no processes = no fork, backed by a seccomp filter refusing ``fork``/``clone`` of processes, ``execve``,
``setsid``/``setpgid`` and clearing the parent-death signal), and drops to ``nobody`` with no supplementary groups
when started as root (``no_new_privs``, not dumpable, killed when its parent dies). The parent reads the output
through a bounded reader (the child is killed past ``max_output_bytes``) and returns a :class:`SandboxResult`.

The time limit is a guarantee: the child reports, over a separate control pipe, the pid of the process that
will run the code (with namespaces: PID 1 of the new PID namespace); the parent opens a pidfd on it and only
then sends the code. At ``timeout_s`` it ``SIGKILL``s that pidfd (the kernel then kills every process of the PID
namespace, whatever it did to its session, process group, parent-death signal or signal dispositions), then the
child's process group, and waits until the pidfd reports the exit. The same pipe carries setup failures, so
nothing the code prints can claim one. A mechanism that is unavailable is named once in a
:class:`SandboxWarning`; ``strict=True`` raises :class:`SandboxUnavailableError` instead of running code with
less isolation. The static AST filter is only a fast first rejection of obviously bad code, never the boundary;
see the rstar_math README ("Security") for what is enforced where.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import select
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

from .code_executors import ExecResult

__all__ = ["SubprocessExecutor", "SandboxResult", "SandboxSupport", "SandboxWarning",
           "SandboxUnavailableError", "sandbox_support", "DEFAULT_ALLOWED_IMPORTS"]

DEFAULT_ALLOWED_IMPORTS = ("math", "cmath", "fractions", "decimal", "itertools", "functools", "collections",
                           "statistics", "random", "re", "string", "heapq", "bisect", "numbers", "operator",
                           "sympy", "numpy", "scipy")
_FORBIDDEN_NAMES = ("__import__", "eval", "exec", "compile", "globals", "locals", "vars", "breakpoint", "input",
                    "__builtins__", "__loader__", "__spec__", "getattr", "setattr", "delattr")
_BOOT = Path(__file__).with_name("_sandbox_boot.py")
_ERROR_MARKER = "__SANDBOX_ERROR__"
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
            work_bytes: int, guards: bool, allowed: Sequence[str], seccomp: bool, ctl: int = -1) -> str:
    dirs, links = _ro_paths()
    return json.dumps({"root_dir": root_dir, "ns": ns, "userns": userns, "drop": drop, "probe": probe,
                       "mem": mem, "cpu": cpu, "fsize": fsize, "nofile": 64, "work_bytes": work_bytes,
                       "uid": NOBODY_UID, "gid": NOBODY_GID, "guards": guards, "seccomp": seccomp,
                       "allowed": list(allowed), "ctl": ctl,
                       "ro_paths": dirs, "symlinks": links, "ro_files": ["/etc/ld.so.cache"],
                       "preimport": not _interpreter_reachable()})


def _setup_failure(ctl: bytes) -> str | None:
    """The bootstrap's ``setup <reason>`` report on the control pipe, or None."""
    for line in ctl.decode("utf-8", "replace").splitlines():
        if line.startswith("setup "):
            return line[6:].strip()
    return None


def _probe(ns: bool, userns: bool) -> tuple[dict | None, str]:
    """Start one bootstrap child in probe mode: (its JSON report or None when the setup failed, the reason)."""
    root = os.geteuid() == 0
    with tempfile.TemporaryDirectory(prefix="rstar_sandbox_probe_") as tmp:
        r, w = os.pipe()
        cfg = _config(root_dir=tmp, ns=ns, userns=userns, drop=root and not userns, probe=True,
                      mem=1 << 30, cpu=5, fsize=1 << 20, work_bytes=1 << 20, guards=False, allowed=(),
                      seccomp=False, ctl=w)
        try:
            with os.fdopen(r, "rb") as ctl_reader:
                try:
                    out = subprocess.run([sys.executable, "-I", "-c", _boot_source(), cfg], capture_output=True,
                                         text=True, timeout=30, env={"PATH": "/usr/bin:/bin"}, cwd=tmp,
                                         start_new_session=True, pass_fds=(w,))
                finally:
                    os.close(w)
                ctl = ctl_reader.read(1 << 16)  # the child has exited: its end is closed
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"{type(e).__name__}: {e}"
    if out.returncode != 0:
        why = _setup_failure(ctl) or (out.stderr.strip().splitlines() or [""])[-1]
        return None, (why or f"exit status {out.returncode}")[:300]
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
        Wall-clock limit per run, from launch; when it expires the process running the code (PID 1 of its PID
        namespace, held through a pidfd) and the child's process group are killed, and nothing the code started
        outlives the call (official: 60 s). The CPU-time limit (``RLIMIT_CPU``) is ``int(timeout_s) + 2`` s
        (hard: one more). Every limit is set in the per-run child only, never in this process, and never above
        a hard limit the child inherited from it (the tighter one holds; see the bootstrap's ``_lower_limit``).
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
            try:
                return self._launch(sup, code, tmp)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)

    def _launch(self, sup: SandboxSupport, code: str, cwd: str) -> SandboxResult:
        t0 = time.monotonic()
        ctl_r, ctl_w = os.pipe()  # control channel: the child's pid, setup failures (never user output)
        try:
            cfg = _config(root_dir=cwd, ns=sup.namespaces is not None, userns=sup.namespaces == "user",
                          drop=sup.root and sup.namespaces != "user", probe=False,
                          mem=self.memory_mb << 20, cpu=int(self.timeout_s) + 2, fsize=self.file_size_mb << 20,
                          work_bytes=self.file_size_mb << 20, guards=self.python_guards,
                          allowed=self.allowed_imports, seccomp=sup.seccomp, ctl=ctl_w)
            proc = subprocess.Popen([sys.executable, "-I", "-c", _boot_source(), cfg], cwd=cwd,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env={"PATH": "/usr/bin:/bin", "HOME": "/sandbox", "TMPDIR": "/sandbox",
                                         "LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
                                    start_new_session=True, pass_fds=(ctl_w,))
        except BaseException:
            os.close(ctl_r)
            raise
        finally:
            os.close(ctl_w)  # only the child holds the write end now: EOF once its setup is over
        target = _Target(proc)
        try:
            deadline = t0 + self.timeout_s
            out, err, ctl, over, timed_out = self._pump(proc, code.encode(), deadline, ctl_r, target)
            if not (over or timed_out):  # the pipes closed; the child may still run (it closed them itself)
                try:
                    proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    timed_out = True
            if over or timed_out:
                target.kill()
            proc.wait()
        except BaseException:
            target.kill()
            proc.wait()
            raise
        finally:
            target.close()
            os.close(ctl_r)
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
        setup = _setup_failure(ctl)  # only the bootstrap writes there, and closes it before the code runs
        if setup is not None:
            return SandboxResult(stdout=stdout, error=f"SandboxError: isolation could not be set up ({setup})",
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

    def _pump(self, proc: subprocess.Popen, data: bytes, deadline: float, ctl_r: int,
              target: _Target) -> tuple[bytes, bytes, bytes, bool, bool]:
        """Read the control pipe, feed stdin once the child's pid is held, read stdout/stderr in chunks until EOF,
        the byte cap or the deadline.

        Returns ``(stdout, stderr_tail, control, over_limit, timed_out)``; memory held is bounded by the caps.
        """
        out, err, ctl = bytearray(), bytearray(), bytearray()
        err_cap, ctl_cap = 64 * 1024, 16 * 1024
        sel = selectors.DefaultSelector()
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        os.set_blocking(proc.stdin.fileno(), False)
        sel.register(proc.stdout, selectors.EVENT_READ)
        sel.register(proc.stderr, selectors.EVENT_READ)
        sel.register(ctl_r, selectors.EVENT_READ)
        view, over, timed_out, released = memoryview(data), False, False, False

        def release() -> None:  # the code goes out only once the process running it can be killed for sure
            nonlocal released
            released = True
            if data:
                sel.register(proc.stdin, selectors.EVENT_WRITE)
            else:
                proc.stdin.close()

        try:
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                for key, _ in sel.select(timeout=min(left, 0.5)):
                    f = key.fileobj
                    if f is ctl_r:
                        chunk = os.read(ctl_r, 4096)
                        if not chunk:
                            sel.unregister(ctl_r)
                            if not released:  # setup failed before the pid: no code for this child
                                released = True
                                proc.stdin.close()
                            continue
                        if len(ctl) < ctl_cap:
                            ctl += chunk[: ctl_cap - len(ctl)]
                        if not released and target.take(ctl):
                            release()
                        continue
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
        return bytes(out), bytes(err), bytes(ctl), over, timed_out

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


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


class _Target:
    """The process that runs the code (with namespaces: PID 1 of the PID namespace), held so that it can be killed.

    The bootstrap reports its pid on the control pipe before it reads the code, and the code is sent only after
    :meth:`take` has succeeded, so the process cannot have exited (nor its pid been reused) in between. A pid
    other than the direct child's is held through a pidfd (Linux >= 5.3), after checking that it is the direct
    child's child; where pidfds are missing, its pid is kept and killed while the direct child (its parent,
    which alone could reap it) is still alive.
    """

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc, self.pid, self.pidfd = proc, None, None

    def take(self, ctl: bytes | bytearray) -> bool:
        """Parse ``pid N`` from the control bytes; True once the target is held (or known to be the child)."""
        for line in bytes(ctl).decode("ascii", "replace").split("\n")[:-1]:  # complete lines only
            if line.startswith("pid ") and line[4:].isdigit():
                pid = int(line[4:])
                break
        else:
            return False
        if pid == self.proc.pid:
            self.pid = pid
            return True
        if hasattr(os, "pidfd_open"):
            try:
                fd = os.pidfd_open(pid)
            except OSError:
                fd = None
            if fd is not None and _ppid(pid) == self.proc.pid:  # checked after opening: the pidfd is that child
                self.pid, self.pidfd = pid, fd
                return True
            if fd is not None:
                os.close(fd)
            if fd is not None or not _pidfd_unsupported():
                return False  # not our child (it died during setup): no code for it
        if _ppid(pid) == self.proc.pid:
            self.pid = pid
            return True
        return False

    def kill(self) -> None:
        """SIGKILL the code's process (and with it its PID namespace), then the child's group; wait for the exit."""
        if self.pidfd is not None:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
        elif self.pid is not None and self.pid != self.proc.pid and self.proc.poll() is None \
                and _ppid(self.pid) == self.proc.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.kill()
        except ProcessLookupError:
            pass
        if self.pidfd is not None:  # readable once the process (the namespace's last one) has exited
            poller = select.poll()
            poller.register(self.pidfd, select.POLLIN)
            poller.poll(5000)

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


@functools.lru_cache(maxsize=1)
def _pidfd_unsupported() -> bool:
    """pidfd_open exists in Python but the kernel lacks it (ENOSYS)."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return True
    return False
