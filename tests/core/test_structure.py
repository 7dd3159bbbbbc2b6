"""Structure meta-tests: every paper folder has tests, a README with the fixed sections, a registered
reproduction, resolvable ``__all__``, SOURCE.md beside data, and imports no other paper."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from icml25.core.registry import PACKAGE_ROOT, list_reproductions
from icml25.run.cli import papers_markdown

ROOT = Path(__file__).resolve().parents[2]
SLUGS = [r.slug for r in list_reproductions()]
README_SECTIONS = ["What it does", "Usage", "Can I use?", "Implementation details", "Results",
                   "Deviations from the paper"]
#: sub-packages of icml25 that are shared layers, not papers
SHARED_PACKAGES = {"core", "llm", "run", "testing"}


def test_registered_slugs_are_unique_and_titled() -> None:
    entries = list_reproductions()
    assert len({r.slug for r in entries}) == len(entries) and entries
    for r in entries:
        assert r.title.strip(), f"{r.slug}: @reproduction(title=...) must be a literal or a module-level constant"


def test_every_paper_folder_registers_a_reproduction() -> None:
    folders = {p.name for p in PACKAGE_ROOT.iterdir()
               if p.is_dir() and (p / "__init__.py").exists() and p.name not in SHARED_PACKAGES}
    assert folders == set(SLUGS)


@pytest.mark.parametrize("slug", SLUGS)
def test_paper_has_tests_folder(slug: str) -> None:
    assert (ROOT / "tests" / slug).is_dir(), f"tests/{slug}/ is missing"
    assert list((ROOT / "tests" / slug).glob("test_*.py")), f"tests/{slug}/ has no test_*.py"


@pytest.mark.parametrize("slug", SLUGS)
def test_paper_readme_sections(slug: str) -> None:
    readme = PACKAGE_ROOT / slug / "README.md"
    assert readme.exists()
    headings = [h.strip() for h in re.findall(r"^#+\s*(.+)$", readme.read_text(encoding="utf-8"), re.M)]
    for section in README_SECTIONS:
        assert any(h.startswith(section) for h in headings), f"{slug}/README.md lacks section {section!r}"


@pytest.mark.parametrize("slug", SLUGS)
def test_public_api_resolves(slug: str) -> None:
    mod = importlib.import_module(f"icml25.{slug}")
    assert mod.__doc__, f"icml25.{slug} needs a module docstring"
    names = getattr(mod, "__all__", None)
    assert names, f"icml25.{slug} must define __all__"
    for name in names:
        obj = getattr(mod, name)
        if callable(obj):
            assert obj.__doc__, f"icml25.{slug}.{name} has no docstring"


@pytest.mark.parametrize("slug", SLUGS)
def test_data_folders_have_source(slug: str) -> None:
    for data in (PACKAGE_ROOT / slug).rglob("data"):
        if data.is_dir():
            assert (data / "SOURCE.md").exists(), f"{data} has no SOURCE.md (origin and licence)"


@pytest.mark.parametrize("slug", SLUGS)
def test_no_cross_paper_imports(slug: str) -> None:
    pattern = re.compile(r"icml25\.([a-z_0-9]+)")
    for py in (PACKAGE_ROOT / slug).rglob("*.py"):
        for m in pattern.findall(py.read_text(encoding="utf-8")):
            assert m not in SLUGS or m == slug, f"{py} imports icml25.{m}; move shared code to core/ or llm/"


def test_readme_table_is_generated() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert papers_markdown() in text, "README's table of papers is stale: paste `icml25 list --markdown`"


def _readme_script():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("update_readme", ROOT / "scripts" / "update_readme.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


@pytest.mark.parametrize("slug", SLUGS)
def test_paper_readme_opens_with_its_recorded_verdict(slug: str) -> None:
    """The first line of each paper's README is its verdict, generated from its verdict.json (`make readme`)."""
    first = (PACKAGE_ROOT / slug / "README.md").read_text(encoding="utf-8").split("\n", 1)[0]
    assert first == _readme_script().verdict_line(slug), f"{slug}/README.md's verdict line is stale: run `make readme`"


#: file names the template replaced (src/icml25/README.md): the stage module is experiment.py (or experiment/),
#: data loading data.py, paper-specific validation _validation.py
LEGACY_NAMES = {"_experiments.py": "experiment.py", "_experiment.py": "experiment.py",
                "datasets.py": "data.py", "dataset.py": "data.py", "_checks.py": "_validation.py"}
#: the longest function the template allows in reproduce.py's stage order and in the experiment's stage functions
MAX_STAGE_LINES = 80
#: reproduce.py's top level: the Config class and short functions (the registration, the stub, the stage order)
MAX_REPRODUCE_FUNCTION_LINES = 30


def _functions(tree: ast.AST) -> list[tuple[str, int]]:
    return [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


@pytest.mark.parametrize("slug", SLUGS)
def test_paper_folder_follows_the_template(slug: str) -> None:
    """The file roles of src/icml25/README.md: reproduce.py holds Config, the registration, the stub and the order
    of the stages; the stages live in experiment.py or experiment/ as functions under MAX_STAGE_LINES lines; the
    fixed names abstract.py, data.py, _validation.py; no file under a name the template replaced."""
    folder = PACKAGE_ROOT / slug
    for name in ("__init__.py", "reproduce.py", "abstract.py", "README.md"):
        assert (folder / name).is_file(), f"{slug}: {name} is missing (see src/icml25/README.md)"
    stages = [folder / "experiment.py"] if (folder / "experiment.py").is_file() else \
        sorted((folder / "experiment").glob("*.py"))
    assert stages, f"{slug}: the stage functions belong in experiment.py or an experiment/ package"
    for old, new in LEGACY_NAMES.items():
        assert not (folder / old).exists(), f"{slug}: {old} is named {new} in the template"
    tree = ast.parse((folder / "reproduce.py").read_text(encoding="utf-8"))
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    assert classes == ["Config"], f"{slug}: reproduce.py defines the classes {classes}; only Config belongs there"
    long = [f"{n.name} ({n.end_lineno - n.lineno + 1} lines)" for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > MAX_REPRODUCE_FUNCTION_LINES]
    assert not long, f"{slug}: reproduce.py holds the order of the stages only; move {long} to the experiment"
    for path in stages:
        long = [f"{name} ({n} lines)" for name, n in _functions(ast.parse(path.read_text(encoding="utf-8")))
                if n > MAX_STAGE_LINES]
        assert not long, f"{slug}: {path.name}: stage functions over {MAX_STAGE_LINES} lines: {long}"


@pytest.mark.parametrize("slug", SLUGS)
def test_no_paper_sets_process_wide_threads(slug: str) -> None:
    """Threads are the runner's (Config.threads or @reproduction(threads=)) or a ``thread_limits`` block, which
    restores them; ``torch.set_num_threads`` in a paper would change the process for everything after it."""
    hits = [f"{p.relative_to(PACKAGE_ROOT)}:{i}" for p in (PACKAGE_ROOT / slug).rglob("*.py")
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if "set_num_threads(" in line and not line.lstrip().startswith("#")]
    assert not hits, f"use icml25.core.threads.thread_limits instead of torch.set_num_threads: {hits}"
