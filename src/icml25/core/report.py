"""Writing reports: ``<out>/<slug>/report.md``, ``report.json``, ``config.json``, ``*.png`` and ``<out>/index.md``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .claims import Report, _fmt

__all__ = ["write_report", "read_report", "write_index", "claims_markdown"]


def _cell(x: Any) -> str:
    if isinstance(x, float):
        return _fmt(x)
    if isinstance(x, (list, tuple)):
        return ", ".join(_cell(v) for v in x)
    return str(x).replace("|", "\\|").replace("\n", " ")


def claims_markdown(report: Report) -> str:
    """The claim table of ``report`` as Markdown."""
    lines = ["| id | claim | paper | ours | threshold | scale | held |", "|---|---|---|---|---|---|---|"]
    for c in report.claims:
        lines.append(f"| {c.id} | {_cell(c.statement)} | {_cell(_fmt(c.paper_value))} | {_cell(c.measured_text())} "
                     f"| {c.threshold_text()} | {c.scale.value} | {'yes' if c.held else '**no**'} |")
    return "\n".join(lines)


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


def write_report(report: Report, out_dir: str | Path) -> Path:
    """Write ``report`` into ``out_dir`` (the paper's folder) and return the Markdown path.

    Figures given as matplotlib Figures are saved as PNG; figures given as paths are kept where they are (they
    should already lie in ``out_dir``).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig_files = []
    for name, fig in report.figures.items():
        if fig is None:
            continue
        if isinstance(fig, (str, Path)):
            fig_files.append(Path(fig).name)
            continue
        from .plotting import save_figure

        save_figure(fig, out / f"{name}.png")
        fig_files.append(f"{name}.png")
    data = report.to_dict()
    (out / "report.json").write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
    (out / "config.json").write_text(json.dumps(report.config, indent=2, default=str), encoding="utf-8")
    n_held = sum(c.held for c in report.claims)
    md = [f"# {report.title}", "",
          f"slug `{report.slug}` · scale **{report.scale.value}** · seed {report.seed} · "
          + (f"wall time {report.wall_time_s:.1f} s · " if report.wall_time_s is not None else "")
          + f"**{n_held}/{len(report.claims)} claims held**", "", "## Claims", "", claims_markdown(report), ""]
    if report.notes:
        md += ["## Notes", ""] + [f"- {n}" for n in report.notes] + [""]
    for name, rows in report.tables.items():
        md += [f"## {name}", "", _table_markdown(rows), ""]
    if fig_files:
        md += ["## Figures", ""] + [f"![{f}]({f})" for f in fig_files] + [""]
    md += ["## Configuration", "", "```json", json.dumps(report.config, indent=2, default=str), "```", ""]
    path = out / "report.md"
    path.write_text("\n".join(md), encoding="utf-8")
    return path


def read_report(path: str | Path) -> Report:
    """Read a ``report.json`` back into a :class:`Report` (``held`` recomputed from the numbers)."""
    return Report.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def write_index(out_dir: str | Path) -> Path:
    """Write ``<out_dir>/index.md``: one row per claim over every ``<out_dir>/*/report.json``."""
    out = Path(out_dir)
    rows = ["# icml25 reproduction index", "",
            "| paper | scale | claim | statement | paper | ours | threshold | held |",
            "|---|---|---|---|---|---|---|---|"]
    total = held = 0
    for rj in sorted(out.glob("*/report.json")):
        rep = read_report(rj)
        for c in rep.claims:
            total += 1
            held += c.held
            rows.append(f"| [{rep.slug}]({rep.slug}/report.md) | {rep.scale.value} | {c.id} | {_cell(c.statement)} "
                        f"| {_cell(_fmt(c.paper_value))} | {_cell(c.measured_text())} | {c.threshold_text()} "
                        f"| {'yes' if c.held else '**no**'} |")
    rows.insert(2, f"**{held}/{total} claims held.**\n")
    path = out / "index.md"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path
