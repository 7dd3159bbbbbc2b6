"""Error classes that separate a user's mistake from a bug.

The CLI prints a :data:`USER_ERRORS` exception as one line and exits with code 2; any other exception raised inside a
reproduction is a bug: the runner writes its traceback to ``<out>/<slug>/error.log`` and raises
:class:`ReproductionError`, which the CLI prints as ``internal error in <slug>: <type>: <message>`` (exit 1).
"""

from __future__ import annotations

from pathlib import Path

from .optional import MissingExtraError

__all__ = ["UsageError", "UnknownSlugError", "DataNotFoundError", "ReproductionError", "USER_ERRORS", "one_line"]


class UsageError(ValueError):
    """A mistake the user can fix (a bad option value, an unusable ``--out``); the message says how."""


class UnknownSlugError(KeyError):
    """No reproduction is registered under this slug (the message lists the known slugs)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class DataNotFoundError(FileNotFoundError):
    """A data file could not be found anywhere; the message lists where it looked and how to fix it.

    Defined here (and re-exported by :mod:`icml25.core.data`) so that this module imports nothing that imports it.
    """


class ReproductionError(RuntimeError):
    """An unexpected exception inside a reproduction: a bug, not a user mistake.

    Attributes
    ----------
    slug : str
        The reproduction.
    original : BaseException
        The exception raised inside it (also the ``__cause__``).
    log_path : Path or None
        Where the full traceback was written (``<out>/<slug>/error.log``), None if it could not be written.
    """

    def __init__(self, slug: str, original: BaseException, log_path: Path | None):
        self.slug, self.original, self.log_path = slug, original, log_path
        super().__init__(f"internal error in {slug}: {type(original).__name__}: {one_line(str(original))}")


#: the exceptions that mean "the user can fix this" (the CLI: one line, exit 2). ``ConfigError`` is a UsageError;
#: ``TimeoutError`` is a time budget (``time_budget_s``) that ran out.
USER_ERRORS: tuple[type[BaseException], ...] = (UsageError, UnknownSlugError, MissingExtraError, DataNotFoundError,
                                                TimeoutError)


def one_line(text: str, limit: int = 400) -> str:
    """``text`` with its whitespace (newlines included) collapsed, cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."
