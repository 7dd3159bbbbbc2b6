"""CLI: list, reproduce, errors (one line, exit 2), against a scratch package with a demo reproduction."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from icml25.core import registry
from icml25.core.cli import main

DEMO = textwrap.dedent('''
    from dataclasses import dataclass
    from icml25.core import Report, reproduction

    @dataclass(frozen=True)
    class Config:
        n: int = 10  # size
        @classmethod
        def quick(cls): return cls(n=10)
        @classmethod
        def full(cls): return cls(n=100)

    @reproduction(slug="demo", title="Demo", arxiv="0000.00000", extras={extras}, config=Config)
    def reproduce(scale, seed, out, config):
        import numpy as np
        rng = np.random.default_rng(seed)
        m = float(rng.normal(size=config.n).mean())
        r = Report("demo", "Demo")
        r.add_claim("Q1", "mean is near zero", 0.0, abs(m), "<=", 1.0, kind="mechanism", source="Table 1")
        r.add_claim("Q2", "n is large", None, config.n, ">=", 50, kind="mechanism")
        return r
''')


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    def make(extras=()):
        pkg = tmp_path / "scratchpkg"
        (pkg / "demo").mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "demo" / "__init__.py").write_text("")
        (pkg / "demo" / "reproduce.py").write_text(DEMO.replace("{extras}", repr(tuple(extras))))
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setattr(registry, "PACKAGE_ROOT", pkg)
        monkeypatch.setattr(registry, "ROOT_PACKAGE", "scratchpkg")
        for m in [m for m in sys.modules if m.startswith("scratchpkg")]:
            del sys.modules[m]
        registry._REGISTRY.pop("demo", None)
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
])
def test_user_errors_one_line_exit_2(scratch, tmp_path, capsys, argv, msg) -> None:
    scratch()
    assert main(argv + ["--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err  # one line, nothing run before the error
    assert msg in err[-1] and "Traceback" not in "\n".join(err)


def test_missing_extra_exit_2(scratch, tmp_path, capsys) -> None:
    scratch(extras=("no_such_extra_pkg",))
    assert main(["reproduce", "demo", "--out", str(tmp_path / "o")]) == 2
    assert "pip install 'icml25[no_such_extra_pkg]'" in capsys.readouterr().err


def test_list_is_fast_and_imports_no_torch() -> None:
    # CPU time of the command itself (import + list), which does not depend on the load of a shared machine
    code = ("import sys, time; t=time.process_time(); from icml25.core.cli import main; main(['list']); "
            "assert 'torch' not in sys.modules, 'icml25 list imported torch'; "
            "print(time.process_time()-t, file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert float(res.stderr.strip().splitlines()[-1]) < 1.0
    assert "hier_decoding" in res.stdout


def test_cli_subprocess_smoke() -> None:
    res = subprocess.run([sys.executable, "-m", "icml25.core.cli", "reproduce", "nosuch"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip().startswith("icml25: error: unknown paper slug")
    assert "Traceback" not in res.stderr
    res = subprocess.run([sys.executable, "-m", "icml25.core.cli", "list", "--markdown"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.startswith("| slug |")
