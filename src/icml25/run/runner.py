"""Running reproductions: config presets and overrides, seeds, timing, writing the report.

Interruption (Ctrl-C, SIGTERM, a kill by the out-of-memory killer) loses nothing that was complete:

- **Reports are written atomically.** Each (paper, seed) task, and the aggregated report of a multi-seed run, writes
  its report files (``report.json``, ``report.md``, ``config.json``, the PNGs of its figures) into a hidden staging
  folder inside its folder (``.partial-<host>-<pid>``) and renames them into place, ``report.json`` last
  (:func:`icml25.core.report.write_report`). Until a task finishes, its folder keeps the previous complete report;
  a folder with a ``report.json`` holds the complete report it belongs to. The layout users see does not change:
  ``<out>/<slug>/report.md``, ``report.json``, ``config.json``, PNGs, and ``<out>/<slug>/seed<k>/`` per seed of a
  multi-seed run. Staging folders left by a killed run are removed when the next run starts (and by any later
  write into the same folder). The ``error.log`` of a failed task is written straight into the task's folder, where
  the CLI says it is; the previous report stays beside it.
- **Resume state persists.** A reproduction's ``out`` argument is its task's final folder, not the staging folder:
  whatever it writes there itself (checkpoints, finished rounds, caches; e.g. rstar_math's ``self_evolution/``
  rounds, which it resumes from) survives a kill, and the rerun finds it. A reproduction that keeps resume state
  writes each piece so that a kill leaves it usable (a temporary name, then a rename), and gives its figures to the
  Report rather than writing them into ``out``, so that they are replaced together with the report.
- **The run resumes.** A rerun skips every (paper, seed) whose ``report.json`` has the run's scale, seed and config
  (:func:`reproduce_many`), so a multi-seed run killed after some seeds finished reruns only the others.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icml25.core.claims import Report, Scale, aggregate_reports
from icml25.core.config import apply_overrides, config_to_dict
from icml25.core.errors import ReproductionError, UsageError, one_line
from icml25.core.optional import check_extras
from icml25.core.registry import get_reproduction
from icml25.core.report import remove_stale_partials, write_report

from .executors import Task, TaskResult, write_error_log

__all__ = ["run_reproduction", "reproduce_many", "RunSummary", "task_folder", "prepare_out", "write_error_log"]


def run_reproduction(slug: str, scale: Scale | str = Scale.QUICK, seed: int = 0, seeds: int = 1,
                     out: str | Path = "reports", overrides: dict[str, str] | None = None,
                     write: bool = True) -> Report:
    """Run the reproduction of ``slug`` in this process and write its report to ``<out>/<slug>/``.

    The same tasks as ``icml25 reproduce --executor serial`` (see :func:`reproduce_many`), always rerun (no
    resume). With ``seeds=1`` the report is written to ``<out>/<slug>/``; with ``seeds=K`` each seed writes
    ``<out>/<slug>/seed<k>/`` and the aggregated report goes to ``<out>/<slug>/``.

    Parameters
    ----------
    slug : str
        Paper slug (see ``icml25 list``).
    scale : Scale or str
        ``"quick"`` or ``"full"``.
    seed : int
        First seed; with ``seeds=K`` the seeds ``seed, ..., seed+K-1`` are run and claims are aggregated.
    out : path
        Root output folder.
    overrides : dict of str -> str
        ``--set`` overrides applied to the scale's config preset.
    write : bool
        Kept for compatibility: reports are always written (each task writes its own).

    Raises
    ------
    UnknownSlugError (unknown slug), UsageError (bad ``seed``/``seeds``/``out``), ConfigError (bad override or a
    config that fails its validation), MissingExtraError (missing extra): the user's mistakes, raised before
    anything runs. DataNotFoundError and TimeoutError (a time budget) from inside the reproduction pass through.
    ReproductionError
        Any other exception inside the reproduction (a bug); its traceback is in ``<out>/<slug>/error.log``
        (``<out>/<slug>/seed<k>/error.log`` for a multi-seed run; ``ReproductionError.log_path``) and the
        exception is its ``original`` (and ``__cause__``). Files already in ``out`` are left as they are.
    """
    def stop(result: TaskResult, done: int, total: int) -> None:
        if result.status == "user":
            raise result.exception if result.exception is not None else UsageError(result.error)
        if result.status == "internal":
            original = result.exception or RuntimeError(result.error)
            log = Path(result.log_path) if result.log_path else None
            raise ReproductionError(slug, original, log) from original

    summary = reproduce_many([slug], scale=scale, seed=seed, seeds=seeds, out=out, overrides=overrides,
                             force=True, on_result=stop)
    return summary.reports[slug]


@dataclass
class RunSummary:
    """What :func:`reproduce_many` did.

    Attributes
    ----------
    reports : dict of slug -> Report
        The (aggregated) report of every paper whose seeds all finished, in the order of the slugs.
    results : list of TaskResult
        Every task, in the order they finished (``status`` ``"skipped"`` for a resumed one).
    failed : list of TaskResult
        The failed tasks (``"internal"`` or ``"user"``), and papers whose seeds could not be aggregated.
    """

    reports: dict[str, Report] = field(default_factory=dict)
    results: list[TaskResult] = field(default_factory=list)
    failed: list[TaskResult] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """``{"ran": r, "skipped": s, "failed": f}`` over the tasks."""
        return {"ran": sum(r.status == "ok" for r in self.results),
                "skipped": sum(r.status == "skipped" for r in self.results),
                "failed": sum(r.status in ("internal", "user") for r in self.results)}


def task_folder(out: Path, slug: str, seed: int, seeds: int) -> Path:
    """The output folder of one (paper, seed): ``<out>/<slug>`` for a one-seed run, else ``<out>/<slug>/seed<k>``."""
    return out / slug if seeds == 1 else out / slug / f"seed{seed}"


def reproduce_many(slugs: list[str], *, scale: Scale | str = Scale.QUICK, seed: int = 0, seeds: int = 1,
                   out: str | Path = "reports", overrides: dict[str, str] | None = None, executor: str = "serial",
                   jobs: int | None = None, ray_address: str | None = None, force: bool = False,
                   on_result: Callable[[TaskResult, int, int], None] | None = None,
                   on_paper: Callable[[Report], None] | None = None,
                   on_start: Callable[[Any], None] | None = None) -> RunSummary:
    """Run every (paper, seed) of ``slugs`` as one task with ``executor``; aggregate and write each paper's report.

    Each task writes its report to its own folder (:func:`task_folder`); when all seeds of a paper finished,
    their reports are aggregated (:func:`icml25.core.claims.aggregate_reports`, from the written ``report.json``
    files, so every executor gives the same numbers) into ``<out>/<slug>/report.json``, with the first seed's
    figures copied beside it. A task whose ``report.json`` already has the run's scale, seed and config is
    skipped unless ``force``. A failed task leaves its ``error.log`` and the other tasks go on.

    Parameters
    ----------
    slugs : list of str
        The papers.
    scale, seed, seeds, out, overrides
        As in :func:`run_reproduction` (``overrides`` with one slug only).
    executor : str
        ``"serial"``, ``"process"`` or ``"ray"`` (see :func:`icml25.run.executors.execute`).
    jobs : int, optional
        Worker processes (``process``) or CPUs of a local Ray instance (``ray``).
    ray_address : str, optional
        Address of a Ray cluster (``"auto"`` or ``"ray://host:10001"``).
    force : bool
        Rerun tasks whose report already exists.
    on_result : callable, optional
        ``on_result(result, n_done, n_total)`` after each task (skipped ones included); an exception raised in it
        stops the run (tasks not started are cancelled).
    on_paper : callable, optional
        ``on_paper(report)`` when a paper's report is written.
    on_start : callable, optional
        ``on_start(task)`` before a task runs (serial executor only).

    Raises
    ------
    UsageError, UnknownSlugError, ConfigError, MissingExtraError
        The user's mistakes (bad seed/seeds/executor/jobs/out, unknown slug, bad override, missing extra), before
        anything runs.
    """
    from icml25.core.registry import PACKAGE_ROOT, ROOT_PACKAGE

    from .executors import EXECUTORS, execute, finished_report, task_threads

    try:
        scale = Scale.parse(scale)
    except ValueError as exc:
        raise UsageError(f"scale: {exc}") from None
    for name, value, low in (("seed", seed, 0), ("seeds", seeds, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise UsageError(f"{name} must be an integer >= {low}, got {value!r}")
    if executor not in EXECUTORS:
        raise UsageError(f"--executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs < 1):
        raise UsageError(f"--jobs must be an integer >= 1, got {jobs!r}")
    if executor == "ray":
        check_extras(("dist",))
    overrides = dict(overrides or {})
    if overrides and len(slugs) > 1:
        raise UsageError("--set applies to one paper's config; name a single slug with --set")
    seed, seeds = int(seed), int(seeds)
    # every mistake the user can fix fails here, before anything runs (or is written)
    plan: dict[str, tuple[Any, dict[str, Any]]] = {}
    for slug in slugs:
        entry = get_reproduction(slug)
        check_extras(entry.extras)
        config = apply_overrides(entry.default_config(scale), overrides)
        plan[slug] = (entry, config_to_dict(config))
    root = prepare_out(Path(out))
    for slug in plan:
        prepare_out(root / slug)
    pkg_root = str(PACKAGE_ROOT)
    sys_path = (str(Path(pkg_root).parent),) if ROOT_PACKAGE != "icml25" else ()
    tasks: list[Task] = []
    for slug, (entry, _) in plan.items():
        for s in range(seed, seed + seeds):
            tasks.append(Task(slug=slug, seed=s, scale=scale.value, folder=str(task_folder(root, slug, s, seeds)),
                              overrides=tuple(sorted(overrides.items())),
                              threads=task_threads(plan[slug][1], entry.threads),
                              package_root=pkg_root, root_package=ROOT_PACKAGE, sys_path=sys_path,
                              context=(("seeds", f"{seed}..{seed + seeds - 1}"),)))
    for folder in sorted({root / slug for slug in plan} | {Path(t.folder) for t in tasks}):
        remove_stale_partials(folder)  # staging folders a killed run left (skipped tasks included)
    summary = RunSummary()
    by_paper: dict[str, dict[int, TaskResult]] = {slug: {} for slug in plan}
    total = len(tasks)

    def finish(result: TaskResult) -> None:
        summary.results.append(result)
        if result.status in ("internal", "user"):
            summary.failed.append(result)
        by_paper[result.task.slug][result.task.seed] = result
        if on_result is not None:
            on_result(result, len(summary.results), total)
        done = by_paper[result.task.slug]
        if len(done) == seeds and all(r.status in ("ok", "skipped") for r in done.values()):
            _write_paper(result.task.slug, done, root, seeds, summary, on_paper)

    todo = []
    for t in tasks:
        found = None if force else finished_report(t, plan[t.slug][1])
        if found is None:
            todo.append(t)
        else:
            finish(TaskResult(t, "skipped", report=found))
    for result in execute(todo, executor, jobs=jobs, ray_address=ray_address, on_start=on_start):
        finish(result)
    summary.reports = {s: summary.reports[s] for s in plan if s in summary.reports}
    return summary


def _write_paper(slug: str, done: dict[int, TaskResult], root: Path, seeds: int, summary: RunSummary,
                 on_paper: Callable[[Report], None] | None) -> None:
    """Aggregate the seeds of ``slug`` (read from their report dicts) and write ``<root>/<slug>/report.json``."""
    ordered = [done[s] for s in sorted(done)]
    paper = root / slug
    try:
        reports = [Report.from_dict(r.report or {}) for r in ordered]
        if seeds == 1:
            report = reports[0]  # the task wrote it to <root>/<slug>/ already
            if ordered[0].report_obj is not None:
                report = ordered[0].report_obj
        else:
            report = aggregate_reports(reports)
            first = Path(ordered[0].task.folder)
            # the first seed's figures, copied into the paper's folder together with the report (atomically)
            report.figures = {png.stem: png for png in sorted(first.glob("*.png"))}
            write_report(report, paper)
    except Exception as exc:  # seeds that cannot be aggregated (different claim ids): a bug of the paper
        log = write_error_log(paper, exc, {"slug": slug, "seeds": sorted(done), "step": "aggregating the seeds"})
        failed = TaskResult(Task(slug=slug, seed=min(done), scale=str(ordered[0].task.scale), folder=str(paper)),
                            "internal", error=f"{type(exc).__name__}: {one_line(str(exc))}",
                            log_path=str(log) if log else None, exception=exc)
        summary.failed.append(failed)
        return
    summary.reports[slug] = report
    if on_paper is not None:
        on_paper(report)


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



def _summary_line(report: Report) -> str:
    from icml25.core.report import counts_text

    t = f" in {report.wall_time_s:.1f}s" if report.wall_time_s is not None else ""
    return f"{report.slug}: {counts_text(report.counts())}{t}"


def _as_json(report: Report) -> dict[str, Any]:
    return report.to_dict()
