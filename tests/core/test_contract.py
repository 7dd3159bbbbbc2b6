"""The registry contract suite: runs over every registered reproduction, so it grows with the papers."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from icml25.core import Scale
from icml25.core.claims import KINDS
from icml25.core.optional import EXTRA_MODULES
from icml25.core.registry import get_reproduction, list_reproductions
from icml25.testing import quick_report, run_without

SLUGS = [r.slug for r in list_reproductions()]


def _group(slug: str):  # keep one paper's tests on one xdist worker so its quick report is computed once
    return pytest.param(slug, marks=pytest.mark.xdist_group(slug), id=slug)


@pytest.mark.parametrize("slug", [_group(s) for s in SLUGS])
def test_quick_report_is_valid(slug: str) -> None:
    rep = quick_report(slug)
    assert rep.slug == slug
    assert rep.claims, "a reproduction must state at least one claim"
    ids = [c.id for c in rep.claims]
    assert len(ids) == len(set(ids))
    for c in rep.claims:
        assert c.statement
        assert c.kind in KINDS, f"claim {c.id} must declare kind= one of {KINDS}"
        if c.paper_value is not None:
            assert c.source.strip(), f"claim {c.id}: paper_value without source (where the paper prints it)"
        if c.reference_value is not None:
            assert c.reference_source.strip(), f"claim {c.id}: reference_value without reference_source"
        assert c.measured is not None, f"claim {c.id} has no measurement"
        if isinstance(c.measured, float) and math.isnan(c.measured):
            # a full-scale claim may be undefined at quick size (e.g. no hard problems yet), but must say why
            assert c.scale == Scale.FULL and c.note, f"claim {c.id} measured NaN without a full scale and a note"
            assert not c.held
    out = Path(rep.config["_out"])
    data = json.loads((out / "report.json").read_text())
    for item in data["claims"]:
        for key in ("id", "statement", "paper_value", "measured", "comparison", "threshold", "scale", "held", "kind",
                    "source", "reference_value", "reference_source", "requires", "status"):
            assert key in item
    assert (out / "report.md").exists()
    assert (out / "config.json").exists()


@pytest.mark.parametrize("slug", [_group(s) for s in SLUGS])
def test_quick_claims_hold(slug: str) -> None:
    rep = quick_report(slug)
    failed = [f"{c.id}: {c.measured_text()} vs {c.threshold_text()}" for c in rep.claims_at(Scale.QUICK)
              if not c.held]
    assert not failed, f"quick claims that did not hold: {failed}"


@pytest.mark.parametrize("slug", [_group(s) for s in SLUGS])
def test_stub_fails_every_quick_paper_claim(slug: str, tmp_path: Path) -> None:
    """The paper's method replaced by its naive baseline must fail every quick ``paper`` claim.

    This is what makes "held" mean something: a claim that the baseline also passes shows nothing about the
    method. A claim that cannot be stubbed says why in ``no_stub_reason``.
    """
    from icml25.core.seeding import seed_everything

    entry = get_reproduction(slug)
    assert entry.stub is not None, (f"{slug}: register a stub with @reproduction_stub(slug={slug!r}) in "
                                    "reproduce.py (the paper's method replaced by its naive baseline)")
    rep = quick_report(slug)
    seed_everything(0)
    stub = entry.stub(scale=Scale.QUICK, seed=0, out=tmp_path, config=entry.default_config(Scale.QUICK))
    stub.resolve_preconditions()
    paper_quick = {c.id for c in rep.claims_at(Scale.QUICK) if c.kind == "paper" and not c.no_stub_reason}
    assert paper_quick or any(c.kind == "paper" for c in rep.claims), f"{slug} states no paper claim"
    passed = [f"{c.id}: {c.measured_text()} vs {c.threshold_text()}" for c in stub.claims
              if c.id in paper_quick and c.held]
    assert not passed, f"{slug}: quick paper claims that the stub (naive baseline) also passes: {passed}"


def _claim_numbers(rep) -> str:  # type: ignore[no-untyped-def]
    """The claims' measurements as canonical JSON (NaN compares equal to NaN; numpy scalars become numbers).

    A claim measured from wall-clock time (``timing=True``) contributes only its id: its number varies by design.
    """
    rows = [{"id": c.id} if c.timing else {"id": c.id, "measured": c.measured, "held": c.held, "per_seed": c.per_seed}
            for c in rep.claims]
    return json.dumps(rows, sort_keys=True, default=str)


#: a paper whose quick run takes longer than this (seconds) checks determinism only under ``-m slow``
#: (a paper's default tests should take about a minute; rstar_math's quick run alone takes minutes);
#: ``ICML25_DETERMINISM_BUDGET_S`` overrides it
DETERMINISM_BUDGET_S = float(os.environ.get("ICML25_DETERMINISM_BUDGET_S", "60"))


def _check_deterministic(slug: str, out: Path) -> None:
    from icml25.run.runner import run_reproduction

    first = quick_report(slug)  # computed once per test run (shared with the other contract tests)
    again = run_reproduction(slug, scale="quick", seed=0, out=out)
    a = json.loads(_claim_numbers(first))
    b = json.loads(_claim_numbers(again))
    diff = [f"{x['id']}: {x['measured']} then {y['measured']}" for x, y in zip(a, b) if x != y]
    assert len(a) == len(b) and not diff, f"{slug}: the same seed gave different numbers: {diff}"


@pytest.mark.parametrize("slug", [_group(s) for s in SLUGS])
def test_quick_reproduction_is_deterministic(slug: str, tmp_path: Path) -> None:
    """Same seed, same numbers: a second quick run at seed 0 reproduces the cached quick report exactly."""
    took = quick_report(slug).wall_time_s or 0.0
    if took > DETERMINISM_BUDGET_S:
        pytest.skip(f"{slug}'s quick run took {took:.0f}s > {DETERMINISM_BUDGET_S:.0f}s; its determinism is "
                    "checked by test_slow_quick_reproduction_is_deterministic (-m slow)")
    _check_deterministic(slug, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("slug", [_group(s) for s in SLUGS])
def test_slow_quick_reproduction_is_deterministic(slug: str, tmp_path: Path) -> None:
    """The same check for every paper, however long its quick run."""
    _check_deterministic(slug, tmp_path)


@pytest.mark.parametrize("slug", SLUGS)
def test_config_presets(slug: str) -> None:
    entry = get_reproduction(slug)
    if entry.config is None:
        pytest.skip("no config")
    import dataclasses

    q, f = entry.config.quick(), entry.config.full()
    assert dataclasses.is_dataclass(q) and type(q).__dataclass_params__.frozen
    assert q != f, "quick and full presets should differ in size"


@pytest.mark.parametrize("slug", SLUGS)
def test_config_validates_its_fields(slug: str) -> None:
    """Every Config validates itself in ``__post_init__`` (so ``--set`` mistakes fail at once with exit 2).

    The presets pass their own validation (constructing them runs it), and a NaN in any float field is refused
    with a ConfigError naming the field.
    """
    import dataclasses

    from icml25.core.config import ConfigError, apply_overrides

    entry = get_reproduction(slug)
    if entry.config is None:
        pytest.skip("no config")
    assert hasattr(entry.config, "__post_init__"), (f"{slug}: {entry.config.__name__} must validate its fields in "
                                                   "__post_init__ (raise ValueError naming the field)")
    for preset in (entry.config.quick(), entry.config.full()):
        dataclasses.replace(preset)  # validates again
        for f in dataclasses.fields(preset):
            value = getattr(preset, f.name)
            if isinstance(value, float):
                with pytest.raises(ConfigError, match=rf"--set {f.name}\b"):
                    apply_overrides(preset, {f.name: "nan"})


@pytest.mark.parametrize("slug", SLUGS)
def test_module_import_without_extra_fails_cleanly(slug: str) -> None:
    """With the paper's extras hidden, importing its modules succeeds or names the pip command to fix it."""
    entry = get_reproduction(slug)
    blocked = [m for e in entry.extras for m in EXTRA_MODULES.get(e, (e,))]
    code = (
        "try:\n"
        f"    import icml25.{slug}.reproduce\n"
        "except ImportError as e:\n"
        "    assert \"pip install 'icml25[\" in str(e), repr(e)\n"
    )
    res = run_without(blocked, code)
    assert res.returncode == 0, res.stderr[-2000:]
