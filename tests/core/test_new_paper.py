"""A new paper needs no edit outside its folder (src/icml25/README.md, "What a new paper adds").

A scratch package holds one paper folder laid out as the template page says (``__init__.py`` with ``__all__``, an
algorithm module, ``reproduce.py`` with Config quick/full/paper + plan(), a stub, ``cli.py``) and a scratch tests
root with its ``bad_input_cases.py``. Pointing the registry at that package (as a second checkout would) is all it
takes for discovery, ``icml25 list`` rows, ``run_reproduction``, the written report and its verdict, the index,
``--dry-run`` plans, the per-paper CLI tool and the bad-input fuzz to work.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from icml25.core import registry
from icml25.core.claims import Report, Scale
from icml25.run.cli import main

INIT = '''
"""Toy: the sample mean of a normal sample, the paper of tests/core/test_new_paper.py."""

from .estimator import sample_mean

__all__ = ["sample_mean"]
'''

ESTIMATOR = '''
"""The estimator of the toy paper."""

from icml25.core.validation import check_array


def sample_mean(x):
    """The sample mean of the 1-D array ``x``.

    Examples
    --------
    >>> sample_mean([1.0, 3.0])
    2.0
    """
    return float(check_array(x, "x", ndim=1).mean())
'''

REPRODUCE = '''
"""The toy reproduction: Config, registration, the order of the stages."""

from dataclasses import dataclass

import numpy as np

from icml25.core import Report, reproduction
from icml25.core.plan import Needs, Plan, UnitCost
from icml25.core.registry import reproduction_stub

from .estimator import sample_mean

TITLE = "Toy: Means of Normal Samples"


@dataclass(frozen=True)
class Config:
    n: int = 400  # sample size
    threads: int = 1  # torch/BLAS threads of the run (the runner applies them)

    def __post_init__(self):
        if not isinstance(self.n, int) or self.n < 10:
            raise ValueError(f"n must be an integer >= 10, got {self.n!r}")

    @classmethod
    def quick(cls):
        return cls()

    @classmethod
    def full(cls):
        return cls(n=4000)

    @classmethod
    def paper(cls):
        return cls(n=40000)  # the paper's sample size

    def plan(self):
        return Plan(slug="toy", scale="quick", stages=[f"draw {self.n} normal values", "claims"],
                    datasets=["synthetic N(1, 1) sample, generated from the seed"],
                    needs=Needs(cpu_cores=1, ram_gb=0.1, disk_gb=0.01),
                    costs=[UnitCost("sampling", "draw", self.n, 2e-8, "2-core CPU, measured once")])


@reproduction(slug="toy", title=TITLE, arxiv="0000.00042", config=Config)
def reproduce(scale, seed, out, config, stub=False):
    rng = np.random.default_rng(seed)
    x = rng.normal(1.0, 1.0, size=config.n)
    report = Report(slug="toy", title=TITLE)
    est = 0.0 if stub else sample_mean(x)
    report.add_claim("Q1", "the sample mean recovers the mean 1", 1.0, est, "within", (0.8, 1.2), kind="paper",
                     source="abstract", headline=True)
    report.add_claim("C1", "the sample is finite", None, bool(np.isfinite(x).all()), "is_true", kind="check")
    report.add_table("sample", [{"n": config.n, "mean": est}])
    (out / "sample.png").write_bytes(b"not really a png")
    report.add_figure("sample", out / "sample.png")
    return report


@reproduction_stub(slug="toy")
def reproduce_stub(scale, seed, out, config):
    return reproduce(scale, seed, out, config, stub=True)
'''

CLI = '''
"""``icml25 toy mean X...``: the sample mean of numbers given on the command line."""

import argparse

from icml25.core.threads import thread_limits

from .estimator import sample_mean


def main(argv=None):
    parser = argparse.ArgumentParser(prog="icml25 toy")
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("mean")
    m.add_argument("values", nargs="+", type=float)
    args = parser.parse_args(argv)
    with thread_limits(1):
        print(f"mean {sample_mean(args.values):g}")
    return 0
'''

CASES = '''
import numpy as np

from icml25.testing import ARRAY, BadInputCase

CASES = [BadInputCase("sample_mean", lambda: {"x": np.array([1.0, 2.0, 3.0])}, {"x": ARRAY})]
'''


@pytest.fixture
def new_paper(tmp_path, monkeypatch):
    """A scratch package ``newpkg`` with the paper ``toy``, and a scratch tests root with ``toy/``."""
    pkg = tmp_path / "newpkg"
    (pkg / "toy").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for name, text in [("__init__.py", INIT), ("estimator.py", ESTIMATOR), ("reproduce.py", REPRODUCE),
                       ("cli.py", CLI)]:
        (pkg / "toy" / name).write_text(textwrap.dedent(text).lstrip())
    tests_root = tmp_path / "tests"
    (tests_root / "toy").mkdir(parents=True)
    (tests_root / "toy" / "bad_input_cases.py").write_text(textwrap.dedent(CASES).lstrip())
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "PACKAGE_ROOT", pkg)
    monkeypatch.setattr(registry, "ROOT_PACKAGE", "newpkg")
    monkeypatch.setenv("ICML25_TESTS_ROOT", str(tests_root))
    for m in [m for m in sys.modules if m.startswith("newpkg")]:
        del sys.modules[m]
    registry._REGISTRY.pop("toy", None)
    src = str(Path(registry.__file__).resolve().parents[2])  # worker processes import icml25 from here
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([src, str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    yield pkg
    registry._REGISTRY.pop("toy", None)


def _list_rows(capsys, out: Path) -> dict[str, dict]:
    capsys.readouterr()
    assert main(["list", "--json", "--out", str(out)]) == 0
    return {r["slug"]: r for r in json.loads(capsys.readouterr().out)}


def test_discovery_and_list_rows_without_importing(new_paper, tmp_path, capsys) -> None:
    found = registry.discover()
    assert list(found) == ["toy"]
    entry = found["toy"]
    assert (entry.title, entry.arxiv, entry.extras, entry.threads) == ("Toy: Means of Normal Samples", "0000.00042",
                                                                      (), 1)
    assert "newpkg.toy.reproduce" not in sys.modules  # discovery reads the file with ast
    row = _list_rows(capsys, tmp_path / "reports")["toy"]
    assert row["title"] == "Toy: Means of Normal Samples" and row["verdict"] == "not run"
    assert main(["list"]) == 0 and "toy" in capsys.readouterr().out


def test_run_reproduction_writes_the_report_and_the_verdict(new_paper, tmp_path, capsys) -> None:
    from icml25.core.report import read_report
    from icml25.core.verdict import recorded_verdict, verdict_of
    from icml25.run.runner import run_reproduction

    out = tmp_path / "reports"
    rep = run_reproduction("toy", scale="quick", seed=0, out=out)
    assert isinstance(rep, Report) and rep.scale is Scale.QUICK and rep.config == {"n": 400, "threads": 1}
    folder = out / "toy"
    assert {p.name for p in folder.iterdir()} >= {"report.md", "report.json", "config.json", "sample.png"}
    again = read_report(folder / "report.json")
    assert [c.id for c in again.claims] == ["Q1", "C1"] and again.claims[0].held
    assert verdict_of(again).verdict == "reproduced"
    assert "Toy: Means of Normal Samples" in (folder / "report.md").read_text()
    # the stub (the paper's naive baseline) makes the paper claim fail, as the contract suite requires
    entry = registry.get_reproduction("toy")
    stub = entry.stub(scale=Scale.QUICK, seed=0, out=tmp_path, config=entry.default_config("quick"))
    assert not stub.claims[0].held
    # icml25 list shows the fresh verdict; icml25 report writes the index and records the verdict in the package
    assert _list_rows(capsys, out)["toy"]["verdict"] == "reproduced"
    assert main(["report", "--out", str(out), "--record"]) == 0
    assert "toy" in (out / "index.md").read_text()
    assert (new_paper / "toy" / "verdict.json").exists() and recorded_verdict("toy").verdict == "reproduced"
    assert _list_rows(capsys, tmp_path / "nowhere")["toy"]["verdict"] == "reproduced"  # without reports/
    # a verdict recorded later keeps the date of the run (report.json's time), not the date of the recording
    import os

    os.utime(folder / "report.json", (4102444800, 4102444800))  # a run finished on 2100-01-01 (UTC)
    assert main(["report", "--out", str(out), "--record"]) == 0
    assert recorded_verdict("toy").date == "2100-01-01"


def test_the_cli_runs_it_in_a_worker_process_with_seeds(new_paper, tmp_path, capsys) -> None:
    out = tmp_path / "reports"
    assert main(["reproduce", "toy", "--seeds", "2", "--out", str(out), "--executor", "process", "--set",
                 "n=200"]) == 0
    assert "2 tasks: 2 ran, 0 skipped, 0 failed" in capsys.readouterr().err
    agg = json.loads((out / "toy" / "report.json").read_text())
    assert agg["seed"] == [0, 1] and agg["config"]["n"] == 200
    assert (out / "toy" / "seed1" / "report.json").exists() and (out / "toy" / "sample.png").exists()


def test_dry_run_plans_of_every_preset(new_paper, capsys) -> None:
    for scale, n in [("quick", 400), ("full", 4000), ("paper", 40000)]:
        plan = registry.get_reproduction("toy").plan(scale)
        assert plan.slug == "toy" and plan.scale == scale and plan.stages[0] == f"draw {n} normal values"
        assert main(["reproduce", "toy", "--dry-run", "--scale", scale]) == 0
        text = capsys.readouterr().out
        assert f"draw {n} normal values" in text
    assert main(["plan", "toy", "--json", "--set", "n=50"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["stages"][0] == "draw 50 normal values"


def test_the_papers_own_cli_tool_and_bad_input_fuzz(new_paper, capsys) -> None:
    import importlib

    from icml25.testing import fuzz

    assert main(["toy", "mean", "1", "2", "6"]) == 0
    assert capsys.readouterr().out.strip() == "mean 3"
    cases = fuzz.load_cases(fuzz.cases_path("toy"))
    res = fuzz.check_package(importlib.import_module("newpkg.toy"), cases)
    assert not res.failures and res.covered == res.callables == 1 and res.bad_inputs > 0
