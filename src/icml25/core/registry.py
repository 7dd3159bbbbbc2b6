"""Registry of reproductions: the ``@reproduction`` decorator and discovery of ``icml25/*/reproduce.py``.

Discovery reads each ``reproduce.py`` with :mod:`ast` (the decorator's arguments must be literals), so
``icml25 list`` never imports a paper's module or its heavy extras. :func:`get_reproduction` imports the module
on demand and returns the registered entry.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Reproduction", "reproduction", "reproduction_stub", "list_reproductions", "get_reproduction", "discover",
           "PACKAGE_ROOT"]

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
#: dotted name of the package whose sub-packages hold the papers (tests point both at a scratch package)
ROOT_PACKAGE = "icml25"
_NOT_PAPERS = {"core", "llm", "run", "testing"}

_REGISTRY: dict[str, Reproduction] = {}


@dataclass
class Reproduction:
    """A registered reproduction.

    Attributes
    ----------
    slug, title, arxiv : str
        Identity of the paper.
    extras : tuple of str
        The ``icml25[...]`` extras the reproduction needs.
    config : type or None
        A frozen dataclass with ``quick()`` and ``full()`` classmethods; the CLI applies ``--set`` to it.
    func : callable or None
        ``func(scale, seed, out, config) -> Report``; None when only discovered (not imported yet).
    module : str
        Dotted module path of the ``reproduce.py``.
    stub : callable or None
        The paper's stub: the same reproduction with the paper's method replaced by its naive baseline
        (registered with :func:`reproduction_stub`). Every quick ``paper`` claim must fail on it.
    threads : int
        The torch/BLAS thread count the reproduction runs best with (default 1). ``icml25 reproduce`` sets it in
        every (paper, seed) task and a Ray task reserves that many CPUs, so parallel tasks do not oversubscribe.
    """

    slug: str
    title: str
    arxiv: str = ""
    extras: tuple[str, ...] = ()
    config: type | None = None
    func: Callable[..., Any] | None = None
    module: str = ""
    stub: Callable[..., Any] | None = None
    threads: int = 1
    _extra_meta: dict[str, Any] = field(default_factory=dict)

    def default_config(self, scale: Any) -> Any:
        """The configuration preset for ``scale`` (``Config.quick()``, ``Config.full()`` or ``Config.paper()``).

        None when the reproduction has no config. Raises :class:`icml25.core.errors.UsageError` for ``paper`` when
        the config has no ``paper()`` preset.
        """
        from .claims import Scale
        from .errors import UsageError

        if self.config is None:
            return None
        scale = Scale.parse(scale)
        if scale is Scale.PAPER:
            if not hasattr(self.config, "paper"):
                raise UsageError(f"{self.slug} has no paper-scale preset (Config.paper()); use --scale quick or full")
            return self.config.paper()
        return self.config.full() if scale is Scale.FULL else self.config.quick()

    def plan(self, scale: Any, overrides: dict[str, str] | None = None) -> Any:
        """The dry-run :class:`icml25.core.plan.Plan` of this reproduction at ``scale`` (``config.plan()``).

        Raises UsageError when the config has no ``plan()`` method.
        """
        from .claims import Scale
        from .config import apply_overrides
        from .errors import UsageError

        config = apply_overrides(self.default_config(scale), overrides or {})
        if config is None or not hasattr(config, "plan"):
            raise UsageError(f"{self.slug} has no dry-run plan (Config.plan()); run it without --dry-run")
        # the config does not know which preset it came from: the plan is labelled with the requested scale
        return dataclasses.replace(config.plan(), slug=self.slug, scale=Scale.parse(scale).value)


def reproduction(*, slug: str, title: str, arxiv: str = "", extras: tuple[str, ...] = (),
                 config: type | None = None, threads: int = 1) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a reproduction function under ``slug``.

    The decorated function has the signature ``(scale: Scale, seed: int, out: Path, config) -> Report``; ``out``
    is the paper's own output folder (``<out>/<slug>``). ``config`` is an instance of the ``config`` dataclass
    (``config.quick()``/``config.full()`` with user overrides applied). ``threads`` (a literal integer >= 1,
    default 1) is the torch/BLAS thread count the reproduction runs best with; every task of it runs with it.

    Raises
    ------
    ValueError
        If another function already registered ``slug`` (duplicate names are refused), if ``config`` lacks
        ``quick``/``full`` presets, or if ``threads`` is not an integer >= 1.
    """
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"reproduction {slug!r}: threads must be an integer >= 1, got {threads!r}")
    if config is not None:
        if not dataclasses.is_dataclass(config) or not all(hasattr(config, m) for m in ("quick", "full")):
            raise ValueError(f"reproduction {slug!r}: config must be a dataclass with quick() and full() presets")

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        existing = _REGISTRY.get(slug)
        module = getattr(func, "__module__", "")
        if existing is not None and existing.func is not None and existing.module != module:
            raise ValueError(f"reproduction slug {slug!r} is already registered by {existing.module}")
        stub = existing.stub if existing is not None and existing.module == module else None
        _REGISTRY[slug] = Reproduction(slug=slug, title=title, arxiv=arxiv, extras=tuple(extras), config=config,
                                       func=func, module=module, stub=stub, threads=threads)
        func.__icml25_slug__ = slug  # type: ignore[attr-defined]
        return func

    return deco


def reproduction_stub(*, slug: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the stub of ``slug``'s reproduction: the paper's method replaced by its naive baseline.

    The decorated function has the reproduction's signature ``(scale, seed, out, config) -> Report`` and returns
    the same claims. It exists to show that the claims can fail: the contract suite runs it on the quick config
    and requires every quick ``paper`` claim (without ``no_stub_reason``) to fail. Put it in the paper's
    ``reproduce.py``, after the ``@reproduction`` function.
    """

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        entry = _REGISTRY.get(slug)
        if entry is None or entry.func is None:
            raise ValueError(f"reproduction_stub({slug!r}): register the reproduction with @reproduction first")
        entry.stub = func
        return func

    return deco


def _module_constants(tree: ast.Module) -> dict[str, Any]:
    """Module-level ``NAME = <literal>`` assignments (so ``title=TITLE`` is read without importing)."""
    consts: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                consts[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return consts


def _literal_kwargs(call: ast.Call, consts: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg in ("slug", "title", "arxiv", "extras", "threads"):
            if isinstance(kw.value, ast.Name) and consts and kw.value.id in consts:
                out[kw.arg] = consts[kw.value.id]
                continue
            try:
                out[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                pass
    return out


def _threads(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else 1


def discover(root: Path | None = None) -> dict[str, Reproduction]:
    """Find every ``@reproduction`` in ``<root>/*/reproduce.py`` without importing anything.

    Returns a dict slug -> :class:`Reproduction` (``func`` is None). Raises ValueError on duplicate slugs.
    """
    root = root or PACKAGE_ROOT
    found: dict[str, Reproduction] = {}
    for path in sorted(root.glob("*/reproduce.py")):
        pkg = path.parent.name
        if pkg in _NOT_PAPERS or pkg.startswith("_"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        consts = _module_constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and getattr(dec.func, "id", getattr(dec.func, "attr", "")) == "reproduction":
                    kw = _literal_kwargs(dec, consts)
                    if "slug" not in kw:
                        continue
                    slug = kw["slug"]
                    if slug in found:
                        raise ValueError(f"duplicate reproduction slug {slug!r} in {path} and {found[slug].module}")
                    found[slug] = Reproduction(slug=slug, title=kw.get("title", ""), arxiv=kw.get("arxiv", ""),
                                               extras=tuple(kw.get("extras", ())),
                                               threads=_threads(kw.get("threads", 1)),
                                               module=f"{ROOT_PACKAGE}.{pkg}.reproduce")
    return found


def list_reproductions() -> list[Reproduction]:
    """All discovered reproductions, sorted by slug (nothing is imported)."""
    return [found for _, found in sorted(discover().items())]


def get_reproduction(slug: str) -> Reproduction:
    """Import the reproduction registered under ``slug`` and return it.

    Raises
    ------
    UnknownSlugError
        (a ``KeyError``) with the list of known slugs when ``slug`` is unknown.
    """
    from .errors import UnknownSlugError

    found = discover()
    if slug not in found:
        known = ", ".join(sorted(found)) or "(none)"
        raise UnknownSlugError(f"unknown paper slug {slug!r}; known slugs: {known}")
    if slug not in _REGISTRY or _REGISTRY[slug].func is None:
        importlib.import_module(found[slug].module)
    if slug not in _REGISTRY:
        raise KeyError(f"{found[slug].module} did not register a reproduction named {slug!r}")
    return _REGISTRY[slug]
