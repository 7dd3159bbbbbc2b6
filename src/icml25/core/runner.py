"""Running reproductions: config presets and overrides, seeds, timing, writing the report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .claims import Report, Scale, aggregate_reports
from .config import apply_overrides, config_to_dict
from .optional import check_extras
from .registry import get_reproduction
from .report import write_report
from .seeding import seed_everything

__all__ = ["run_reproduction"]


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
    KeyError (unknown slug), ConfigError (bad override), MissingExtraError (missing extra).
    """
    scale = Scale.parse(scale)
    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    entry = get_reproduction(slug)
    check_extras(entry.extras)
    config = apply_overrides(entry.default_config(scale), overrides or {})
    paper_out = Path(out) / slug
    paper_out.mkdir(parents=True, exist_ok=True)
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
    return report


def _summary_line(report: Report) -> str:
    from .report import counts_text

    t = f" in {report.wall_time_s:.1f}s" if report.wall_time_s is not None else ""
    return f"{report.slug}: {counts_text(report.counts())}{t}"


def _as_json(report: Report) -> dict[str, Any]:
    return report.to_dict()
