"""``icml25 reproduce --executor {serial,process,ray}``: same reports whichever executor, resume, failures (issue 32).

Two small scratch papers (``alpha`` with 1 thread, ``beta`` with 2) x two seeds, plus ``flaky`` whose seed 1 fails.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from icml25.core import registry
from icml25.core.optional import has
from icml25.run.cli import main

PAPER = textwrap.dedent('''
    import os
    from dataclasses import dataclass
    from icml25.core import Report, reproduction

    @dataclass(frozen=True)
    class Config:
        n: int = 40
        fail_seed: int = -1  # the seed that raises (a bug), -1: none
        crash_seed: int = -1  # the seed whose process dies (os._exit), -1: none
        @classmethod
        def quick(cls): return cls()
        @classmethod
        def full(cls): return cls(n=80)

    @reproduction(slug="{slug}", title="Paper {slug}", arxiv="0000.0000{k}", config=Config, threads={threads})
    def reproduce(scale, seed, out, config):
        import numpy as np
        from threadpoolctl import threadpool_info

        if seed == config.fail_seed:
            1 / 0
        if seed == config.crash_seed:
            os._exit(3)
        rng = np.random.default_rng(seed + {k})
        a = rng.normal(size=(config.n, config.n))
        spd = a @ a.T + config.n * np.eye(config.n)
        x = np.linalg.solve(spd, rng.normal(size=config.n))
        blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
        r = Report("{slug}", "Paper {slug}")
        r.add_claim("Q1", "solution is small", None, float(np.abs(x).max()), "<=", 0.5, kind="mechanism")
        r.add_claim("Q2", "mean of a normal sample", None, float(rng.normal(size=200).mean()), "within",
                    (-0.1, 0.1), kind="check", aggregate="{agg}")
        r.add_claim("Q3", "sample is finite", None, bool(np.isfinite(a).all()), "is_true", kind="check")
        r.add_table("threads", [dict(omp=os.environ.get("OMP_NUM_THREADS"), blas=max(blas) if blas else None)])
        (out / "draw.png").write_bytes(bytes([seed % 256]) * 8)
        r.add_figure("draw", out / "draw.png")
        return r
''')


@pytest.fixture
def papers(tmp_path, monkeypatch):
    pkg = tmp_path / "execpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for k, (slug, threads, agg) in enumerate([("alpha", 1, "mean"), ("beta", 2, "median"), ("flaky", 1, "max")]):
        (pkg / slug).mkdir()
        (pkg / slug / "__init__.py").write_text("")
        (pkg / slug / "reproduce.py").write_text(PAPER.format(slug=slug, k=k, threads=threads, agg=agg))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "PACKAGE_ROOT", pkg)
    monkeypatch.setattr(registry, "ROOT_PACKAGE", "execpkg")
    for m in [m for m in sys.modules if m.startswith("execpkg")]:
        del sys.modules[m]
    for slug in ("alpha", "beta", "flaky"):
        registry._REGISTRY.pop(slug, None)
    # workers (spawned processes, Ray workers) import icml25 from where this process did
    src = str(Path(registry.__file__).resolve().parents[2])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([src, str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    return pkg


def _reports(out: Path) -> dict[str, dict]:
    """Every report.json under ``out`` (relative path -> dict) without its wall times."""
    found = {}
    for p in sorted(out.rglob("report.json")):
        data = json.loads(p.read_text())
        data.pop("wall_time_s")
        found[str(p.relative_to(out))] = data
    return found


def _run(out: Path, *extra: str, slugs=("alpha", "beta")) -> int:
    return main(["reproduce", *slugs, "--seeds", "2", "--out", str(out), *extra])


@pytest.fixture
def serial_reference(papers, tmp_path):
    out = tmp_path / "serial"
    assert _run(out) == 0
    return out


def test_serial_layout_aggregation_and_threads(serial_reference) -> None:
    reps = _reports(serial_reference)
    assert sorted(reps) == ["alpha/report.json", "alpha/seed0/report.json", "alpha/seed1/report.json",
                            "beta/report.json", "beta/seed0/report.json", "beta/seed1/report.json"]
    agg, s0, s1 = reps["beta/report.json"], reps["beta/seed0/report.json"], reps["beta/seed1/report.json"]
    assert agg["seed"] == [0, 1] and s0["seed"] == 0 and s1["seed"] == 1
    for i, stat in [(0, lambda a, b: (a + b) / 2), (1, lambda a, b: (a + b) / 2)]:  # median of two = mean
        per = [s0["claims"][i]["measured"], s1["claims"][i]["measured"]]
        assert agg["claims"][i]["per_seed"] == per and agg["claims"][i]["measured"] == pytest.approx(stat(*per))
    assert s0["claims"][0]["measured"] != s1["claims"][0]["measured"]  # the seeds differ
    # each task ran with its paper's thread count (registry field `threads`), BLAS included
    assert reps["alpha/seed0/report.json"]["tables"]["threads"] == [{"omp": "1", "blas": 1}]
    assert s0["tables"]["threads"] == [{"omp": "2", "blas": 2}]
    assert (serial_reference / "beta" / "draw.png").read_bytes() == bytes([0]) * 8  # first seed's figure
    assert "beta" in (serial_reference / "index.md").read_text()
    assert registry.discover()["beta"].threads == 2 and registry.discover()["alpha"].threads == 1


@pytest.mark.parametrize("executor", [
    "process",
    pytest.param("ray", marks=[pytest.mark.skipif(not has("ray"), reason="ray (extra 'dist') is not installed"),
                               pytest.mark.long]),  # Ray starts in ~10-60 s: CI's second phase
])
def test_executors_give_the_serial_reports(serial_reference, tmp_path, executor, capsys) -> None:
    out = tmp_path / executor
    if executor == "ray":
        import ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            assert _run(out, "--executor", "ray") == 0
        finally:
            ray.shutdown()
    else:
        assert _run(out, "--executor", "process", "--jobs", "2") == 0
    assert _reports(out) == _reports(serial_reference)
    assert (out / "index.md").read_text() == (serial_reference / "index.md").read_text()
    for slug in ("alpha", "beta"):
        assert (out / slug / "config.json").read_text() == (serial_reference / slug / "config.json").read_text()
    err = capsys.readouterr().err
    assert "[4/4] " in err and "4 tasks: 4 ran, 0 skipped, 0 failed" in err


def test_resume_skips_finished_pairs(serial_reference, capsys) -> None:
    out = serial_reference
    capsys.readouterr()
    before = {p: p.stat().st_mtime_ns for p in out.rglob("seed*/report.json")}
    (out / "alpha" / "seed1" / "report.json").unlink()
    assert _run(out, "--executor", "process", "--jobs", "2") == 0
    err = capsys.readouterr().err
    assert err.count("skipped, its report.json has this scale, seed and config") == 3
    assert "4 tasks: 1 ran, 3 skipped, 0 failed" in err
    after = {p: p.stat().st_mtime_ns for p in out.rglob("seed*/report.json")}
    assert all(after[p] == t for p, t in before.items() if p.exists() and "alpha/seed1" not in str(p))
    assert (out / "alpha" / "seed1" / "report.json").exists()
    # another config or scale is not the same task; --force reruns everything
    assert main(["reproduce", "alpha", "--seeds", "2", "--out", str(out), "--set", "n=50"]) == 0
    assert "2 tasks: 2 ran, 0 skipped" in capsys.readouterr().err
    assert json.loads((out / "alpha" / "seed0" / "report.json").read_text())["config"]["n"] == 50
    assert main(["reproduce", "alpha", "--seeds", "2", "--out", str(out), "--set", "n=50"]) == 0
    assert "2 tasks: 0 ran, 2 skipped" in capsys.readouterr().err
    assert main(["reproduce", "alpha", "--seeds", "2", "--out", str(out), "--scale", "full"]) == 0
    assert "2 tasks: 2 ran, 0 skipped" in capsys.readouterr().err
    assert _run(out, "--force") == 0
    err = capsys.readouterr().err
    assert "4 tasks: 4 ran, 0 skipped" in err and "alpha seed 0: skipped" not in err


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_failed_task_loses_no_other_report(papers, tmp_path, capsys, executor) -> None:
    extra = ["--executor", executor] + (["--jobs", "2"] if executor == "process" else [])
    slugs = ("flaky", "alpha")
    # seed 1 of flaky fails inside a multi-paper run (a failing default written into the scratch paper)
    src = papers / "flaky" / "reproduce.py"
    src.write_text(src.read_text().replace("fail_seed: int = -1", "fail_seed: int = 1"))
    for m in [m for m in sys.modules if m.startswith("execpkg.flaky")]:
        del sys.modules[m]
    registry._REGISTRY.pop("flaky", None)
    out2 = tmp_path / "o2"
    assert main(["reproduce", *slugs, "--seeds", "2", "--out", str(out2), *extra]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    log = out2 / "flaky" / "seed1" / "error.log"
    assert log.exists() and "ZeroDivisionError" in log.read_text() and "Traceback" in log.read_text()
    assert err[-2].startswith("icml25: internal error in flaky seed 1: ZeroDivisionError: division by zero"), err
    assert str(log) in err[-1] and "--debug" in err[-1]
    assert "4 tasks: 3 ran, 0 skipped, 1 failed" in "\n".join(err)
    assert (out2 / "flaky" / "seed0" / "report.json").exists() and not (out2 / "flaky" / "report.json").exists()
    for p in ("alpha/report.json", "alpha/seed0/report.json", "alpha/seed1/report.json"):
        assert (out2 / p).exists(), p
    assert "alpha" in (out2 / "index.md").read_text() and "flaky" not in (out2 / "index.md").read_text()
    # --debug re-raises the worker's exception
    with pytest.raises(ZeroDivisionError):
        main(["reproduce", "flaky", "--seeds", "2", "--out", str(out2), "--force", "--debug", *extra])


def test_executor_usage_errors(papers, tmp_path, capsys) -> None:
    for argv, msg in [(["--jobs", "2"], "--jobs needs --executor process or ray"),
                      (["--ray-address", "auto"], "--ray-address needs --executor ray"),
                      (["--executor", "threads"], "argument --executor: invalid choice: 'threads'"),
                      (["--executor", "process", "--jobs", "0"], "argument --jobs: must be an integer >= 1")]:
        assert main(["reproduce", "alpha", "--out", str(tmp_path / "o"), *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and msg in err[0], err
    assert not (tmp_path / "o" / "alpha").exists()


def test_a_dying_worker_takes_no_other_task_with_it(papers, tmp_path, capsys) -> None:
    src = papers / "flaky" / "reproduce.py"
    src.write_text(src.read_text().replace("crash_seed: int = -1", "crash_seed: int = 0"))
    out = tmp_path / "o"
    assert main(["reproduce", "flaky", "alpha", "--seeds", "2", "--out", str(out), "--executor", "process",
                 "--jobs", "2"]) == 1
    err = capsys.readouterr().err
    assert "4 tasks: 3 ran, 0 skipped, 1 failed" in err and "internal error in flaky seed 0: " in err
    assert "BrokenProcessPool" in (out / "flaky" / "seed0" / "error.log").read_text()
    for p in ("alpha/report.json", "flaky/seed1/report.json"):
        assert (out / p).exists(), p


TORCH_PAPER = textwrap.dedent('''
    from icml25.core import Report, reproduction

    @reproduction(slug="lazytorch", title="Lazy torch", arxiv="0000.00009", extras=("torch",))
    def reproduce(scale, seed, out, config):
        import torch  # imported only here, after the runner seeded the run

        r = Report("lazytorch", "Lazy torch")
        r.add_claim("T1", "a draw of torch's global generator", None, float(torch.rand(())), "within", (0.0, 1.0),
                    kind="check")
        return r
''')


@pytest.mark.skipif(not has("torch"), reason="torch is not installed")
@pytest.mark.long  # over ~10 s: CI's second phase (make test-long)
def test_torch_imported_lazily_by_a_paper_is_seeded(papers, tmp_path) -> None:
    """Fresh worker processes (torch not imported before the paper runs) give torch.manual_seed(seed)'s draw."""
    import torch

    (papers / "lazytorch").mkdir()
    (papers / "lazytorch" / "__init__.py").write_text("")
    (papers / "lazytorch" / "reproduce.py").write_text(TORCH_PAPER)
    registry._REGISTRY.pop("lazytorch", None)
    runs = []
    for k in range(2):
        out = tmp_path / f"lazy{k}"
        assert main(["reproduce", "lazytorch", "--seed", "3", "--out", str(out), "--executor", "process"]) == 0
        runs.append(json.loads((out / "lazytorch" / "report.json").read_text())["claims"][0]["measured"])
    torch.manual_seed(3)
    assert runs[0] == runs[1] == pytest.approx(float(torch.rand(())), abs=0)


CONFIG_THREADS_PAPER = textwrap.dedent('''
    import os
    from dataclasses import dataclass
    from icml25.core import Report, reproduction

    @dataclass(frozen=True)
    class Config:
        torch_threads: int = 2  # the paper's own thread count: it wins over the registry's threads=1
        @classmethod
        def quick(cls): return cls()
        @classmethod
        def full(cls): return cls()

    @reproduction(slug="cfgthreads", title="Config threads", arxiv="0000.00008", config=Config)
    def reproduce(scale, seed, out, config):
        import sys
        torch = sys.modules.get("torch")
        r = Report("cfgthreads", "Config threads")
        r.add_claim("T1", "runs", None, True, "is_true", kind="check")
        r.add_table("threads", [dict(omp=os.environ.get("OMP_NUM_THREADS"),
                                     torch=torch.get_num_threads() if torch is not None else None)])
        return r
''')


def test_task_threads_prefers_the_config_field() -> None:
    from dataclasses import make_dataclass

    from icml25.run.executors import task_threads

    assert task_threads(None, 3) == 3
    assert task_threads({"n": 1}, 3) == 3
    assert task_threads({"threads": 2}, 1) == 2 and task_threads({"torch_threads": 4}, 1) == 4
    assert task_threads({"threads": 0}, 1) == 1 and task_threads({"threads": True}, 1) == 1
    assert task_threads(make_dataclass("C", [("torch_threads", int)])(5), 1) == 5


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_the_config_thread_count_is_applied_and_restored(papers, tmp_path, executor) -> None:
    (papers / "cfgthreads").mkdir()
    (papers / "cfgthreads" / "__init__.py").write_text("")
    (papers / "cfgthreads" / "reproduce.py").write_text(CONFIG_THREADS_PAPER)
    registry._REGISTRY.pop("cfgthreads", None)
    torch = sys.modules.get("torch")
    before = (os.environ.get("OMP_NUM_THREADS"), torch.get_num_threads() if torch is not None else None)
    for extra, want in [((), "2"), (("--set", "torch_threads=1"), "1")]:
        out = tmp_path / f"o{want}"
        assert main(["reproduce", "cfgthreads", "--out", str(out), "--executor", executor, *extra]) == 0
        row = json.loads((out / "cfgthreads" / "report.json").read_text())["tables"]["threads"][0]
        assert row["omp"] == want
        assert row["torch"] in (None, int(want))
    assert (os.environ.get("OMP_NUM_THREADS"), torch.get_num_threads() if torch is not None else None) == before
