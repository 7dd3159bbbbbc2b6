"""Optional dependencies: import a package of an extra, or fail with the exact pip command that fixes it."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

__all__ = ["MissingExtraError", "require", "has"]

#: extra name -> the import names it provides (used to check a reproduction's extras before running it)
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "torch": ("torch",),
    "graphs": ("networkx",),
    "opt": ("cvxpy",),
    "stats": ("statsmodels", "sklearn"),
    "rl": ("gymnasium",),
    "llm": ("transformers", "httpx"),
    "dist": ("ray",),
    "plot": ("matplotlib",),
    "models": ("gguf", "accelerate"),
    "diffusers": ("diffusers", "peft"),
    "forecast": ("neuralforecast",),
}


class MissingExtraError(ImportError):
    """An optional dependency is missing; the message names the ``pip install`` command that adds it."""


def has(module: str) -> bool:
    """True when ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(module: str, extra: str | None = None) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``pip install 'icml25[extra]'``.

    Parameters
    ----------
    module : str
        Import name, e.g. ``"torch"`` or ``"networkx"``.
    extra : str, optional
        The icml25 extra that provides it (defaults to the module name).
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extra = extra or module
        raise MissingExtraError(
            f"this feature needs the optional package {module!r}; install it with: pip install 'icml25[{extra}]'"
        ) from exc


def check_extras(extras: tuple[str, ...] | list[str]) -> None:
    """Raise :class:`MissingExtraError` for the first extra whose packages are not importable."""
    for extra in extras:
        for mod in EXTRA_MODULES.get(extra, (extra,)):
            if not has(mod):
                raise MissingExtraError(
                    f"this needs the optional package {mod!r} (extra {extra!r}); "
                    f"install it with: pip install 'icml25[{extra}]'"
                )
