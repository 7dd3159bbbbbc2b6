"""CLI: list, reproduce, user errors (one line, exit 2) vs bugs (exit 1, error.log), against a scratch package."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from icml25.core import registry
from icml25.run.cli import main

DEMO = textwrap.dedent('''
    from dataclasses import dataclass
    from icml25.core import Report, reproduction
    from icml25.core.config import validate_fields
    from icml25.core.data import DataNotFoundError

    @dataclass(frozen=True)
    class Config:
        n: int = 10  # size
        n_cal: int = 5  # must be < n
        mode: str = "ok"  # how to fail: ok, zero, value, linalg, data, timeout
        def __post_init__(self):
            validate_fields(self, n=dict(int=True, low=1), n_cal=dict(int=True, low=1),
                            mode=dict(options=["ok", "zero", "value", "linalg", "data", "timeout"]))
            if self.n_cal >= self.n:
                raise ValueError(f"n_cal must be < n, got n_cal={self.n_cal}, n={self.n}")
        @classmethod
        def quick(cls): return cls(n=10)
        @classmethod
        def full(cls): return cls(n=100)

    @reproduction(slug="demo", title="Demo", arxiv="0000.00000", extras={extras}, config=Config)
    def reproduce(scale, seed, out, config):
        import numpy as np
        (out / "partial.txt").write_text("written before any failure")
        if config.mode == "zero":
            1 / 0
        if config.mode == "value":
            {}["missing"] if seed < 0 else np.log(-1.0) and int("x")
        if config.mode == "linalg":
            np.linalg.inv(np.zeros((2, 2)))
        if config.mode == "data":
            raise DataNotFoundError("data file 'x.csv' of 'demo' not found; pass path=... to a local copy")
        if config.mode == "timeout":
            raise TimeoutError("time budget ran out after round 1; raise time_budget_s")
        rng = np.random.default_rng(seed)
        m = float(rng.normal(size=config.n).mean())
        r = Report("demo", "Demo")
        r.add_claim("Q1", "mean is near zero", 0.0, abs(m), "<=", 1.0, kind="mechanism", source="Table 1")
        r.add_claim("Q2", "n is large", None, config.n, ">=", 50, kind="mechanism")
        return r
''')


BROKEN = textwrap.dedent('''
    from icml25.core import reproduction

    @reproduction(slug="broken", title="Broken", arxiv="0000.00001")
    def reproduce(scale, seed, out, config):
        raise KeyError("a bug: a key the code expected is missing")
''')


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    def make(extras=()):
        pkg = tmp_path / "scratchpkg"
        (pkg / "demo").mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "demo" / "__init__.py").write_text("")
        (pkg / "demo" / "reproduce.py").write_text(DEMO.replace("{extras}", repr(tuple(extras))))
        (pkg / "broken").mkdir(exist_ok=True)
        (pkg / "broken" / "__init__.py").write_text("")
        (pkg / "broken" / "reproduce.py").write_text(BROKEN)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setattr(registry, "PACKAGE_ROOT", pkg)
        monkeypatch.setattr(registry, "ROOT_PACKAGE", "scratchpkg")
        for m in [m for m in sys.modules if m.startswith("scratchpkg")]:
            del sys.modules[m]
        registry._REGISTRY.pop("demo", None)
        registry._REGISTRY.pop("broken", None)
        return pkg
    return make


def test_reproduce_writes_report_and_index(scratch, tmp_path, capsys) -> None:
    scratch()
    out = tmp_path / "out"
    assert main(["reproduce", "demo", "--out", str(out), "--seeds", "2", "--json"]) == 0
    data = json.loads((out / "demo" / "report.json").read_text())
    assert [c["held"] for c in data["claims"]] == [True, False]
    assert data["claims"][0]["per_seed"] and len(data["claims"][0]["per_seed"]) == 2
    assert (out / "index.md").exists()
    assert main(["reproduce", "demo", "--out", str(out), "--strict"]) == 1
    assert main(["reproduce", "demo", "--out", str(out), "--strict", "--set", "n=60"]) == 0
    assert json.loads((out / "demo" / "config.json").read_text())["n"] == 60


@pytest.mark.parametrize("argv,msg", [
    (["reproduce", "nosuch"], "unknown paper slug 'nosuch'"),
    (["reproduce", "demo", "--set", "bogus=1"], "unknown key"),
    (["reproduce", "demo", "--set", "n=abc"], "expected an integer"),
    (["reproduce", "demo", "--set", "n=0"], "--set n: n must be >= 1, got 0"),
    (["reproduce", "demo", "--set", "n_cal=10"], "--set n_cal: n_cal must be < n, got n_cal=10, n=10"),
    (["reproduce", "demo", "--set", "mode=nosuch"], "--set mode: mode must be one of 'ok'"),
    (["reproduce", "demo", "--set", "n"], "--set expects key=value"),
    (["reproduce", "demo", "broken", "--set", "n=3"], "--set applies to one paper's config"),
    (["reproduce", "demo", "--seed", "-1"], "argument --seed: must be an integer >= 0, got -1"),
    (["reproduce", "demo", "--seed", "abc"], "argument --seed: expected an integer >= 0, got 'abc'"),
    (["reproduce", "demo", "--seeds", "0"], "argument --seeds: must be an integer >= 1, got 0"),
    (["reproduce", "demo", "--scale", "huge"], "argument --scale: invalid choice: 'huge'"),
    (["reproduce", "demo", "--no-such-option"], "unrecognized arguments: --no-such-option"),
    (["reproduce", "demo", "--set", "mode=data"], "data file 'x.csv' of 'demo' not found"),
    (["reproduce", "demo", "--set", "mode=timeout"], "time budget ran out after round 1"),
])
def test_user_errors_one_line_exit_2(scratch, tmp_path, capsys, argv, msg) -> None:
    scratch()
    assert main(argv + ["--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    if "mode=" not in " ".join(argv) or "nosuch" in " ".join(argv):
        assert len(err) == 1, err  # one line, nothing run before the error
        assert not (tmp_path / "o" / "demo" / "partial.txt").exists()
    assert msg in err[-1] and "Traceback" not in "\n".join(err)
    assert err[-1].startswith(("icml25: error: ", "icml25 reproduce: error: ")), err


def test_config_error_is_fast_and_names_the_field(scratch, tmp_path, capsys) -> None:
    import time

    scratch()
    t0 = time.perf_counter()
    assert main(["reproduce", "demo", "--set", "n=-3", "--out", str(tmp_path / "o")]) == 2
    assert time.perf_counter() - t0 < 1.0
    assert capsys.readouterr().err.strip() == "icml25: error: --set n: n must be >= 1, got -3"


@pytest.mark.parametrize("mode,kind,message", [
    ("zero", "ZeroDivisionError", "division by zero"),
    ("value", "ValueError", "invalid literal for int()"),  # a ValueError inside the body is a bug, not exit 2
    ("linalg", "LinAlgError", "Singular matrix"),
])
def test_internal_error_exit_1_with_error_log_and_nothing_lost(scratch, tmp_path, capsys, mode, kind,
                                                               message) -> None:
    scratch()
    out = tmp_path / "out"
    assert main(["reproduce", "demo", "--out", str(out)]) == 0  # a good run first: its report must survive
    before = (out / "demo" / "report.json").read_text()
    (out / "notes.txt").write_text("mine")
    (out / "demo" / "figure.png").write_bytes(b"png")
    capsys.readouterr()
    with np_errstate():
        assert main(["reproduce", "demo", "--set", f"mode={mode}", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    log = out / "demo" / "error.log"
    assert err[-2].startswith(f"icml25: internal error in demo: {kind}: ") and message in err[-2], err
    assert str(log) in err[-1] and "--debug" in err[-1]
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and kind in text and "reproduce.py" in text
    assert f"'mode': '{mode}'" in text  # the config of the failing run
    assert (out / "demo" / "report.json").read_text() == before
    assert (out / "notes.txt").read_text() == "mine" and (out / "demo" / "figure.png").read_bytes() == b"png"
    assert (out / "demo" / "partial.txt").exists()


def np_errstate():
    import numpy as np

    return np.errstate(all="ignore")


def test_debug_reraises(scratch, tmp_path) -> None:
    scratch()
    with pytest.raises(ZeroDivisionError):
        main(["reproduce", "demo", "--set", "mode=zero", "--out", str(tmp_path / "o"), "--debug"])
    with pytest.raises(ZeroDivisionError):
        main(["--debug", "reproduce", "demo", "--set", "mode=zero", "--out", str(tmp_path / "o")])
    with pytest.raises(KeyError, match="unknown paper slug"):
        main(["--debug", "reproduce", "nosuch", "--out", str(tmp_path / "o")])
    assert (tmp_path / "o" / "demo" / "error.log").exists()


def test_internal_error_in_one_paper_does_not_stop_the_others(scratch, tmp_path, capsys) -> None:
    scratch()
    out = tmp_path / "out"
    assert main(["reproduce", "broken", "demo", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "icml25: internal error in broken: KeyError: 'a bug: a key the code expected is missing'" in err
    assert (out / "broken" / "error.log").exists() and (out / "demo" / "report.json").exists()


def test_unusable_out_exit_2_one_line(scratch, tmp_path, capsys) -> None:
    scratch()
    f = tmp_path / "a_file"
    f.write_text("keep me")
    for out, msg in [(f, "is a file, not a folder"), (f / "sub", "cannot create the folder")]:
        assert main(["reproduce", "demo", "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("icml25: error: --out: ") and msg in err[0], err
    assert f.read_text() == "keep me"
    (tmp_path / "o2").mkdir()
    (tmp_path / "o2" / "demo").write_text("a file where the paper's folder goes")
    assert main(["reproduce", "demo", "--out", str(tmp_path / "o2")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_invalid_preset_is_a_bug_not_a_user_error(scratch, tmp_path, capsys) -> None:
    pkg = scratch()
    src = (pkg / "demo" / "reproduce.py").read_text().replace("return cls(n=10)", "return cls(n=0)")
    (pkg / "demo" / "reproduce.py").write_text(src)
    assert main(["reproduce", "demo", "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "icml25: internal error: ValueError: n must be >= 1, got 0" in err


def test_run_reproduction_errors(scratch, tmp_path) -> None:
    from icml25.core.config import ConfigError
    from icml25.core.errors import ReproductionError, UnknownSlugError, UsageError
    from icml25.run.runner import run_reproduction

    scratch()
    with pytest.raises(UsageError, match="seed must be an integer >= 0, got -1"):
        run_reproduction("demo", seed=-1, out=tmp_path)
    with pytest.raises(UsageError, match="seeds must be an integer >= 1, got 0"):
        run_reproduction("demo", seeds=0, out=tmp_path)
    with pytest.raises(UnknownSlugError, match="unknown paper slug 'nosuch'"):
        run_reproduction("nosuch", out=tmp_path)
    with pytest.raises(ConfigError, match="--set n: n must be >= 1"):
        run_reproduction("demo", out=tmp_path, overrides={"n": "0"})
    with pytest.raises(ReproductionError) as info:
        run_reproduction("demo", out=tmp_path, overrides={"mode": "zero"})
    assert isinstance(info.value.original, ZeroDivisionError) and info.value.__cause__ is info.value.original
    assert info.value.log_path == tmp_path / "demo" / "error.log"


def test_missing_extra_exit_2(scratch, tmp_path, capsys) -> None:
    scratch(extras=("no_such_extra_pkg",))
    assert main(["reproduce", "demo", "--out", str(tmp_path / "o")]) == 2
    assert "pip install 'icml25[no_such_extra_pkg]'" in capsys.readouterr().err


def test_list_is_fast_and_imports_no_torch() -> None:
    # CPU time of the command itself (import + list), which does not depend on the load of a shared machine
    code = ("import sys, time; t=time.process_time(); from icml25.run.cli import main; main(['list']); "
            "assert 'torch' not in sys.modules, 'icml25 list imported torch'; "
            "print(time.process_time()-t, file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert float(res.stderr.strip().splitlines()[-1]) < 1.0
    assert "hier_decoding" in res.stdout


def test_cli_subprocess_smoke() -> None:
    res = subprocess.run([sys.executable, "-m", "icml25.run.cli", "reproduce", "nosuch"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip().startswith("icml25: error: unknown paper slug")
    assert "Traceback" not in res.stderr
    res = subprocess.run([sys.executable, "-m", "icml25.run.cli", "list", "--markdown"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.startswith("| slug |")
