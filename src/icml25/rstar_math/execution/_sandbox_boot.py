"""Bootstrap of one sandboxed execution (run as ``python -I -c <this file> <config-json>``, code on stdin).

Standard library only: this file is not imported by the package; :mod:`icml25.rstar_math.execution.sandbox` passes its
text to a fresh interpreter. Before any user code runs, the process

1. (``ns``) enters new mount, network, PID, IPC and UTS namespaces (plus a user namespace when not root), forks
   once so that the user code runs as PID 1 of the new PID namespace (the kernel kills everything in it when it
   dies), names the UTS namespace ``sandbox`` and builds a private root: a read-only tmpfs holding read-only bind
   mounts of the interpreter's directories and ``/usr``, the device files ``null zero random urandom``, and a
   size-limited writable tmpfs ``/sandbox`` (the working directory); then ``chroot`` into it. Nothing else of
   the host file system exists there, and the network namespace has only a downed loopback device;
2. closes inherited file descriptors, sets ``RLIMIT_AS``, ``RLIMIT_CPU``, ``RLIMIT_FSIZE``, ``RLIMIT_NOFILE``,
   ``RLIMIT_NPROC`` = 0 (no fork) and ``RLIMIT_CORE`` = 0, soft and hard, in this per-run process only (never
   in the executor's); a lower hard limit it inherited is kept (the tighter one holds, none is raised);
3. (``drop``) drops to ``uid``/``gid`` (``nobody``) with no supplementary groups when started as root, or (user
   namespace) drops every capability; sets ``no_new_privs``, not-dumpable and a parent-death ``SIGKILL``;
4. installs a seccomp filter that refuses process creation (threads stay possible where ``RLIMIT_NPROC`` allows
   them), ``execve``/``execveat``, ``setsid``/``setpgid`` and clearing the parent-death signal
   (``prctl(PR_SET_PDEATHSIG)``) and, on x86_64, system calls a step program never needs (``ptrace``, mounts,
   namespaces, ``bpf``, ...);
5. installs an audit hook refusing ``os.exec*``/``os.posix_spawn`` (a clear message; ctypes bypasses it, the
   seccomp filter does not), makes ``os.uname`` report neutral values, replaces ``sys.modules['__main__']`` by
   an empty module and clears ``sys.argv``/``sys.orig_argv`` (which held the configuration with host paths).

Control channel: the parent passes the write end of a pipe (``cfg['ctl']``). The process that will run the
user code first reports its pid *in the parent's PID namespace* there (``pid N``; with namespaces the outer
process reports its child, the namespace's PID 1) and only then reads the code from stdin, which the parent
writes after it has opened a pidfd on that pid: so the parent can always kill the namespace's PID 1 at the time
limit, whatever the code does to its session, process group or parent-death signal. A failing mechanism that was
asked for is fatal (exit status 125 with a ``setup <reason>`` line on the control channel), never silently
skipped; the channel is closed before the user code runs, so user output cannot claim a setup failure. With
``probe`` set, it reports what worked as one JSON line and exits instead of running code.
"""

import ctypes
import json
import os
import resource
import signal
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
_KEEP_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048 | 4096  # + noatime, nodiratime, relatime
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
SETUP_MARKER, ERROR_MARKER = "__SANDBOX_SETUP__", "__SANDBOX_ERROR__"

_libc = ctypes.CDLL(None, use_errno=True)
_CTL = [-1]  # the control channel's fd (-1: none, then setup failures go to stderr)
_REFUSED_EVENTS = frozenset(("os.exec", "os.posix_spawn", "os.spawn"))


def _ctl_write(line):
    if _CTL[0] < 0:
        return False
    data = (line.replace("\n", " ") + "\n").encode("utf-8", "replace")
    while data:
        data = data[os.write(_CTL[0], data):]
    return True


def _fail(msg):
    try:
        if _ctl_write("setup " + msg[:2000]):
            os._exit(125)
    except OSError:
        pass
    sys.stderr.write("\n" + SETUP_MARKER + msg + "\n")
    sys.stderr.flush()
    os._exit(125)


def _check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src, target, fstype, flags, data=None):
    def enc(s):
        return None if s is None else s.encode()

    _check(_libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {src or fstype} on {target}")


def _prctl(option, arg):
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl({option})")


def _enter_namespaces(userns):
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    _check(_libc.unshare(flags | (CLONE_NEWUSER if userns else 0)), "unshare")
    if userns:
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)


def _wait_and_forward(pid):
    """The outer process: report the namespace's PID 1 to the parent, wait for it and exit the same way it did."""
    try:
        _ctl_write(f"pid {pid}")
    except OSError:  # the parent is gone: it would never release the code
        os.kill(pid, signal.SIGKILL)
    if _CTL[0] >= 0:
        os.close(_CTL[0])
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: os.kill(pid, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _bind_ro(src, target):
    _mount(src, target, None, MS_BIND)
    keep = os.statvfs(src).f_flag & _KEEP_FLAGS
    _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | keep)


def _build_root(cfg):
    """Private root in ``cfg['root_dir']``; returns after ``chroot`` with cwd ``/sandbox``."""
    name = b"sandbox"
    _check(_libc.sethostname(name, len(name)), "sethostname")  # the new UTS namespace's name, not the host's
    root = cfg["root_dir"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,nr_inodes=4096,mode=0755")
    for path in cfg["ro_paths"]:
        if not os.path.isdir(path):
            continue
        target = root + path
        os.makedirs(target, mode=0o755, exist_ok=True)
        _bind_ro(path, target)
    for link, dest in cfg["symlinks"]:
        os.symlink(dest, root + link)
    os.makedirs(root + "/dev", mode=0o755, exist_ok=True)
    for dev in ("null", "zero", "random", "urandom"):
        if os.path.exists("/dev/" + dev):
            open(root + "/dev/" + dev, "w").close()
            _mount("/dev/" + dev, root + "/dev/" + dev, None, MS_BIND)
    for f in cfg["ro_files"]:
        if os.path.isfile(f):
            os.makedirs(os.path.dirname(root + f), mode=0o755, exist_ok=True)
            open(root + f, "w").close()
            _bind_ro(f, root + f)
    os.makedirs(root + "/sandbox", mode=0o755, exist_ok=True)
    os.makedirs(root + "/tmp", mode=0o755, exist_ok=True)  # exists already when a bound path lies under /tmp
    owner = f",uid={cfg['uid']},gid={cfg['gid']},mode=0700" if cfg["drop"] else ",mode=0700"
    _mount("tmpfs", root + "/sandbox", "tmpfs", MS_NOSUID | MS_NODEV,
           f"size={cfg['work_bytes']},nr_inodes=1024" + owner)
    _mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(root)
    os.chroot(".")
    os.chdir("/sandbox")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _drop_all_capabilities():
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) != 0 and ctypes.get_errno() != 22:
            _check(1, f"drop capability {cap} from the bounding set")
    hdr, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(hdr), data), "capset")


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


# machine -> (AUDIT_ARCH, fork, vfork, clone, clone3); 0xFFFFFFFF = no such system call
_SYSCALLS = {"x86_64": (0xC000003E, 57, 58, 56, 435), "aarch64": (0xC00000B7, 0xFFFFFFFF, 0xFFFFFFFF, 220, 435)}
# machine -> (prctl, (execve, execveat, setsid, setpgid)): refused with EPERM on every supported machine, prctl only
# for PR_SET_PDEATHSIG (the code cannot outlive its parent, leave the process group or run another program).
# Numbers: x86_64 asm/unistd_64.h, aarch64 asm-generic/unistd.h.
_CONTAIN = {"x86_64": (157, (59, 322, 112, 109)), "aarch64": (167, (221, 281, 157, 154))}
# x86_64 only (numbers checked on this architecture): calls no step program needs that widen the kernel's attack
# surface or the sandbox's reach -> EPERM. ptrace, mount, umount2, pivot_root, chroot, unshare, setns, keyctl,
# add_key, request_key, bpf, userfaultfd, perf_event_open, io_uring_setup, open_tree, move_mount, fsopen,
# fsconfig, fsmount, fspick
_DENIED = {"x86_64": (101, 165, 166, 155, 161, 272, 308, 250, 248, 249, 321, 323, 298, 425, 428, 429, 430, 431,
                      432, 433)}


def _assemble(prog):
    """Resolve ``("label", name)`` markers and label jump targets into a classic-BPF instruction array."""
    at, pc = {}, 0
    for ins in prog:
        if ins[0] == "label":
            at[ins[1]] = pc
        else:
            pc += 1
    out, pc = [], 0
    for ins in prog:
        if ins[0] == "label":
            continue
        code, jt, jf, k = ins
        jt = at[jt] - pc - 1 if isinstance(jt, str) else jt
        jf = at[jf] - pc - 1 if isinstance(jf, str) else jf
        out.append(_SockFilter(code, jt, jf, k))
        pc += 1
    return (_SockFilter * len(out))(*out)


def _install_no_fork_filter():
    """seccomp filter: fork/vfork/clone without CLONE_THREAD fail with EAGAIN, clone3 with ENOSYS (so threads
    fall back to clone); the ``_CONTAIN`` calls, ``prctl(PR_SET_PDEATHSIG)`` and the ``_DENIED`` calls fail with
    EPERM; another ABI (x32, i386 on x86_64) kills the process. Returns False on machines without a table here."""
    machine = os.uname().machine
    if machine not in _SYSCALLS:
        return False
    arch, fork, vfork, clone, clone3 = _SYSCALLS[machine]
    prctl, contain = _CONTAIN[machine]
    ld, jeq, jset, ret, allow = 0x20, 0x15, 0x45, 0x06, 0x7FFF0000
    eagain, enosys, eperm, kill = 0x00050000 | 11, 0x00050000 | 38, 0x00050000 | 1, 0x80000000
    prog = [(ld, 0, 0, 4), (jeq, "nr", 0, arch), (ret, 0, 0, kill), ("label", "nr"), (ld, 0, 0, 0),
            (jset, "kill", 0, 0x40000000)]  # x32 system-call numbers
    prog += [(jeq, "prctl", 0, prctl)]
    prog += [(jeq, "eperm", 0, n) for n in contain + _DENIED.get(machine, ())]
    prog += [(jeq, "eagain", 0, fork), (jeq, "eagain", 0, vfork), (jeq, "enosys", 0, clone3),
             (jeq, 0, "allow", clone), (ld, 0, 0, 16), (jset, "allow", "eagain", 0x00010000),  # CLONE_THREAD
             ("label", "prctl"), (ld, 0, 0, 16), (jeq, "eperm", "allow", PR_SET_PDEATHSIG),  # low word of arg 0
             ("label", "allow"), (ret, 0, 0, allow), ("label", "enosys"), (ret, 0, 0, enosys),
             ("label", "eagain"), (ret, 0, 0, eagain), ("label", "eperm"), (ret, 0, 0, eperm),
             ("label", "kill"), (ret, 0, 0, kill)]
    arr = _assemble(prog)
    fprog = _SockFprog(len(arr), arr)
    _check(_libc.prctl(22, ctypes.c_ulong(2), ctypes.byref(fprog), 0, 0), "seccomp filter")
    return True


def _set_limits(cfg):
    keep = _CTL[0]
    if keep >= 3:
        os.closerange(3, keep)
        os.closerange(keep + 1, 1 << 16)
    else:
        os.closerange(3, 1 << 16)
    for name, value in (("RLIMIT_AS", cfg["mem"]), ("RLIMIT_FSIZE", cfg["fsize"]),
                        ("RLIMIT_NOFILE", cfg["nofile"]), ("RLIMIT_NPROC", 0), ("RLIMIT_CORE", 0)):
        _lower_limit(getattr(resource, name), value, value)
    _lower_limit(resource.RLIMIT_CPU, cfg["cpu"], cfg["cpu"] + 1)


def _lower_limit(res, soft, hard):
    """Set ``res`` to ``(soft, hard)``, never above the hard limit this process inherited.

    Only lowering is possible here: raising a hard limit needs ``CAP_SYS_RESOURCE`` (absent for an unprivileged
    user, and for root in many containers), so a tighter inherited limit (``ulimit -t`` of a batch job, a test
    harness's own fence) would otherwise fail every run with ``ValueError``. The tighter of the two holds.
    """
    cur_hard = resource.getrlimit(res)[1]
    if cur_hard != resource.RLIM_INFINITY:
        hard = min(hard, cur_hard)
    resource.setrlimit(res, (min(soft, hard), hard))


def _drop_privileges(cfg):
    if os.geteuid() == 0 and not cfg["userns"]:
        os.setgroups([])
        os.setgid(cfg["gid"])
        os.setuid(cfg["uid"])
        try:
            os.setuid(0)
        except PermissionError:
            pass
        else:
            _fail("privilege drop did not hold (setuid(0) succeeded afterwards)")
    elif cfg["userns"]:
        _drop_all_capabilities()


def _refuse_exec(event, _args):
    if event in _REFUSED_EVENTS:
        raise PermissionError(f"running another program ({event}) is not allowed in the sandbox")


def _neutral_uname(real_uname, nodename):
    machine = real_uname().machine

    def uname():
        return os.uname_result(("Linux", nodename, "0.0.0", "#1", machine))

    return uname


def _hide_host(ns):
    """After setup: a clear refusal of exec, neutral ``uname``, nothing of the configuration left in reach."""
    import posix

    sys.addaudithook(_refuse_exec)  # a message only: ctypes calls execve directly, which seccomp refuses
    uname = _neutral_uname(os.uname, "sandbox")  # the kernel release cannot be virtualised; Python shows none
    os.uname = posix.uname = uname
    if not ns and "_socket" in sys.modules:  # no UTS namespace: the host name would show through gethostname
        sys.modules["_socket"].gethostname = lambda: "sandbox"
    sys.argv[:] = ["-c"]
    if hasattr(sys, "orig_argv"):
        sys.orig_argv = [sys.orig_argv[0], "-I", "-c", "<sandbox bootstrap>"]
    sys.modules["__main__"] = type(sys)("__main__")


def _run_user_code(code, guards, allowed):
    import builtins

    ns = {"__name__": "__sandbox__", "__builtins__": builtins}
    if guards:  # convenience messages only: the boundary is the OS isolation above
        allowed, root = set(allowed), os.path.realpath(os.getcwd())
        real_open, real_import = builtins.open, builtins.__import__

        def _open(file, mode="r", *a, **k):
            p = os.path.realpath(os.path.join(root, os.fspath(file)))
            if not (p == root or p.startswith(root + os.sep)):
                raise PermissionError(f"reading or writing outside the sandbox directory is not allowed: {file}")
            return real_open(p, mode, *a, **k)

        def _import(name, globals=None, locals=None, fromlist=(), level=0):
            if (globals or {}).get("__name__") == "__sandbox__" and name.split(".")[0] not in allowed:
                raise ImportError(f"import of {name!r} is not allowed in the sandbox")
            return real_import(name, globals, locals, fromlist, level)

        builtins.__import__, builtins.open = _import, _open
    try:
        exec(compile(code, "<step>", "exec"), ns)
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which classifies it
        try:
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001
            pass
        msg = str(e).replace("\n", " ")[:500]
        sys.stderr.write("\n" + ERROR_MARKER + type(e).__name__ + ": " + msg + "\n")
        sys.stderr.flush()
        os._exit(1)
    sys.stdout.flush()
    os._exit(0)


def _read_code(probe):
    """The code, from stdin: the parent writes it only once it holds a pidfd on this process."""
    return "" if probe else sys.stdin.read()


def main():
    """Set up the isolation; returns ``(code, guards, allowed)`` for the user code (the configuration is dropped)."""
    cfg = json.loads(sys.argv[1])
    _CTL[0] = int(cfg.get("ctl", -1))
    report = {}
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file, also from the outer waiting process
    try:
        if sys.platform.startswith("linux"):  # the executor dying takes this child with it
            _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        if cfg["ns"]:
            _enter_namespaces(cfg["userns"])
            pid = os.fork()
            if pid:
                _wait_and_forward(pid)
            _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))  # a fork clears it: the outer process dying kills this
            code = _read_code(cfg["probe"])
            _build_root(cfg)
            report["namespaces"] = True
        else:
            _ctl_write(f"pid {os.getpid()}")
            code = _read_code(cfg["probe"])
        if not cfg["ns"]:  # patched by _hide_host; the dropped uid may be unable to import it later
            try:
                import _socket  # noqa: F401
            except ImportError:
                pass
        if not cfg["ns"] and cfg["drop"] and cfg["preimport"]:
            for mod in cfg["allowed"]:  # the interpreter is unreadable by the unprivileged uid: import now
                try:
                    __import__(mod)
                except Exception:  # noqa: BLE001 - a missing optional library is the user code's error
                    pass
        _set_limits(cfg)
        _drop_privileges(cfg)
        if sys.platform.startswith("linux"):
            _prctl(PR_SET_NO_NEW_PRIVS, 1)
            _prctl(PR_SET_DUMPABLE, 0)
            _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))  # again: a change of credentials clears it
            if cfg["probe"]:  # reported, not fatal: the parent decides whether runs require it
                try:
                    report["seccomp"] = _install_no_fork_filter() or f"not implemented for {os.uname().machine}"
                except OSError as e:
                    report["seccomp"] = f"{type(e).__name__}: {e}"
            elif cfg["seccomp"]:
                _install_no_fork_filter()
        report.update(uid=os.getuid(), euid=os.geteuid(), cwd=os.getcwd())
    except (OSError, ValueError) as e:  # ValueError: resource.setrlimit refused (a setup failure, not the code's)
        _fail(f"{type(e).__name__}: {e}")
    if cfg["probe"]:
        sys.stdout.write(json.dumps(report) + "\n")
        sys.stdout.flush()
        os._exit(0)
    try:
        _hide_host(cfg["ns"])
    except Exception as e:  # noqa: BLE001 - a setup failure like any other
        _fail(f"{type(e).__name__}: {e}")
    if _CTL[0] >= 0:  # setup succeeded; from here on nothing the code writes can claim otherwise
        os.close(_CTL[0])
        _CTL[0] = -1
    return code, cfg["guards"], cfg["allowed"]


_run_user_code(*main())
