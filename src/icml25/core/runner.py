"""Running reproductions: config presets and overrides, seeds, timing, writing the report."""

from __future__ import annotations

import datetime
import numbers
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from .claims import Report, Scale, aggregate_reports
from .config import apply_overrides, config_to_dict
from .errors import USER_ERRORS, ReproductionError, UsageError
from .optional import check_extras
from .registry import get_reproduction
from .report import write_report
from .seeding import seed_everything

__all__ = ["run_reproduction", "prepare_out", "write_error_log"]


def run_reproduction(slug: str, scale: Scale | str = Scale.QUICK, seed: int = 0, seeds: int = 1,
                     out: str | Path = "reports", overrides: dict[str, str] | None = None,
                     write: bool = True) -> Report:
    """Run the reproduction of ``slug`` and (by default) write its report to ``<out>/<slug>/``.

    Parameters
    ----------
    slug : str
        Paper slug (see ``icml25 list``).
    scale : Scale or str
        ``"quick"`` or ``"full"``.
    seed : int
        First seed; with ``seeds=K`` the seeds ``seed, ..., seed+K-1`` are run and claims are averaged.
    out : path
        Root output folder.
    overrides : dict of str -> str
        ``--set`` overrides applied to the scale's config preset.

    Raises
    ------
    UnknownSlugError (unknown slug), UsageError (bad ``seed``/``seeds``/``out``), ConfigError (bad override or a
    config that fails its validation), MissingExtraError (missing extra): the user's mistakes, raised before
    anything runs. DataNotFoundError and TimeoutError (a time budget) from inside the reproduction pass through.
    ReproductionError
        Any other exception inside the reproduction (a bug); its traceback is in ``<out>/<slug>/error.log``
        (``ReproductionError.log_path``) and the exception is its ``original`` (and ``__cause__``). Files already
        in ``out`` are left as they are.
    """
    try:
        scale = Scale.parse(scale)
    except ValueError as exc:
        raise UsageError(f"scale: {exc}") from None
    for name, value, low in (("seed", seed, 0), ("seeds", seeds, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise UsageError(f"{name} must be an integer >= {low}, got {value!r}")
    entry = get_reproduction(slug)
    check_extras(entry.extras)
    config = apply_overrides(entry.default_config(scale), overrides or {})
    paper_out = prepare_out(Path(out) / slug)
    try:
        reports = []
        for s in range(int(seed), int(seed) + int(seeds)):
            seed_everything(s)
            t0 = time.perf_counter()
            rep = entry.func(scale=scale, seed=s, out=paper_out, config=config)  # type: ignore[misc]
            if not isinstance(rep, Report):
                raise TypeError(f"reproduction {slug!r} returned {type(rep).__name__}, expected a Report")
            rep.wall_time_s = time.perf_counter() - t0
            rep.scale = scale
            rep.seed = s
            rep.config = {**config_to_dict(config), **rep.config}
            reports.append(rep)
        report = aggregate_reports(reports)
        if write:
            write_report(report, paper_out)
    except USER_ERRORS:
        raise
    except Exception as exc:
        log = write_error_log(paper_out, exc, {"slug": slug, "scale": str(scale), "seed": seed, "seeds": seeds,
                                               "overrides": overrides or {}, "config": config_to_dict(config)})
        raise ReproductionError(slug, exc, log) from exc
    return report


def prepare_out(path: str | Path) -> Path:
    """Create the output folder ``path`` (and its parents) or raise :class:`UsageError` saying why it is unusable.

    Nothing in an existing folder is touched.
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"--out: {str(p)!r} is a file, not a folder; pass a folder (it is created if missing)")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out: cannot create the folder {str(p)!r}: {exc.strerror or exc}") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise UsageError(f"--out: the folder {str(p)!r} is not writable")
    return p


def write_error_log(folder: Path, exc: BaseException, context: dict[str, Any]) -> Path | None:
    """Write the full traceback of ``exc`` and the run's context to ``<folder>/error.log``; its path (None on failure)."""
    path = Path(folder) / "error.log"
    lines = [f"icml25 internal error, {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}",
             f"python {sys.version.split()[0]} on {platform.platform()}"]
    lines += [f"{k}: {v}" for k, v in context.items()]
    lines += ["", "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))]
    try:
        path.write_text("\n".join(lines), encoding="utf-8")
    except OSError:
        return None
    return path


def _summary_line(report: Report) -> str:
    from .report import counts_text

    t = f" in {report.wall_time_s:.1f}s" if report.wall_time_s is not None else ""
    return f"{report.slug}: {counts_text(report.counts())}{t}"


def _as_json(report: Report) -> dict[str, Any]:
    return report.to_dict()
