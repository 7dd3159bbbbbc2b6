"""The import graph of the shared layers, read with :mod:`ast` (imports inside functions included).

- ``icml25.core`` has no import cycle, not even one hidden by a function-level import;
- core imports nothing from ``icml25.run``, ``icml25.testing``, pytest, hypothesis or a paper;
- ``icml25.llm`` imports no paper and nothing from ``icml25.run`` or ``icml25.testing``;
- no paper folder imports another paper, ``icml25.run`` or ``icml25.testing`` (its ``tests/`` folder may);
- ``import icml25.testing`` does not import pytest or hypothesis (they are imported inside the helpers that use them).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import icml25

PACKAGE_ROOT = Path(icml25.__file__).resolve().parent
SHARED = ("core", "run", "testing", "llm")
PAPERS = sorted(p.name for p in PACKAGE_ROOT.iterdir()
                if p.is_dir() and (p / "__init__.py").exists() and p.name not in SHARED)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _all_modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE_ROOT.rglob("*.py")}


MODULES = _all_modules()


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every module ``path`` imports, anywhere in the file, as (absolute dotted name, line)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from pkg import sub`` imports the sub-module ``pkg.sub`` when there is one
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
            found += [(s, node.lineno) for s in subs]
            if len(subs) < len(node.names):
                found.append((target, node.lineno))
    return found


def _graph(prefix: str) -> dict[str, set[str]]:
    """Edges between the modules under ``prefix`` (a module importing its own package is not an edge)."""
    graph: dict[str, set[str]] = {}
    for mod, path in MODULES.items():
        if mod != prefix and not mod.startswith(prefix + "."):
            continue
        graph[mod] = {t for t, _ in _imports(path)
                      if (t == prefix or t.startswith(prefix + ".")) and t in MODULES and not mod.startswith(t + ".")
                      and t != mod}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


@pytest.mark.parametrize("layer", SHARED)
def test_no_import_cycle(layer):
    cycles = _cycles(_graph(f"icml25.{layer}"))
    assert not cycles, f"import cycles in icml25.{layer} (function-level imports included): {cycles}"


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _offending(layer_prefix: str, forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for mod, path in sorted(MODULES.items()):
        if mod != layer_prefix and not mod.startswith(layer_prefix + "."):
            continue
        for target, line in _imports(path):
            if any(target == f or target.startswith(f + ".") for f in forbidden):
                bad.append(f"{path.relative_to(PACKAGE_ROOT.parent)}:{line} imports {target}")
    return bad


def test_core_imports_no_orchestration_test_tool_or_paper():
    forbidden = ("icml25.run", "icml25.testing", "pytest", "hypothesis", "_pytest") + tuple(
        f"icml25.{p}" for p in PAPERS)
    assert not _offending("icml25.core", forbidden)


def test_llm_imports_no_orchestration_test_tool_or_paper():
    forbidden = ("icml25.run", "icml25.testing", "pytest", "hypothesis") + tuple(f"icml25.{p}" for p in PAPERS)
    assert not _offending("icml25.llm", forbidden)


@pytest.mark.parametrize("slug", PAPERS)
def test_paper_imports_no_other_paper_nor_run_nor_testing(slug):
    forbidden = ("icml25.run", "icml25.testing") + tuple(f"icml25.{p}" for p in PAPERS if p != slug)
    assert not _offending(f"icml25.{slug}", forbidden)


def test_import_resolution_on_known_edges():
    edges = {t for t, _ in _imports(MODULES["icml25.run.runner"])}
    assert {"icml25.core.claims", "icml25.run.executors"} <= edges


def test_importing_testing_does_not_import_pytest():
    code = ("import sys, icml25.testing, icml25.testing.fuzz; "
            "print(sorted(m for m in ('pytest', 'hypothesis', '_pytest') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
