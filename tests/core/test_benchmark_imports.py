"""Every ``icml25`` import in ``benchmarks/`` and ``scripts/`` resolves (the imports are found with :mod:`ast`,
including those inside functions; no benchmark is run).

Benchmarks are not imported by the suite, so a renamed or removed module (e.g. a paper's private helper moved into
``icml25.core``) would otherwise only show when someone runs the benchmark. Checked: the module imports, and each
imported name is one of its attributes (lazy exports included) or a submodule.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import icml25

PACKAGE_ROOT = Path(icml25.__file__).resolve().parent
REPO = PACKAGE_ROOT.parent.parent
FILES = sorted([*REPO.glob("benchmarks/**/*.py"), *REPO.glob("scripts/**/*.py")])


def _resolves(module: str, name: str | None) -> str | None:
    """None when ``from module import name`` (or ``import module``) works, else what is wrong."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "icml25":  # an optional third-party extra that is not installed
            pytest.skip(f"{module} needs {exc.name}")
        return f"module {module} does not exist"
    if name is None or name == "*" or hasattr(mod, name):  # hasattr also runs a package's lazy __getattr__
        return None
    try:
        importlib.import_module(f"{module}.{name}")
        return None
    except ModuleNotFoundError:
        return f"{module} defines no {name}"


def _unresolved(path: Path) -> list[str]:
    missing = []
    for node in ast.walk(ast.parse(path.read_text())):
        pairs: list[tuple[str, str | None]] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "icml25":
            pairs += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            pairs += [(a.name, None) for a in node.names if a.name.split(".")[0] == "icml25"]
        missing += [f"line {node.lineno}: {err}" for m, n in pairs if (err := _resolves(m, n))]
    return missing


def test_there_are_benchmarks_to_check() -> None:
    assert any(p.parts[-3] == "benchmarks" for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_icml25_imports_resolve(path: Path) -> None:
    missing = _unresolved(path)
    assert not missing, f"{path.relative_to(REPO)}: " + "; ".join(missing)


def test_the_checker_catches_a_missing_name(tmp_path: Path) -> None:
    bad = tmp_path / "bench_bad.py"
    bad.write_text("def main():\n    from icml25.core.threads import no_such_helper\n"
                   "from icml25.no_such_module import x\n")
    found = _unresolved(bad)
    assert len(found) == 2 and "no_such_helper" in found[0] + found[1]
