"""Escape probes against the OS-isolated sandbox (issues 33 and 46): every probe is refused or contained.

The probes run with the static filter and the Python guards switched off (unless stated), so what is tested is
the operating-system isolation. For safety even if isolation regressed, the harness itself applies limits to
the sandbox child (CPU seconds, address space, file size) and every fork probe is self-bounding (a forked child
exits at once; at most 64 processes), never a fork bomb. Containment checks: no file appears in a world-
writable host folder or the home folder, a server on 127.0.0.1 accepts no connection, the parent's memory stays
bounded and each call returns within its time limit. Root-only parts (the drop to ``nobody``) skip elsewhere.
Every sandbox child started by a test carries a token unique to that test on its command line, so "no sandbox
process is left" is checked for exactly the processes of that test, whatever else runs on the machine.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
import uuid
from pathlib import Path

import pytest

from icml25.rstar_math.execution import sandbox as sbmod
from icml25.rstar_math.execution.sandbox import SandboxResult, SubprocessExecutor, sandbox_support

TIMEOUT = 2.0
#: for runs that must not time out but pre-import sympy/numpy/scipy without namespaces (slow on a loaded machine)
START_TIMEOUT = 20.0
SLACK = 4.0  # interpreter start-up and kill on a loaded machine
ROOT = os.geteuid() == 0
SUP = sandbox_support()
needs_ns = pytest.mark.skipif(SUP.namespaces is None, reason=f"namespaces unavailable: {SUP.missing}")


class _OSOnly(SubprocessExecutor):
    """The sandbox without its static filter: what the OS isolation alone does."""

    def static_check(self, code):
        return None


def _harness_limits():  # runs in the sandbox child before its bootstrap: a second, independent fence
    resource.setrlimit(resource.RLIMIT_CPU, (20, 20))
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 << 20, 256 << 20))


_TOKEN = {"current": ""}  # the running test's token, appended to every sandbox child's command line


@pytest.fixture(autouse=True)
def harness_rlimits(monkeypatch):
    real = subprocess.Popen
    shim = types.SimpleNamespace(**{k: getattr(subprocess, k) for k in dir(subprocess) if not k.startswith("__")})
    _TOKEN["current"] = token = f"rstar-probe-token-{uuid.uuid4().hex}"
    shim.Popen = lambda args, *a, **k: real([*args, token], *a, preexec_fn=_harness_limits, **k)  # argv unused
    monkeypatch.setattr(sbmod, "subprocess", shim)
    yield
    _kill_marked(token)  # whatever a regression left running does not outlive its test


@pytest.fixture(scope="module")
def world_dir():
    """A world-writable host folder: if the file system were visible, the dropped uid could write here."""
    d = tempfile.mkdtemp(prefix="rstar_probe_target_")
    os.chmod(d, 0o777)
    secret = Path(d, "secret.txt")
    secret.write_text("TOP-SECRET-TOKEN-33")
    secret.chmod(0o644)
    yield Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def server():
    """A TCP server on 127.0.0.1 counting accepted connections."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    state = {"accepted": 0, "stop": False}

    def loop():
        while not state["stop"]:
            try:
                c, _ = srv.accept()
                state["accepted"] += 1
                c.close()
            except OSError:
                pass

    th = threading.Thread(target=loop, daemon=True)
    th.start()
    yield srv.getsockname()[1], state
    state["stop"] = True
    th.join(2)
    srv.close()


def _run(code: str, static: bool = False, **kw) -> tuple[SandboxResult, float]:
    ex = (SubprocessExecutor if static else _OSOnly)(timeout_s=TIMEOUT, memory_mb=256, python_guards=False,
                                                     max_output_bytes=1 << 20, **kw)
    t = time.monotonic()
    r = ex.run(code)
    dt = time.monotonic() - t
    assert dt < TIMEOUT + SLACK, f"call took {dt:.1f} s"
    return r, dt


def _marked(token: str) -> list[int]:
    """Pids of live processes whose command line holds ``token`` (a zombie's is empty: it runs nothing)."""
    found, needle = [], token.encode()
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if needle in (p / "cmdline").read_bytes():
                    found.append(int(p.name))
            except OSError:
                pass
    return found


def _kill_marked(token: str) -> None:
    for pid in _marked(token):
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def _no_sandbox_process_left(grace_s: float = 3.0):
    """No sandbox process of this test is alive (found by the test's token on the command line, also when it
    escaped to a new session and was re-parented to init), polling up to ``grace_s``."""
    deadline = time.monotonic() + grace_s
    while True:
        left = _marked(_TOKEN["current"])
        if not left or time.monotonic() > deadline:
            return not left
        time.sleep(0.1)


# -- the table ------------------------------------------------------------------------------------------
def test_shell_through_random_os_runs_nothing(world_dir):
    mark = world_dir / "shell_marker"
    r, _ = _run(f"from random import _os\nprint(_os.getuid())\nprint(_os.system('touch {mark}'))")
    assert not mark.exists()
    lines = r.stdout.splitlines()
    assert int(lines[1]) != 0  # the shell could not be started (no fork; no /bin/sh either in the private root)
    if ROOT:
        assert lines[0] == "65534"  # dropped to nobody


def test_write_outside_the_folder_is_impossible(world_dir, tmp_path):
    targets = [world_dir / "escape.txt", Path("/tmp") / f"rstar_escape_{os.getpid()}.txt"]
    code = "from random import _os\n" + "".join(
        f"try:\n    _os.close(_os.open({str(t)!r}, _os.O_CREAT | _os.O_WRONLY))\n    print('WROTE')\n"
        f"except OSError as e:\n    print(type(e).__name__)\n" for t in targets)
    r, _ = _run(code)
    assert "WROTE" not in r.stdout and r.error is None, r
    assert not any(t.exists() for t in targets)


def test_reading_system_and_user_files_is_impossible(world_dir):
    code = (f"from random import _os\nio = _os.sys.modules['io']\nfor f in ('/etc/passwd', {str(world_dir)!r} + "
            "'/secret.txt', '/etc/hostname'):\n    try:\n        print(io.open(f).read())\n"
            "    except OSError as e:\n        print(type(e).__name__)\n")
    r, _ = _run(code)
    assert "TOP-SECRET-TOKEN-33" not in r.stdout and "root:" not in r.stdout, r
    if SUP.namespaces is not None:
        assert r.stdout.split() == ["FileNotFoundError"] * 3  # absent from the private root


@needs_ns
def test_network_is_absent(server):
    port, state = server
    before = state["accepted"]
    r, _ = _run(f"s = __import__('_socket').socket()\ns.settimeout(2)\ns.connect(('127.0.0.1', {port}))\n"
                "print('CONNECTED')")
    assert "CONNECTED" not in r.stdout and r.error is not None and r.error_type == "OSError", r
    time.sleep(0.3)
    assert state["accepted"] == before == 0


def test_attrgetter_bypasses_the_static_filter_but_not_the_os(world_dir):
    mark = world_dir / "attrgetter_marker"
    code = ("import operator\nsubs = operator.attrgetter('__class__.__base__.__subclasses__')(1)()\n"
            "w = [c for c in subs if operator.attrgetter('__name__')(c) == '_wrap_close'][0]\n"
            "print(operator.attrgetter('__init__.__globals__')(w)['system']('touch " + str(mark) + "'))")
    assert SubprocessExecutor().static_check(code) is None  # the filter is only a first rejection
    r, _ = _run(code, static=True)
    assert not mark.exists()
    assert r.error is not None or int(r.stdout.split()[-1]) != 0, r


def test_setsid_then_loop_is_killed_with_its_tree():
    r, dt = _run("from random import _os\ntry:\n    _os.setsid()\nexcept OSError:\n    pass\nwhile True:\n    pass")
    assert r.timed_out and r.error_type == "TimeoutError"
    assert _no_sandbox_process_left()


def test_fork_fails_at_the_first_fork():
    # self-bounding: a child that did appear exits at once, so at most 64 processes even if isolation regressed
    r, _ = _run("from random import _os\nn = 0\nfor _ in range(64):\n    if _os.fork() == 0:\n        _os._exit(0)\n"
                "    n += 1\n    print(n, flush=True)")
    assert r.error_type == "BlockingIOError" and r.stdout == "", r
    assert _no_sandbox_process_left()


def test_huge_output_is_cut_and_parent_memory_stays_bounded():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r, _ = _run("import sys\nblock = 'x' * (1 << 20)\nfor _ in range(200):\n    sys.stdout.write(block)")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert r.error_type == "OutputLimitError" and r.output_truncated and len(r.stdout) <= 2000
    assert grown_mb < 50, grown_mb


# -- the additional probes --------------------------------------------------------------------------
def test_home_folder_is_not_writable(world_dir):
    home = Path.home() / f"rstar_probe_{os.getpid()}.txt"
    r, _ = _run(f"from random import _os\nfor p in ({str(home)!r}, _os.path.expanduser('~/../x')):\n"
                "    try:\n        open(p, 'w').write('x')\n        print('WROTE', p)\n"
                "    except OSError as e:\n        print(type(e).__name__)")
    assert not home.exists() and str(home) not in r.stdout, r


def test_environment_secrets_are_not_inherited(monkeypatch):
    monkeypatch.setenv("ICML25_TEST_SECRET", "sk-probe-33")
    r, _ = _run("from random import _os\nprint(dict(_os.environ))")
    assert "sk-probe-33" not in r.stdout and r.error is None


def test_ctypes_cannot_run_commands_or_mount(world_dir):
    mark = world_dir / "ctypes_marker"
    r, _ = _run(f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.system(b'touch {mark}'))\n"
                "print(libc.mount(b'tmpfs', b'/usr', b'tmpfs', 0, None), libc.setuid(0))")
    assert not mark.exists()
    rc, mount_rc, setuid_rc = (int(x) for x in r.stdout.split())
    assert rc != 0 and mount_rc == -1
    if ROOT:
        assert setuid_rc == -1


def test_subprocess_popen_is_refused(world_dir):
    mark = world_dir / "popen_marker"
    r, _ = _run(f"import subprocess\nsubprocess.Popen(['touch', '{mark}']).wait()")
    assert r.error is not None and not mark.exists(), r


def test_allocating_8_gb_fails_and_parent_stays_small():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r, _ = _run("x = bytearray(8 * 1024 ** 3)")
    assert r.error_type == "MemoryError", r
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024 < 50


def test_infinite_loop_times_out():
    r, dt = _run("while True:\n    pass")
    assert r.timed_out and dt >= TIMEOUT - 0.5
    assert _no_sandbox_process_left()


def test_ignoring_sigterm_does_not_help():
    r, _ = _run("import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n"
                "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass")
    assert r.timed_out
    assert _no_sandbox_process_left()


@pytest.mark.parametrize("namespaces", [True, False])
def test_closing_its_pipes_then_sleeping_still_times_out(namespaces, monkeypatch):
    if not namespaces:  # without the outer waiting process, the pipes really close before the child ends
        monkeypatch.setattr(sbmod, "_SUPPORT", sbmod.SandboxSupport(sys.platform, ROOT, None, ROOT, True, ("x",)))
        monkeypatch.setattr(sbmod, "_WARNED", True)
    r, dt = _run("import time, os\nos.close(1)\nos.close(2)\ntime.sleep(1000)")
    assert r.timed_out and dt >= TIMEOUT - 0.5
    assert _no_sandbox_process_left()


def test_deep_recursion_is_contained():
    r, _ = _run("import sys\nsys.setrecursionlimit(10 ** 7)\ndef f(n):\n    return f(n + 1)\nf(0)")
    assert r.error is not None and not r.ok, r


def test_import_module_and_dunder_import_reach_os_but_not_the_machine(world_dir):
    for i, code in enumerate(["import importlib\nm = importlib.import_module('os')\n",
                              "m = getattr(__builtins__, '__import__')('os')\n"]):
        mark = world_dir / f"imp_marker_{i}"
        assert SubprocessExecutor().static_check(code) is not None  # the first rejection catches these two
        r, _ = _run(code + f"print(m.system('touch {mark}'))\nopen({str(mark)!r}, 'w')")
        assert not mark.exists() and r.error is not None, r


def test_breakpoint_does_not_hang():
    r, _ = _run("breakpoint()\nprint('after')")
    assert not r.timed_out


def test_own_proc_entries_are_absent():
    r, _ = _run("for f in ('/proc/self/environ', '/proc/self/mem', '/proc/1/cmdline'):\n    try:\n"
                "        open(f, 'rb').read(10)\n        print('READ', f)\n    except OSError as e:\n"
                "        print(type(e).__name__)")
    assert "READ" not in r.stdout, r


# -- the working directory, strict mode, warnings, pooling ---------------------------------------------------
@needs_ns
def test_working_folder_is_writable_but_size_limited():
    r, _ = _run("open('a.txt', 'w').write('ok')\nprint(open('a.txt').read())\nimport os\nprint(os.getcwd())")
    assert r.stdout.split() == ["ok", "/sandbox"], r
    r, _ = _run("open('big', 'wb').write(b'x' * (64 << 20))", file_size_mb=8)
    assert r.error is not None and ("File too large" in r.error or "No space" in r.error), r


def test_strict_refuses_and_default_warns_once_when_a_mechanism_is_missing(monkeypatch):
    fake = sbmod.SandboxSupport(sys.platform, ROOT, None, ROOT, True, ("namespaces (refused in this test)",))
    monkeypatch.setattr(sbmod, "_SUPPORT", fake)
    monkeypatch.setattr(sbmod, "_WARNED", False)
    with pytest.raises(sbmod.SandboxUnavailableError, match="namespaces"):
        SubprocessExecutor(strict=True).run("print(1)")
    with pytest.warns(sbmod.SandboxWarning, match="namespaces") as rec:
        ex = SubprocessExecutor(timeout_s=START_TIMEOUT, allowed_imports=("math",))
        r1, r2 = ex.run("print(6 * 7)"), ex.run("from random import _os\nfor _ in range(3):\n    _os.fork()")
    assert len([w for w in rec if issubclass(w.category, sbmod.SandboxWarning)]) == 1
    assert r1.stdout == "42"
    assert r2.error is not None  # passes the static filter; the fork is refused (rlimit, seccomp)
    r3 = _OSOnly(timeout_s=START_TIMEOUT).run("from random import _os\n_os.fork()")
    assert r3.error_type == "BlockingIOError", r3


_LIMITS = ("CPU", "AS", "FSIZE", "NOFILE", "NPROC", "CORE")
_PRINT_LIMITS = ("import resource\nfor n in " + repr(_LIMITS) + ":\n"
                 "    print(*resource.getrlimit(getattr(resource, 'RLIMIT_' + n)))")


@pytest.mark.parametrize("namespaces", [True, False])
def test_an_inherited_lower_hard_limit_is_kept_not_raised(namespaces, monkeypatch):
    # Regression: timeout_s=20 asks for RLIMIT_CPU (22, 23), above the hard 20 the harness gives the child; raising
    # a hard limit needs CAP_SYS_RESOURCE (missing for root in this container), so every run failed with
    # "ValueError: not allowed to raise maximum limit". Now the tighter limit holds and the others still apply.
    if namespaces and SUP.namespaces is None:
        pytest.skip(f"namespaces unavailable: {SUP.missing}")
    if not namespaces:
        monkeypatch.setattr(sbmod, "_SUPPORT", dataclasses.replace(SUP, namespaces=None, missing=("x",)))
        monkeypatch.setattr(sbmod, "_WARNED", True)
    ex = _OSOnly(timeout_s=START_TIMEOUT, memory_mb=256, file_size_mb=8, python_guards=False,
                 allowed_imports=("resource",))
    r = ex.run(_PRINT_LIMITS)
    assert r.ok, r
    got = dict(zip(_LIMITS, (tuple(int(x) for x in ln.split()) for ln in r.stdout.splitlines())))
    assert got == {"CPU": (20, 20), "AS": (256 << 20,) * 2, "FSIZE": (8 << 20,) * 2, "NOFILE": (64, 64),
                   "NPROC": (0, 0), "CORE": (0, 0)}, r
    r = _OSOnly(timeout_s=TIMEOUT, memory_mb=256, python_guards=False,  # below the fence: the asked limit
                allowed_imports=("resource",)).run(_PRINT_LIMITS)
    assert r.ok and r.stdout.splitlines()[0] == f"{int(TIMEOUT) + 2} {int(TIMEOUT) + 3}", r


def test_limits_are_set_per_run_never_in_the_executor_process(monkeypatch):
    """Every limit is the per-run child's: the executor's own (soft and hard) are unchanged by runs in both modes,
    serial and pooled, so no run can lower what a later one gets."""
    def snapshot():
        return {n: resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith("RLIMIT_")}

    before, text = snapshot(), Path("/proc/self/limits").read_text()
    for sup in (SUP, dataclasses.replace(SUP, namespaces=None, missing=("x",))):
        monkeypatch.setattr(sbmod, "_SUPPORT", sup)
        monkeypatch.setattr(sbmod, "_WARNED", True)
        small = _OSOnly(timeout_s=TIMEOUT, memory_mb=128, file_size_mb=1, python_guards=False, workers=2,
                        allowed_imports=("resource",))
        big = _OSOnly(timeout_s=START_TIMEOUT, memory_mb=1024, file_size_mb=32, python_guards=False, workers=2,
                      allowed_imports=("resource",))
        first = small.run(_PRINT_LIMITS)
        pooled = big.run_many([_PRINT_LIMITS] * 2)
        assert first.ok and all(p.ok for p in pooled), (first, pooled)
        assert first.stdout.splitlines()[1] == f"{128 << 20} {128 << 20}"
        for p in pooled:  # a later, larger run gets its own (larger) limits: nothing lowered earlier leaks
            assert p.stdout.splitlines()[1:3] == [f"{1024 << 20} {1024 << 20}", f"{32 << 20} {32 << 20}"], p
    assert snapshot() == before
    assert Path("/proc/self/limits").read_text() == text


def test_a_refused_limit_is_a_setup_failure_not_the_codes_error(monkeypatch):
    # a setrlimit the kernel refuses (here: soft above hard, EINVAL -> ValueError) is reported as SandboxError
    src = sbmod._boot_source()
    old = '_lower_limit(resource.RLIMIT_CPU, cfg["cpu"], cfg["cpu"] + 1)'
    assert old in src
    monkeypatch.setattr(sbmod, "_boot_source",
                        lambda: src.replace(old, 'resource.setrlimit(resource.RLIMIT_CPU, (5, 4))'))
    r, _ = _run("print('never')")
    assert r.error_type == "SandboxError" and "ValueError" in r.error and r.stdout == "", r


def test_strict_sandbox_runs_here_when_everything_is_available():
    if SUP.missing:
        pytest.skip(f"missing here: {SUP.missing}")
    r = SubprocessExecutor(strict=True, timeout_s=TIMEOUT).run("import math\nprint(math.factorial(5))")
    assert r.ok and r.stdout == "120"


def test_run_many_pool_matches_serial_runs():
    ex = SubprocessExecutor(timeout_s=TIMEOUT, workers=3)
    codes = [f"print({i} * {i})" for i in range(6)] + ["1/0", "import os"]
    pooled, serial = ex.run_many(codes), [ex.run(c) for c in codes]
    assert pooled == serial
    assert [r.stdout for r in pooled[:6]] == [str(i * i) for i in range(6)]


# -- as a non-root user -------------------------------------------------------------------------------------
_NONROOT_SCRIPT = """
import json, os
from icml25.rstar_math.execution.sandbox import SubprocessExecutor, sandbox_support
class Raw(SubprocessExecutor):
    def static_check(self, code):
        return None

ex = Raw(timeout_s=2, memory_mb=256, python_guards=False)
out = {"uid": os.getuid(), "missing": list(sandbox_support().missing)}
out["fork"] = ex.run("from random import _os\\nif _os.fork() == 0:\\n    _os._exit(0)").error_type
out["write"] = ex.run("from random import _os\\n_os.close(_os.open(%r, _os.O_CREAT | _os.O_WRONLY))").error_type
out["loop"] = ex.run("while True:\\n    pass").timed_out
out["ok"] = ex.run("print(2 + 2)").stdout
out["net"] = ex.run("__import__('_socket').socket().connect(('127.0.0.1', 9))").error_type
# issue 46: without seccomp, clear the parent-death signal, leave the session and sleep past the limit
import dataclasses, pathlib, uuid
from icml25.rstar_math.execution import sandbox
tok = "rstar-nonroot-" + uuid.uuid4().hex
src = sandbox._boot_source()
sandbox._boot_source = lambda: src + "\\n# " + tok + "\\n"
sandbox._SUPPORT = dataclasses.replace(sandbox_support(), seccomp=False)
r = Raw(timeout_s=1, memory_mb=256, python_guards=False).run(
    "import ctypes, time\\nL = ctypes.CDLL(None)\\nprint(L.prctl(1, 0, 0, 0, 0), L.setsid(), flush=True)\\n"
    "time.sleep(4)")
left = []
for p in pathlib.Path("/proc").iterdir():
    try:
        left += [p.name] if p.name.isdigit() and tok.encode() in (p / "cmdline").read_bytes() else []
    except OSError:
        pass
out["escape"] = [r.timed_out, r.stdout, left]
print(json.dumps(out))
"""


def _expose_script(paths: list[str]) -> str | None:
    """Shell lines (for a private mount namespace) that make ``paths`` reachable by other users.

    A folder above them that others cannot enter (say ``/root`` holding a pyenv interpreter) is covered with a
    ``mode=755`` tmpfs into which the needed sub-folder is moved back; the host is unchanged. None when a
    needed path is not covered by this recipe.
    """
    lines, held = [], {}
    for need in paths:
        parts = Path(os.path.realpath(need)).parts
        blocked = [i for i in range(1, len(parts) + 1) if not os.stat(Path(*parts[:i])).st_mode & 0o001]
        if not blocked:
            continue
        if len(blocked) > 1 or blocked[0] == len(parts):
            return None  # more than one closed folder on the way, or the path itself: not covered
        held.setdefault(str(Path(*parts[: blocked[0]])), set()).add(str(Path(*parts[: blocked[0] + 1])))
    for k, (anc, kids) in enumerate(sorted(held.items())):
        for j, kid in enumerate(sorted(kids)):
            lines += [f"mkdir -p /tmp/.icml25_hold_{k}_{j}", f"mount --bind {kid} /tmp/.icml25_hold_{k}_{j}"]
        lines.append(f"mount -t tmpfs -o mode=755,size=1m tmpfs {anc}")
        for j, kid in enumerate(sorted(kids)):
            lines += [f"mkdir -p {kid}", f"mount --move /tmp/.icml25_hold_{k}_{j} {kid}"]
    return "\n".join(["set -e", *lines])


def test_probes_as_a_non_root_user():
    """The same containment as an unprivileged user (user namespaces), run through ``runuser``."""
    if not ROOT or not all(shutil.which(t) for t in ("runuser", "useradd", "unshare", "mount")):
        pytest.skip("needs root with runuser/useradd/unshare to create and use an unprivileged user")
    src = str(Path(sbmod.__file__).resolve().parents[3])
    expose = _expose_script([sys.executable, sys.prefix, sys.base_prefix, src])
    if expose is None:
        pytest.skip("the interpreter or the sources cannot be made readable for an unprivileged user here")
    user = "icml25probe"
    if subprocess.run(["id", user], capture_output=True).returncode != 0:
        if subprocess.run(["useradd", "--system", "--no-create-home", user], capture_output=True).returncode:
            pytest.skip("useradd failed")
    target = Path(tempfile.mkdtemp(prefix="rstar_probe_nonroot_"))
    target.chmod(0o777)
    try:
        mark = target / "nonroot_marker"
        script = tmp_script = target / "run.sh"
        py = _NONROOT_SCRIPT % str(mark)
        (target / "probe.py").write_text(py)
        (target / "probe.py").chmod(0o644)
        tmp_script.write_text(expose + f"\nexec runuser -u {user} -- env -i PATH=/usr/bin:/bin PYTHONPATH={src} "
                              f"{sys.executable} {target / 'probe.py'}\n")
        proc = subprocess.run(["unshare", "--mount", "--propagation", "private", "bash", str(script)],
                              capture_output=True, text=True, timeout=60, cwd="/")
        if proc.returncode != 0 and "unshare failed" in proc.stderr:
            pytest.skip(f"no mount namespace for the test harness: {proc.stderr.strip()[-200:]}")
        assert proc.returncode == 0, proc.stderr[-2000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        assert out["uid"] != 0 and out["ok"] == "4" and out["loop"] is True
        assert out["fork"] == "BlockingIOError"
        assert out["escape"][0] is True and out["escape"][2] == [], out["escape"]  # nothing outlives the limit
        assert out["escape"][1].split()[0] == "0", out["escape"]  # the death signal was cleared
        if not out["missing"]:  # user namespaces available: the same file-system and network isolation
            assert out["write"] is not None and not mark.exists()
            assert out["net"] == "OSError"
    finally:
        shutil.rmtree(target, ignore_errors=True)


# -- structured result and bad input -----------------------------------------------------------------------------
def test_structured_result_fields():
    ex = SubprocessExecutor(timeout_s=TIMEOUT, max_output_chars=10, max_output_bytes=4096)
    ok = ex.run("print('hello')")
    assert ok.ok and ok.error_type is None and not ok.output_truncated and ok.stdout == "hello"
    cut = ex.run("print('y' * 100)")
    assert cut.ok and cut.output_truncated and cut.stdout == "y" * 10  # cut, not killed
    over = ex.run("print('y' * 10000)")
    assert not over.ok and over.error_type == "OutputLimitError" and over.output_truncated
    static = ex.run("import os")
    assert static.rejected_statically and static.error_type == "ImportError" and not static.ok
    raised = ex.run("raise ValueError('bad value')")
    assert raised.error == "ValueError: bad value" and raised.error_type == "ValueError" and raised.is_error


@pytest.mark.parametrize("kw, word", [({"timeout_s": 0}, "timeout_s"), ({"memory_mb": 10}, "memory_mb"),
                                      ({"workers": 0}, "workers"), ({"max_output_bytes": 5}, "max_output_bytes"),
                                      ({"file_size_mb": 0}, "file_size_mb")])
def test_bad_arguments_are_named(kw, word):
    with pytest.raises(ValueError, match=word):
        SubprocessExecutor(**kw)
    with pytest.raises(TypeError, match="code must be a str"):
        SubprocessExecutor().run(b"print(1)")


def test_support_names_what_is_missing_when_namespaces_are_refused(monkeypatch):
    real = sbmod._probe

    def refuse_ns(ns, userns):
        return (None, "OSError: [Errno 1] unshare: Operation not permitted") if ns else real(ns, userns)

    monkeypatch.setattr(sbmod, "_SUPPORT", None)
    monkeypatch.setattr(sbmod, "_probe", refuse_ns)
    sup = sbmod.sandbox_support(refresh=True)
    assert sup.namespaces is None and sup.rlimits
    assert any("namespaces" in m and "unshare: Operation not permitted" in m for m in sup.missing)
    if ROOT:
        assert sup.privilege_drop  # the fallback still drops to nobody
    monkeypatch.setattr(sbmod, "_WARNED", False)
    with pytest.raises(sbmod.SandboxUnavailableError, match="Operation not permitted"):
        SubprocessExecutor(strict=True).run("print(1)")


@pytest.mark.skipif(os.uname().machine != "x86_64" or not SUP.seccomp, reason="x86_64 seccomp deny list")
def test_kernel_attack_surface_calls_are_refused():
    # ptrace(PTRACE_TRACEME), io_uring_setup, bpf, unshare(CLONE_NEWUSER): allowed to unprivileged code elsewhere
    r, _ = _run("import ctypes\nl = ctypes.CDLL(None, use_errno=True)\nbuf = ctypes.create_string_buffer(120)\n"
                "for rc in (l.ptrace(0, 0, 0, 0), l.syscall(425, 1, buf), l.syscall(321, 0, 0, 0),\n"
                "           l.unshare(0x10000000)):\n    print(rc, ctypes.get_errno())")
    assert r.stdout.splitlines() == ["-1 1"] * 4, r


# -- issue 46: the time limit is a guarantee; no host details, no forged setup failure, no exec ---------------------
# Each probe sleeps (or blocks) for SLEEP seconds with a limit of T46: a process alive right after run() returns
# would be one that outlived its limit. The check is immediate (no grace): run() waits for the exit itself.
T46, SLEEP = 1.0, 4
_PRE = "import ctypes, signal, time\nfrom random import _os\nL = ctypes.CDLL(None, use_errno=True)\n"
_TRICKS = {
    "prctl+setsid+sleep": "print(L.prctl(1, 0, 0, 0, 0), L.setsid(), flush=True)\ntime.sleep(SLEEP)",
    "prctl+setpgid+sleep": "print(L.prctl(1, 0, 0, 0, 0), L.setpgid(0, 0), flush=True)\ntime.sleep(SLEEP)",
    "ignore signals+prctl+setsid+sleep": "for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):\n"
                                         "    signal.signal(s, signal.SIG_IGN)\n"
                                         "print(L.prctl(1, 0, 0, 0, 0), L.setsid(), flush=True)\ntime.sleep(SLEEP)",
    "prctl+setsid+blocked pipe read": "print(L.prctl(1, 0, 0, 0, 0), L.setsid(), flush=True)\nr, w = _os.pipe()\n"
                                      "_os.read(r, 1)",
}
needs_seccomp = pytest.mark.skipif(not SUP.seccomp, reason=f"no seccomp filter on this machine: {SUP.missing}")


def _trick(body: str) -> str:
    return _PRE + body.replace("SLEEP", str(SLEEP))


def _run_and_watch(code: str, ex: SubprocessExecutor) -> tuple[SandboxResult, bool]:
    """Run ``code``; also report whether a marked process was seen during the run (the check is not vacuous)."""
    seen, stop = [], threading.Event()

    def watch():
        while not stop.is_set() and not seen:
            seen.extend(_marked(_TOKEN["current"]))
            stop.wait(0.1)

    th = threading.Thread(target=watch, daemon=True)
    th.start()
    t = time.monotonic()
    try:
        r = ex.run(code)
    finally:
        stop.set()
        th.join(2)
    assert time.monotonic() - t < T46 + SLACK
    return r, bool(seen)


def _no_seccomp(monkeypatch, **changes):
    """This module's sandbox without its seccomp filter (and with ``changes``): the kill alone must hold."""
    monkeypatch.setattr(sbmod, "_SUPPORT", dataclasses.replace(SUP, seccomp=False, **changes))
    monkeypatch.setattr(sbmod, "_WARNED", True)


@needs_ns
@pytest.mark.parametrize("trick", list(_TRICKS))
def test_nothing_outlives_the_time_limit_even_without_seccomp(trick, monkeypatch):
    # seccomp off: prctl(PR_SET_PDEATHSIG, 0), setsid and setpgid succeed, so only the kill of PID 1 of the
    # sandbox's PID namespace (held through a pidfd) stands between the code and an orphan running on
    _no_seccomp(monkeypatch)
    r, seen = _run_and_watch(_trick(_TRICKS[trick]), _OSOnly(timeout_s=T46, memory_mb=256, python_guards=False))
    assert r.timed_out and r.error_type == "TimeoutError", r
    prctl_rc, sess_rc = (int(x) for x in r.stdout.split())
    assert prctl_rc == 0 and sess_rc >= 0, r  # the trick itself worked
    assert seen and _marked(_TOKEN["current"]) == []


@needs_ns
def test_double_fork_where_forks_are_allowed_dies_with_the_namespace(monkeypatch):
    # a bootstrap with RLIMIT_NPROC 16 and no seccomp filter: the grandchild leaves the session, clears its
    # parent-death signal and sleeps; the PID namespace dies with its PID 1 all the same
    _no_seccomp(monkeypatch)
    src = sbmod._boot_source()
    assert '("RLIMIT_NPROC", 0)' in src
    monkeypatch.setattr(sbmod, "_boot_source", lambda: src.replace('("RLIMIT_NPROC", 0)', '("RLIMIT_NPROC", 16)'))
    code = _trick("if _os.fork() == 0:\n    L.setsid()\n    if _os.fork() == 0:\n        L.prctl(1, 0, 0, 0, 0)\n"
                  "        print('grandchild', flush=True)\n        time.sleep(SLEEP)\n    _os._exit(0)\n"
                  "time.sleep(SLEEP)")
    r, seen = _run_and_watch(code, _OSOnly(timeout_s=T46, memory_mb=256, python_guards=False))
    assert r.timed_out and r.stdout == "grandchild", r
    assert seen and _marked(_TOKEN["current"]) == []


@needs_seccomp
def test_seccomp_refuses_leaving_the_group_clearing_the_death_signal_and_exec():
    code = _trick("a = (ctypes.c_char_p * 2)(b'/usr/bin/id', None)\n"
                  "for rc in (L.prctl(1, 0, 0, 0, 0), L.setsid(), L.setpgid(0, 0), L.execv(b'/usr/bin/id', a)):\n"
                  "    print(rc, ctypes.get_errno())\nprint(L.prctl(15, b'renamed', 0, 0, 0), flush=True)\n"
                  "time.sleep(SLEEP)")
    r, seen = _run_and_watch(code, _OSOnly(timeout_s=T46, memory_mb=256, python_guards=False))
    assert r.stdout.splitlines() == ["-1 1"] * 4 + ["0"], r  # EPERM each; another prctl still works
    assert r.timed_out and seen and _marked(_TOKEN["current"]) == []


def test_the_reported_exploit_is_contained():
    r, _ = _run_and_watch("from random import _os; _os.sys.modules['__main__']._libc.prctl(1, 0, 0, 0, 0); "
                          f"_os.setsid(); _os.sys.modules['time'].sleep({SLEEP})",
                          _OSOnly(timeout_s=T46, memory_mb=256, python_guards=False))
    assert r.error_type in ("AttributeError", "TimeoutError"), r  # `__main__` no longer holds the bootstrap
    assert _marked(_TOKEN["current"]) == []


@needs_ns
def test_the_kill_holds_without_pidfds(monkeypatch):
    # Python or kernel without pidfd_open: the pid is checked to be the direct child's child and killed first
    _no_seccomp(monkeypatch)
    monkeypatch.delattr(sbmod.os, "pidfd_open")
    r, seen = _run_and_watch(_trick(_TRICKS["prctl+setsid+sleep"]),
                             _OSOnly(timeout_s=T46, memory_mb=256, python_guards=False))
    assert r.timed_out and r.stdout == "0 1", r
    assert seen and _no_sandbox_process_left(grace_s=1.0)


def test_the_kill_holds_without_namespaces(monkeypatch):
    # fallback (no namespaces): the code runs in the direct child, killed by pid; forks are refused by rlimit.
    # Few allowed imports: as root the bootstrap imports them before dropping to nobody, within the time limit
    _no_seccomp(monkeypatch, namespaces=None, missing=("namespaces (refused in this test)",))
    r, seen = _run_and_watch(_trick(_TRICKS["prctl+setsid+sleep"]),
                             _OSOnly(timeout_s=T46, memory_mb=256, python_guards=False,
                                     allowed_imports=("ctypes", "signal", "time", "random")))
    assert r.timed_out and r.stdout.split()[0] == "0", r  # setsid: -1, the child already leads its session
    assert seen and _marked(_TOKEN["current"]) == []


_KILLED_EXECUTOR = """
import os, sys
from icml25.rstar_math.execution import sandbox
sandbox.sandbox_support()  # the support probe runs unmarked
src = sandbox._boot_source()
sandbox._boot_source = lambda: src + "\\n# " + os.environ["RSTAR_PROBE_TOKEN"] + "\\n"
class Raw(sandbox.SubprocessExecutor):
    def static_check(self, code):
        return None
Raw(timeout_s=30, memory_mb=256, python_guards=False).run(sys.argv[1])
"""


@needs_seccomp
def test_killing_the_executor_kills_the_sandbox(tmp_path):
    """The executor's own process dies (SIGKILL, no chance to kill anything): the sandbox dies with it, because
    the code cannot clear its parent-death signal."""
    token = _TOKEN["current"]
    code = _trick(_TRICKS["ignore signals+prctl+setsid+sleep"])
    helper = subprocess.Popen([sys.executable, "-c", _KILLED_EXECUTOR, code], env={**os.environ,
                              "RSTAR_PROBE_TOKEN": token}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, running = time.monotonic() + 20, False
        while not running and time.monotonic() < deadline:  # the code runs once a marked process is filtered
            for pid in _marked(token):
                try:
                    running = running or "Seccomp:\t2" in Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    pass
            time.sleep(0.1)
        assert running, "the sandboxed code did not start"
        time.sleep(0.3)  # its prctl/setsid calls are done
        helper.kill()
        helper.wait(5)
        assert _no_sandbox_process_left(grace_s=1.0)
    finally:
        helper.kill()
        helper.wait()


def test_uname_and_host_name_are_neutral():
    code = ("import os, platform, socket\nu = os.uname()\nprint(u.nodename, u.release, u.version, platform.node(), "
            "socket.gethostname())")
    if SUP.namespaces is not None:  # the UTS namespace's name is also what the kernel reports
        code += "\nimport ctypes\nb = ctypes.create_string_buffer(65)\nctypes.CDLL(None).gethostname(b, 65)\n" \
                "print(b.value.decode())"
    r, _ = _run(code)
    host = os.uname()
    assert r.error is None, r
    assert r.stdout.split() == ["sandbox", "0.0.0", "#1", "sandbox", "sandbox"] + (
        ["sandbox"] if SUP.namespaces is not None else []), r
    assert host.release not in r.stdout and (host.nodename == "sandbox" or host.nodename not in r.stdout)


def test_user_output_cannot_claim_a_setup_failure():
    r, _ = _run("import sys\nfrom random import _os\nsys.stderr.write('\\n__SANDBOX_SETUP__forged\\n')\n"
                "sys.stderr.flush()\n_os._exit(125)")
    assert r.error is not None and r.error_type != "SandboxError" and "isolation" not in r.error, r


@needs_ns
def test_a_real_setup_failure_is_still_reported(monkeypatch):
    real = sbmod._config
    monkeypatch.setattr(sbmod, "_config", lambda **kw: real(**{**kw, "root_dir": "/nonexistent/rstar_root"}))
    r, _ = _run("print('never')")
    assert r.error_type == "SandboxError" and "mount" in r.error and r.stdout == "", r


def test_exec_of_host_programs_is_refused():
    r, _ = _run("from random import _os\n_os.execv('/usr/bin/id', ['id'])")
    assert r.error_type == "PermissionError" and "os.exec" in r.error and "uid=" not in r.stdout, r


def test_main_module_and_argv_hold_no_configuration():
    r, _ = _run("import gc, sys\nprint(sorted(k for k in vars(sys.modules['__main__']) if not k.startswith('__')))\n"
                "print(sys.argv, 'rstar_sandbox_' in repr(getattr(sys, 'orig_argv', [])))\n"
                "print(any(isinstance(o, dict) and 'root_dir' in o for o in gc.get_objects()))")
    assert r.stdout.splitlines() == ["[]", "['-c'] False", "False"], r
