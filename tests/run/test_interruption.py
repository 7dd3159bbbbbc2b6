"""Nothing lost on interruption (issue 46 item 4).

A scratch paper ``slow`` saves resume state (its stage 1) in its folder, then runs a long stage, or takes long to
write its report (a config value whose text is slow); how long comes from environment variables, so that the killed
run and its rerun have the same config. ``icml25 reproduce`` runs it in a subprocess (its own process group, as a
terminal job) and is killed there with SIGINT (Ctrl-C), SIGTERM or SIGKILL (what the out-of-memory killer sends).
Then: the previous complete report is byte for byte as it was, the resume state is kept, and the same command run
again resumes from it, finishes and leaves no staging folder behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from icml25.core import registry
from icml25.core.optional import has
from icml25.core.report import PARTIAL_PREFIX
from icml25.run.cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and process groups")

PAPER = textwrap.dedent('''
    import json
    import os
    import time
    from dataclasses import dataclass

    from icml25.core import Report, reproduction


    @dataclass(frozen=True)
    class Config:
        n: int = 10  # size of stage 1

        @classmethod
        def quick(cls):
            return cls()

        @classmethod
        def full(cls):
            return cls(n=20)


    class SlowText:
        """A config value whose text takes long: the report is being written while it sleeps."""

        def __init__(self, flag, seconds):
            self.flag, self.seconds = flag, seconds

        def __str__(self):
            self.flag.write_text(str(os.getpid()))
            time.sleep(self.seconds)
            return "slow"


    @reproduction(slug="slow", title="Slow paper", arxiv="0000.00007", config=Config)
    def reproduce(scale, seed, out, config):
        state = out / "state.json"  # resume state: kept in the task's own folder, written atomically
        key = {"n": config.n, "seed": seed}
        if state.exists() and json.loads(state.read_text())["key"] == key:
            value, resumed = json.loads(state.read_text())["value"], True
        else:
            value, resumed = float(sum(range(config.n)) + seed), False
            tmp = out / "state.json.tmp"
            tmp.write_text(json.dumps({"key": key, "value": value}))
            os.replace(tmp, state)
        (out / "stage1.flag").write_text(str(os.getpid()))
        time.sleep(float(os.environ.get("SLOW_PAPER_SLEEP_S", "0")))  # the long stage
        from matplotlib.figure import Figure

        fig = Figure(figsize=(2, 2))
        fig.subplots().plot(range(config.n))
        r = Report("slow", "Slow paper")
        r.add_claim("Q1", "stage 1 is the sum of range(n)", None, value, "within", (0.0, 1e6), kind="check")
        r.add_table("run", [{"n": config.n, "resumed": resumed}])
        r.add_figure("curve", fig)
        if float(os.environ.get("SLOW_PAPER_WRITE_S", "0")):
            r.config["slow"] = SlowText(out / "writing.flag", float(os.environ["SLOW_PAPER_WRITE_S"]))
        return r
''')

REPORT_FILES = ("report.json", "report.md", "config.json", "curve.png")
EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGKILL: -signal.SIGKILL}


@pytest.fixture
def slow_paper(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    pkg = tmp_path / "intpkg"
    (pkg / "slow").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "slow" / "__init__.py").write_text("")
    (pkg / "slow" / "reproduce.py").write_text(PAPER)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "PACKAGE_ROOT", pkg)
    monkeypatch.setattr(registry, "ROOT_PACKAGE", "intpkg")
    for m in [m for m in sys.modules if m.startswith("intpkg")]:
        del sys.modules[m]
    registry._REGISTRY.pop("slow", None)
    src = str(Path(registry.__file__).resolve().parents[2])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([src, str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("ICML25_PROGRESS", "0")
    monkeypatch.delenv("SLOW_PAPER_SLEEP_S", raising=False)
    monkeypatch.delenv("SLOW_PAPER_WRITE_S", raising=False)
    yield pkg
    registry._REGISTRY.pop("slow", None)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in REPORT_FILES}


def _partials(out: Path) -> list[Path]:
    return list(out.rglob(f"{PARTIAL_PREFIX}*"))


def _killed_run(pkg: Path, argv: list[str], flag: Path, sig: int, env: dict[str, str],
                timeout: float = 240.0) -> tuple[int, str]:
    """Run ``icml25 <argv>`` in a new process group; when ``flag`` appears, send ``sig`` to the group.

    Returns the exit code and stderr."""
    code = ("import sys; from pathlib import Path; from icml25.core import registry; "
            f"registry.PACKAGE_ROOT = Path({str(pkg)!r}); registry.ROOT_PACKAGE = 'intpkg'; "
            "from icml25.run.cli import main; sys.exit(main(sys.argv[1:]))")
    # SIGINT back to its default in the child: a test run started as a background job of a non-interactive shell
    # inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler (Ctrl-C would do nothing)
    proc = subprocess.Popen([sys.executable, "-c", code, *argv], start_new_session=True, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **env},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + timeout
        while not flag.exists():
            if proc.poll() is not None:
                _, err = proc.communicate()
                raise AssertionError(f"the run ended (rc {proc.returncode}) before it could be killed:\n{err[-3000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{flag.name} did not appear within {timeout:.0f} s")
            time.sleep(0.05)
        os.killpg(proc.pid, sig)
        _, err = proc.communicate(timeout=120)
        return proc.returncode, err
    finally:
        try:  # whatever the signal left running in the group (pool workers, Ray)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _check_interruption(pkg: Path, out: Path, executor: list[str], sig: int, point: str,
                        rerun_executor: list[str] | None = None) -> None:
    folder = out / "slow"
    assert main(["reproduce", "slow", "--out", str(out)]) == 0  # the previous complete report (n=10)
    before = _snapshot(folder)
    (folder / "stage1.flag").unlink()
    argv = ["reproduce", "slow", "--out", str(out), "--set", "n=20", *executor]
    env = {"SLOW_PAPER_SLEEP_S": "600"} if point == "run" else {"SLOW_PAPER_WRITE_S": "600"}
    flag = folder / ("stage1.flag" if point == "run" else "writing.flag")
    rc, err = _killed_run(pkg, argv, flag, sig, env)
    assert rc == EXIT[sig], err[-2000:]
    assert _snapshot(folder) == before, "the previous report changed"
    assert json.loads((folder / "state.json").read_text())["key"] == {"n": 20, "seed": 0}  # resume state kept
    if point == "write" and sig == signal.SIGKILL:
        assert _partials(out), "a SIGKILL while writing leaves a staging folder (removed by the next run)"
    # the same command again resumes from the kept stage 1, finishes and removes what the killed run left
    rerun = argv if rerun_executor is None else [a for a in argv if a not in executor] + rerun_executor
    assert main(rerun) == 0
    after = json.loads((folder / "report.json").read_text())
    assert after["config"]["n"] == 20 and after["tables"]["run"] == [{"n": 20, "resumed": True}]
    assert _snapshot(folder) != before and not _partials(out)


@pytest.mark.parametrize("sig, point", [
    ("SIGINT", "run"),
    ("SIGTERM", "write"),
    ("SIGKILL", "run"),
    ("SIGKILL", "write"),
    pytest.param("SIGINT", "write", marks=pytest.mark.slow),
    pytest.param("SIGTERM", "run", marks=pytest.mark.slow),
])
def test_process_executor_killed_keeps_the_previous_report_and_resumes(slow_paper, tmp_path, sig, point) -> None:
    _check_interruption(slow_paper, tmp_path / "reports", ["--executor", "process", "--jobs", "1"],
                        getattr(signal, sig), point)


@pytest.mark.parametrize("sig, point", [("SIGINT", "write"), ("SIGTERM", "run")])
def test_serial_executor_killed_keeps_the_previous_report_and_resumes(slow_paper, tmp_path, sig, point) -> None:
    _check_interruption(slow_paper, tmp_path / "reports", [], getattr(signal, sig), point)


@pytest.mark.long  # over ~10 s: CI's second phase (make test-long)
def test_multi_seed_run_killed_after_one_seed_reruns_only_the_other(slow_paper, tmp_path, capsys) -> None:
    out = tmp_path / "reports"
    argv = ["reproduce", "slow", "--seeds", "2", "--out", str(out), "--executor", "process", "--jobs", "1"]
    assert main(argv) == 0  # the previous complete reports (n=10)
    before = {k: _snapshot(out / "slow" / k) for k in ("", "seed0", "seed1")}
    flag = out / "slow" / "seed1" / "stage1.flag"
    flag.unlink()
    # one worker: seed 0 runs first and finishes; the run is killed (out of memory) in seed 1's long stage. Seed 0
    # sleeps too, so the flag waited for is seed 1's own
    rc, err = _killed_run(slow_paper, [*argv, "--set", "n=20"], flag, signal.SIGKILL, {"SLOW_PAPER_SLEEP_S": "2"})
    assert rc == -signal.SIGKILL, err[-2000:]
    assert json.loads((out / "slow" / "seed0" / "report.json").read_text())["config"]["n"] == 20  # finished
    assert _snapshot(out / "slow" / "seed1") == before["seed1"] and _snapshot(out / "slow") == before[""]
    capsys.readouterr()
    assert main([*argv, "--set", "n=20"]) == 0
    assert "2 tasks: 1 ran, 1 skipped, 0 failed" in capsys.readouterr().err
    seed1 = json.loads((out / "slow" / "seed1" / "report.json").read_text())
    assert seed1["tables"]["run"] == [{"n": 20, "resumed": True}]
    assert json.loads((out / "slow" / "report.json").read_text())["seed"] == [0, 1] and not _partials(out)


@pytest.mark.skipif(not has("ray"), reason="ray (extra 'dist') is not installed")
@pytest.mark.parametrize("sig", [pytest.param("SIGTERM", marks=pytest.mark.long),  # Ray: CI's second phase
                                 pytest.param("SIGKILL", marks=pytest.mark.slow)])
def test_ray_executor_killed_keeps_the_previous_report_and_resumes(slow_paper, tmp_path, sig) -> None:
    try:  # the rerun uses the process executor: a second Ray start would double the test's time
        _check_interruption(slow_paper, tmp_path / "reports", ["--executor", "ray", "--jobs", "1"],
                            getattr(signal, sig), "run", rerun_executor=["--executor", "process"])
    except (TimeoutError, AssertionError) as exc:
        if "before it could be killed" in str(exc) and "ray" in str(exc).lower() or isinstance(exc, TimeoutError):
            pytest.skip(f"Ray could not start here: {str(exc)[-300:]}")
        raise
