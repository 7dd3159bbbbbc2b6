"""The docstring examples of every module of every paper package (and of ``core`` and ``llm``) run as doctests.

Modules are found on disk (``src/icml25/<package>/**/*.py``), so a new paper's examples are covered without
listing them. A module whose import needs a missing optional extra is skipped (the reason names the extra), and so is
a private module (``_name.py``) that cannot be imported at all: some are scripts run in a subprocess, never imported
(``rstar_math/_sandbox_boot.py``).
"""

from __future__ import annotations

import doctest
import importlib

import pytest

from icml25.core.optional import MissingExtraError
from icml25.core.registry import PACKAGE_ROOT, discover

PACKAGES = [*sorted(discover()), "llm", "core"]


def _modules() -> list[str]:
    names = []
    for pkg in PACKAGES:
        for path in sorted((PACKAGE_ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(PACKAGE_ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__main__" or any(p.startswith(".") for p in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append(".".join(["icml25", *parts]))
    return names


MODULES = _modules()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    try:
        mod = importlib.import_module(name)
    except MissingExtraError as exc:
        pytest.skip(f"missing extra: {exc}")
    except ModuleNotFoundError as exc:
        pytest.skip(f"missing optional module {exc.name!r}")
    except Exception as exc:
        if not name.rsplit(".", 1)[-1].startswith("_"):
            raise
        pytest.skip(f"private module that cannot be imported (a script?): {type(exc).__name__}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out: list[str] = []
    tests = finder.find(mod, name)
    for test in tests:
        runner.run(test, out=out.append)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, f"{res.failed} of {res.attempted} docstring examples of {name} failed:\n" + "".join(out)


def test_modules_are_found() -> None:
    assert "icml25.core.validation" in MODULES and "icml25.llm.base" in MODULES
    assert all(any(m.startswith(f"icml25.{p}") for m in MODULES) for p in PACKAGES)


@pytest.mark.parametrize("pkg", sorted(discover()))
def test_every_paper_has_docstring_examples(pkg: str) -> None:
    """Each paper shows how to call it: its public modules hold at least one docstring example (run above)."""
    finder = doctest.DocTestFinder(exclude_empty=True)
    count = 0
    for name in (m for m in MODULES if m == f"icml25.{pkg}" or m.startswith(f"icml25.{pkg}.")):
        if name.rsplit(".", 1)[-1].startswith("_") and name != f"icml25.{pkg}":
            continue
        try:
            mod = importlib.import_module(name)
        except (MissingExtraError, ModuleNotFoundError):
            continue
        count += sum(len(t.examples) for t in finder.find(mod, name))
    assert count > 0, f"icml25.{pkg} has no docstring examples; add an Examples block to its public API"
