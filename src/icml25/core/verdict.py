"""A paper's verdict: did its headline reproduce? Computed from the headline claims of its largest-scale report.

Each paper marks the claims that carry its abstract's main result (``Claim(headline=True)``, 1-4 per paper). The
verdict of a report counts only the headline claims asserted at the report's own scale (a ``paper``-scale claim in a
quick run is *not measured here*, a full-scale claim measured on a quick run is a preview):

- ``reproduced``: every headline claim held;
- ``partial``: some held, others failed or were not measured (at this scale or for a failed precondition);
- ``not reproduced``: none held and at least one failed;
- ``not measurable here``: none was measured (their preconditions, e.g. model competence, failed, or they need a
  larger scale).

The verdict of the largest-scale run is recorded in the paper's package (``src/icml25/<slug>/verdict.json``, by
``icml25 report --record``), so the README and ``icml25 list`` can show it without a ``reports/`` folder.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .claims import Report, Scale

__all__ = ["VERDICTS", "Verdict", "verdict_of", "run_date", "recorded_verdict", "record_verdict", "verdict_path",
           "best_verdict"]

#: every verdict a paper can have, best first (``not run``: no report and nothing recorded)
VERDICTS = ("reproduced", "partial", "not reproduced", "not measurable here", "no headline claims", "not run")


@dataclass
class Verdict:
    """The verdict of one paper from one report.

    Attributes
    ----------
    slug : str
    verdict : str
        One of :data:`VERDICTS`.
    scale : str
        The report's scale (``quick``, ``full`` or ``paper``).
    seeds : list of int
        The seeds the report aggregates.
    date : str
        ISO date (UTC) the verdict was computed.
    headline : list of dict
        ``{"id", "status", "scale"}`` per headline claim; ``status`` is ``held``, ``failed``, ``not measured`` or
        ``not measured here`` (needs a larger scale).
    own_counts, preview_counts : dict
        Claim counts per kind at the report's own scale, and of the larger-scale claims it measured anyway.
    not_measured_here : int
        Claims of a larger scale the run could not measure.
    """

    slug: str
    verdict: str
    scale: str
    seeds: list[int] = field(default_factory=list)
    date: str = ""
    headline: list[dict[str, str]] = field(default_factory=list)
    own_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    preview_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    not_measured_here: int = 0

    def context(self) -> str:
        """Where the verdict comes from, e.g. ``"full scale, evaluation seed 1000, 2026-12-03"``."""
        from .seeding import is_evaluation_seed

        seeds = ", ".join(map(str, self.seeds)) if self.seeds else "?"
        role = "evaluation" if self.seeds and all(is_evaluation_seed(s) for s in self.seeds) else "development"
        return f"{self.scale} scale, {role} seed{'s' if len(self.seeds) > 1 else ''} {seeds}, {self.date}"

    def headline_text(self) -> str:
        """The headline claims' statuses, e.g. ``"H1 held; H2 failed"``."""
        return "; ".join(f"{h['id']} {h['status']}" for h in self.headline) or "no headline claim"

    def text(self) -> str:
        """One line, e.g. ``"reproduced (full scale, evaluation seed 1000, 2026-12-03): H1 held; H2 held"``."""
        return f"{self.verdict} ({self.context()}): {self.headline_text()}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verdict:
        """Inverse of :meth:`to_dict`; raises ValueError for a dict that is not a verdict."""
        if not isinstance(d, dict) or "slug" not in d or d.get("verdict") not in VERDICTS:
            raise ValueError(f"not a verdict record: {str(d)[:200]}")
        keys = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in keys})


def _status(claim: Any, rank: int) -> str:
    if claim.scale.rank > rank and not claim.measured_ok:
        return "not measured here"
    if claim.scale.rank > rank:
        return "preview " + claim.status
    return claim.status


def run_date(report_json: Path) -> str:
    """The ISO date (UTC) a report was written: its ``report.json``'s modification time, which is when the run
    finished (a verdict recorded later keeps the date of the run, not of the recording)."""
    stamp = Path(report_json).stat().st_mtime
    return datetime.datetime.fromtimestamp(stamp, tz=datetime.timezone.utc).date().isoformat()


def verdict_of(report: Report, date: str | None = None) -> Verdict:
    """The verdict of ``report`` from its headline claims (see the module docstring for the rules)."""
    report.resolve_preconditions()
    rank = Scale.parse(report.scale).rank
    heads = [c for c in report.claims if c.headline]
    statuses = [_status(c, rank) for c in heads]
    if not heads:
        verdict = "no headline claims"
    elif all(s == "held" for s in statuses):
        verdict = "reproduced"
    elif any(s == "held" for s in statuses):
        verdict = "partial"
    elif any(s == "failed" for s in statuses):
        verdict = "not reproduced"
    else:
        verdict = "not measurable here"
    seeds = report.seed if isinstance(report.seed, list) else [report.seed]
    return Verdict(slug=report.slug, verdict=verdict, scale=Scale.parse(report.scale).value,
                   seeds=[int(s) for s in seeds],
                   date=date or datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
                   headline=[{"id": c.id, "status": s, "scale": c.scale.value} for c, s in zip(heads, statuses)],
                   own_counts=report.counts(report.claims_at(report.scale)),
                   preview_counts=report.counts(report.preview_claims()),
                   not_measured_here=len(report.not_measured_here()))


def verdict_path(slug: str, package_root: Path | None = None) -> Path:
    """``src/icml25/<slug>/verdict.json``: where the paper's recorded verdict lives."""
    from .registry import PACKAGE_ROOT

    return (package_root or PACKAGE_ROOT) / slug / "verdict.json"


def recorded_verdict(slug: str, package_root: Path | None = None) -> Verdict | None:
    """The verdict recorded in the paper's package, or None (none recorded, or unreadable)."""
    path = verdict_path(slug, package_root)
    try:
        return Verdict.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def best_verdict(a: Verdict | None, b: Verdict | None) -> Verdict | None:
    """The verdict to show of two: the larger scale wins; at equal scale the later date (then ``b``)."""
    if a is None or b is None:
        return b if a is None else a
    ra, rb = Scale.parse(a.scale).rank, Scale.parse(b.scale).rank
    if ra != rb:
        return a if ra > rb else b
    return a if a.date > b.date else b


def record_verdict(verdict: Verdict, package_root: Path | None = None) -> tuple[Path, bool]:
    """Write ``verdict`` to the paper's ``verdict.json`` unless the recorded one is of a larger scale or newer.

    Returns the path and whether it was written.
    """
    old = recorded_verdict(verdict.slug, package_root)
    path = verdict_path(verdict.slug, package_root)
    if old is not None and best_verdict(old, verdict) is old and old != verdict:
        return path, False
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(verdict.to_dict(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path, True
