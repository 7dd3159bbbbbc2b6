"""Writing reports: ``<out>/<slug>/report.md``, ``report.json``, ``config.json``, ``*.png`` and ``<out>/index.md``.

A report is written atomically: :func:`write_report` writes every file into a hidden staging folder inside the
report's folder (``.partial-<host>-<pid>``), then renames them into place one by one, ``report.json`` last, and
removes the staging folder. A process killed at any moment (Ctrl-C, SIGTERM, out of memory) therefore leaves the
previous report as it was, and a folder that holds a ``report.json`` holds the complete report it belongs to (the
other files are renamed in before it). Staging folders left by killed processes are removed by the next write into
that folder (:func:`remove_stale_partials`; the runner also calls it when a task starts).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import time
from pathlib import Path
from typing import Any

from .claims import Report, _fmt

__all__ = ["write_report", "read_report", "write_index", "claims_markdown", "counts_text", "scale_counts_text",
           "verdicts_markdown", "COLUMNS_NOTE", "remove_stale_partials", "PARTIAL_PREFIX"]

#: name prefix of the staging folders of :func:`write_report` (``.partial-<host>-<pid>``)
PARTIAL_PREFIX = ".partial-"
#: a staging folder of another host is stale after this long (its process cannot be asked whether it still runs)
_FOREIGN_STALE_S = 24 * 3600.0

#: what the columns of a claim table mean (printed above every claim table)
COLUMNS_NOTE = ("*paper*: a number printed in the paper, with where (never ours, never a prototype's); "
                "*reference*: a non-paper reference (spec prototype, our calibration), with where; "
                "*ours*: what this run measured; *kind*: paper result / mechanism the method must have / "
                "implementation check; *held*: the comparison of ours with the threshold, or *not measured* when "
                "a claim it requires did not hold, or *not measured here* when it needs a larger scale; "
                "a **bold id** is a headline claim (it carries the abstract's main result and decides the verdict).")


def _cell(x: Any) -> str:
    if isinstance(x, float):
        return _fmt(x)
    if isinstance(x, (list, tuple)):
        return ", ".join(_cell(v) for v in x)
    return str(x).replace("|", "\\|").replace("\n", " ")


def _with_source(value: Any, source: str) -> str:
    if value is None:
        return "—"
    return _cell(f"{_fmt(value)} ({source})" if source else _fmt(value))


def claims_markdown(report: Report) -> str:
    """The claim table of ``report`` as Markdown (kind, paper and reference numbers with their sources)."""
    report.resolve_preconditions()
    lines = ["| id | kind | claim | paper | reference | ours | threshold | scale | held |",
             "|---|---|---|---|---|---|---|---|---|"]
    rank = report.scale.rank
    for c in report.claims:
        lines.append(f"| {_claim_id(c)} | {c.kind} | {_cell(c.statement)} | {_with_source(c.paper_value, c.source)} "
                     f"| {_with_source(c.reference_value, c.reference_source)} | {_cell(c.measured_text())} "
                     f"| {_threshold_cell(c)} | {c.scale.value} | {_status_cell(c, rank)} |")
    return "\n".join(lines)


def _claim_id(c: Any) -> str:
    return f"**{c.id}**" if c.headline else c.id


def _threshold_cell(c: Any) -> str:
    return c.threshold_text() + (f" ({_cell(c.threshold_reason)})" if c.threshold_reason else "")


def _status_cell(c: Any, rank: int) -> str:
    """The held cell: a larger-scale claim is *not measured here* or a *preview*."""
    if c.scale.rank > rank:
        return "not measured here" if not c.measured_ok else f"preview: {c.status_text()}"
    return c.status_text()


def scale_counts_text(report: Report) -> str:
    """Counts at the report's own scale, then the preview of larger-scale claims it measured anyway, e.g.
    ``"quick: paper claims: 5/5 held; ... · preview (full-scale claims): 3/8 held · 2 not measured here"``."""
    text = f"{report.scale.value}: {counts_text(report.counts(report.claims_at(report.scale)))}"
    preview = report.preview_claims()
    if preview:
        held = sum(c.held for c in preview)
        text += f" · preview (larger-scale claims measured at {report.scale.value}): {held}/{len(preview)} held"
    missing = report.not_measured_here()
    if missing:
        text += f" · {len(missing)} not measured here"
    return text


def counts_text(counts: dict[str, dict[str, int]]) -> str:
    """``"paper claims: 9/14 held (2 not measured); mechanism: 20/20; check: 8/8"`` from :meth:`Report.counts`."""
    parts = []
    for kind in ("paper", "mechanism", "check", *sorted(k for k in counts if k not in ("paper", "mechanism", "check"))):
        if kind not in counts:
            continue
        d = counts[kind]
        txt = f"{kind}{' claims' if kind == 'paper' else ''}: {d['held']}/{d['total']} held"
        if d["not measured"]:
            txt += f" ({d['not measured']} not measured)"
        parts.append(txt)
    return "; ".join(parts) or "no claims"


def _merge_counts(total: dict[str, dict[str, int]], more: dict[str, dict[str, int]]) -> None:
    for kind, d in more.items():
        t = total.setdefault(kind, {"held": 0, "failed": 0, "not measured": 0, "total": 0})
        for k, v in d.items():
            t[k] = t.get(k, 0) + v


def _table_markdown(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(empty)"
    keys = list(rows[0])
    for r in rows[1:]:
        keys += [k for k in r if k not in keys]
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        lines.append("| " + " | ".join(_cell(r.get(k, "")) for k in keys) + " |")
    return "\n".join(lines)


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname())[:60] or "host"


def _partial_folder(out: Path) -> Path:
    """This process's staging folder in ``out``."""
    return out / f"{PARTIAL_PREFIX}{_host()}-{os.getpid()}"


def _is_stale(path: Path) -> bool:
    """A staging folder whose process is gone: same host and a pid that is dead (or ours: a previous process
    that had our pid), or another host's folder older than a day."""
    host, _, pid = path.name[len(PARTIAL_PREFIX):].rpartition("-")
    if host != _host() or not pid.isdigit():
        try:
            return time.time() - path.stat().st_mtime > _FOREIGN_STALE_S
        except OSError:
            return False
    if int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        return False
    return _is_zombie(int(pid))


def _is_zombie(pid: int) -> bool:
    """Whether ``pid`` has exited but not been reaped (a killed worker whose parent died too, in a container whose
    init does not reap): ``kill(pid, 0)`` still succeeds for it. False where ``/proc`` cannot tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] in (["Z"], ["X"])


def remove_stale_partials(out_dir: str | Path) -> list[Path]:
    """Remove the staging folders that killed processes left in ``out_dir``; return the ones removed."""
    out = Path(out_dir)
    removed = []
    try:
        candidates = [p for p in out.iterdir() if p.name.startswith(PARTIAL_PREFIX) and p.is_dir()]
    except OSError:
        return removed
    for p in candidates:
        if _is_stale(p):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


def write_report(report: Report, out_dir: str | Path) -> Path:
    """Write ``report`` into ``out_dir`` (the paper's folder), atomically, and return the Markdown path.

    Writes ``report.json``, ``config.json``, ``report.md`` and the figures into a staging folder, then renames them
    into ``out_dir``, ``report.json`` last (see the module docstring): a process killed while writing leaves the
    previous report intact. Figures given as matplotlib Figures are saved as PNG; figures given as paths are kept
    where they are when they lie in ``out_dir`` and copied into it otherwise (the first seed's figures of an
    aggregated report). Other files in ``out_dir`` are not touched.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(out)
    staging = _partial_folder(out)
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        fig_files = []
        for name, fig in report.figures.items():
            if fig is None:
                continue
            if isinstance(fig, (str, Path)):
                src = Path(fig)
                if src.resolve().parent != out.resolve() and src.is_file():
                    shutil.copyfile(src, staging / src.name)
                fig_files.append(src.name)
                continue
            from .plotting import save_figure

            save_figure(fig, staging / f"{name}.png")
            fig_files.append(f"{name}.png")
        data = report.to_dict()
        (staging / "report.json").write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
        (staging / "config.json").write_text(json.dumps(report.config, indent=2, default=str), encoding="utf-8")
        md = [f"# {report.title}", "",
              f"slug `{report.slug}` · scale **{report.scale.value}** · seed {report.seed}"
              + (f" · wall time {report.wall_time_s:.1f} s" if report.wall_time_s is not None else ""), "",
              f"**{scale_counts_text(report)}**", "", f"**Verdict:** {_verdict_line(report)}", "", "## Claims", "",
              COLUMNS_NOTE, "", claims_markdown(report), ""]
        if report.notes:
            md += ["## Notes", ""] + [f"- {n}" for n in report.notes] + [""]
        for name, rows in report.tables.items():
            md += [f"## {name}", "", _table_markdown(rows), ""]
        if fig_files:
            md += ["## Figures", ""] + [f"![{f}]({f})" for f in fig_files] + [""]
        md += ["## Configuration", "", "```json", json.dumps(report.config, indent=2, default=str), "```", ""]
        (staging / "report.md").write_text("\n".join(md), encoding="utf-8")
        # the commit: every file renamed into place, report.json last (its presence means the rest is there)
        for name in sorted((p.name for p in staging.iterdir()), key=lambda n: (n == "report.json", n)):
            os.replace(staging / name, out / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out / "report.md"


def _verdict_line(report: Report) -> str:
    from .verdict import verdict_of

    return verdict_of(report).text()


def verdicts_markdown(reports: list[Report]) -> str:
    """One row per paper: its verdict, scale, seeds, date and headline claims (the top of ``index.md``)."""
    from .verdict import verdict_of

    rows = ["| paper | verdict | scale | seeds | date | headline claims | own-scale claims | preview |",
            "|---|---|---|---|---|---|---|---|"]
    for rep in reports:
        v = verdict_of(rep)
        heads = ", ".join(f"{h['id']} {h['status']}" for h in v.headline) or "—"
        preview = rep.preview_claims()
        prev = f"{sum(c.held for c in preview)}/{len(preview)} held" if preview else "—"
        rows.append(f"| [{rep.slug}]({rep.slug}/report.md) | **{v.verdict}** | {v.scale} "
                    f"| {', '.join(map(str, v.seeds))} | {v.date} | {heads} "
                    f"| {counts_text(rep.counts(rep.claims_at(rep.scale)))} | {prev} |")
    return "\n".join(rows)


def read_report(path: str | Path) -> Report:
    """Read a ``report.json`` back into a :class:`Report` (``held`` recomputed from the numbers)."""
    return Report.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def write_index(out_dir: str | Path) -> Path:
    """Write ``<out_dir>/index.md``: one row per claim over every ``<out_dir>/*/report.json``."""
    out = Path(out_dir)
    rows = ["| paper | scale | claim | kind | statement | paper value | reference | ours | threshold | held |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    totals: dict[str, dict[str, int]] = {}
    previews: dict[str, dict[str, int]] = {}
    skipped = []
    reports = []
    for rj in sorted(out.glob("*/report.json")):
        try:
            rep = read_report(rj)
        except (ValueError, KeyError, TypeError) as exc:  # a report from an older contract: say so, do not crash
            skipped.append(f"- `{rj}` was not read ({exc}); rerun that reproduction")
            continue
        reports.append(rep)
        _merge_counts(totals, rep.counts(rep.claims_at(rep.scale)))
        _merge_counts(previews, rep.counts(rep.preview_claims()))
        rank = rep.scale.rank
        for c in rep.claims:
            rows.append(f"| [{rep.slug}]({rep.slug}/report.md) | {rep.scale.value} | {_claim_id(c)} | {c.kind} "
                        f"| {_cell(c.statement)} | {_with_source(c.paper_value, c.source)} "
                        f"| {_with_source(c.reference_value, c.reference_source)} | {_cell(c.measured_text())} "
                        f"| {_threshold_cell(c)} | {_status_cell(c, rank)} |")
    head = ["# icml25 reproduction index", "", "## Verdicts", "", verdicts_markdown(reports), "",
            "## Claims", "", f"**Claims at each report's own scale: {counts_text(totals)}.**"]
    if previews:
        head += ["", f"Preview (larger-scale claims measured on a smaller run, not counted above): "
                     f"{counts_text(previews)}."]
    rows = [*head, "", COLUMNS_NOTE, "", *rows]
    if skipped:
        rows += ["", "Reports not read:", *skipped]
    path = out / "index.md"
    out.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(out)
    staging = _partial_folder(out)  # written there and renamed into place: a kill leaves the old index
    staging.mkdir(exist_ok=True)
    try:
        (staging / "index.md").write_text("\n".join(rows) + "\n", encoding="utf-8")
        os.replace(staging / "index.md", path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path
