"""The claim contract: what every reproduction returns.

A :class:`Claim` pairs one statement of a paper with the number we measured and the comparison that decides
whether it held. ``held`` is a read-only property computed from ``measured``, ``comparison`` and ``threshold``:
nothing else can set it. A :class:`Report` collects claims, tables, figures and the run's configuration.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Scale", "Claim", "Report", "COMPARISONS", "KINDS", "AGGREGATES", "aggregate_reports"]

#: what a claim is: a result the paper states, a property the method must have, or implementation sanity
KINDS = ("paper", "mechanism", "check")

#: statistic that combines a claim's per-seed measurements (name -> function of a list of floats)
AGGREGATES: dict[str, Any] = {
    "mean": lambda v: sum(v) / len(v),
    "min": min,
    "max": max,
    "median": lambda v: sorted(v)[len(v) // 2] if len(v) % 2 else 0.5 * (sorted(v)[len(v) // 2 - 1]
                                                                         + sorted(v)[len(v) // 2]),
    "all": lambda v: all(bool(x) for x in v),
}

#: comparison name -> (symbol printed in reports, predicate(measured, threshold))
COMPARISONS: dict[str, tuple[str, Any]] = {
    ">=": ("≥", lambda m, t: m >= t),
    ">": (">", lambda m, t: m > t),
    "<=": ("≤", lambda m, t: m <= t),
    "<": ("<", lambda m, t: m < t),
    # threshold is (low, high): low <= measured <= high
    "within": ("∈", lambda m, t: t[0] <= m <= t[1]),
    # measured is a bool (a property that must be True)
    "is_true": ("is", lambda m, t: bool(m) is True),
}


class Scale(str, enum.Enum):
    """Size of a reproduction: ``QUICK`` (< ~2 min on 2 CPU cores), ``FULL`` (< ~1 h on 2 cores) or ``PAPER``
    (the paper's own setting: its models, data sets and sizes, for users with the hardware).

    Scales are ordered (``QUICK < FULL < PAPER``): a claim registered at scale S is asserted by runs of scale >= S.
    """

    QUICK = "quick"
    FULL = "full"
    PAPER = "paper"

    @property
    def rank(self) -> int:
        """0 for QUICK, 1 for FULL, 2 for PAPER."""
        return _SCALE_ORDER.index(self.value)

    @classmethod
    def parse(cls, value: str | Scale) -> Scale:
        """Return the Scale named by ``value`` ('quick', 'full' or 'paper'), raising ValueError otherwise."""
        if isinstance(value, Scale):
            return value
        try:
            return cls(str(value).lower())
        except ValueError:
            raise ValueError(f"scale must be 'quick', 'full' or 'paper', got {value!r}") from None


_SCALE_ORDER = ("quick", "full", "paper")


def _as_number(x: Any) -> Any:
    """Convert numpy scalars to Python numbers so that claims serialise to JSON."""
    if hasattr(x, "item") and callable(x.item) and getattr(x, "ndim", 0) == 0:
        return x.item()
    return x


@dataclass
class Claim:
    """One claim of a paper, with our measurement and the test that decides whether it held.

    Parameters
    ----------
    id : str
        Short stable identifier, e.g. ``"Q1"`` or ``"coverage_at_0.9"``.
    statement : str
        The paper's claim in one line.
    paper_value : float, str or None
        A number printed in the paper (or read off its figure), printed beside ours and never used as ours.
        Nothing else goes here: numbers from a spec prototype or our own calibration go to ``reference_value``.
    measured : float or bool
        Our measured value (the mean over seeds when several seeds were run).
    comparison : str
        One of ``">=", ">", "<=", "<", "within", "is_true"``.
    threshold : float, (low, high) or None
        The acceptance threshold the measurement is compared with.
    scale : Scale
        The smallest scale at which the claim is asserted: ``QUICK`` claims are asserted by the quick test;
        ``FULL`` claims are measured at quick scale too but only expected to hold at full scale.
    spread : float, optional
        Standard deviation over seeds (None for one seed).
    per_seed : list of float, optional
        The measurement of every seed.
    unit : str
        Unit of ``measured`` (e.g. ``"dB"``, ``"%"``).
    note : str
        Anything a reader needs to interpret the number.
    kind : str
        ``"paper"`` (a result the paper states), ``"mechanism"`` (a property the method must have) or ``"check"``
        (implementation sanity).
    source : str
        Where ``paper_value`` is printed ("Table 2", "Fig. 3, read off", "Sec. 5.1 text"); required when
        ``paper_value`` is given.
    reference_value : float, str or None
        A non-paper reference number (spec prototype, our calibration run), with ``reference_source``.
    reference_source : str
        Where ``reference_value`` comes from; required when it is given.
    requires : sequence of str
        Ids of claims of the same report that must hold for this one to mean anything. When one of them did not
        hold, this claim is "not measured" (``status``), counted neither as held nor as failed.
    aggregate : str
        Statistic combining per-seed measurements: ``"mean"``, ``"min"``, ``"max"``, ``"median"``, ``"all"``.
    no_stub_reason : str
        For a quick ``paper`` claim that the paper's stub (its naive baseline) cannot make fail: why.
    timing : bool
        The measurement comes from wall-clock time (a speed-up, a time ratio), so it varies between runs of the same
        seed; the determinism contract compares every other claim exactly and skips these.
    headline : bool
        The claim carries the main result of the paper's abstract (1-4 per paper); the paper's verdict
        (:mod:`icml25.core.verdict`) is computed from these.
    threshold_reason : str
        Why the threshold is looser than the paper's value (one line, shown in the report); empty when the
        threshold is the paper's value with the tolerance the claim states.
    """

    id: str
    statement: str
    paper_value: Any
    measured: Any
    comparison: str
    threshold: Any = None
    scale: Scale = Scale.QUICK
    spread: float | None = None
    per_seed: list[Any] | None = None
    unit: str = ""
    note: str = ""
    kind: str = ""
    source: str = ""
    reference_value: Any = None
    reference_source: str = ""
    requires: Sequence[str] = ()
    aggregate: str = "mean"
    no_stub_reason: str = ""
    timing: bool = False
    headline: bool = False
    threshold_reason: str = ""
    #: ids of required claims that did not hold (set by the Report, never by a reproduction)
    blocked_by: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Claim {self.id!r}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.paper_value is not None and not str(self.source).strip():
            raise ValueError(f"Claim {self.id!r}: paper_value={self.paper_value!r} needs source= saying where the "
                             "paper prints it (e.g. 'Table 2'); a non-paper number goes to reference_value")
        if self.reference_value is not None and not str(self.reference_source).strip():
            raise ValueError(f"Claim {self.id!r}: reference_value needs reference_source= (e.g. 'spec prototype')")
        if self.aggregate not in AGGREGATES:
            raise ValueError(f"Claim {self.id!r}: aggregate must be one of {sorted(AGGREGATES)}, got {self.aggregate!r}")
        if isinstance(self.requires, str):
            self.requires = [self.requires]
        self.requires = list(self.requires)
        if self.comparison not in COMPARISONS:
            raise ValueError(
                f"Claim {self.id!r}: comparison must be one of {sorted(COMPARISONS)}, got {self.comparison!r}"
            )
        if self.comparison == "within":
            if not (isinstance(self.threshold, Sequence) and len(self.threshold) == 2):
                raise ValueError(f"Claim {self.id!r}: 'within' needs threshold=(low, high), got {self.threshold!r}")
            self.threshold = [float(self.threshold[0]), float(self.threshold[1])]
        elif self.comparison != "is_true" and self.threshold is None:
            raise ValueError(f"Claim {self.id!r}: comparison {self.comparison!r} needs a numeric threshold")
        self.scale = Scale.parse(self.scale)
        self.measured = _as_number(self.measured)
        self.paper_value = _as_number(self.paper_value)
        self.reference_value = _as_number(self.reference_value)
        if self.threshold is not None and self.comparison not in ("within", "is_true"):
            self.threshold = _as_number(self.threshold)

    @property
    def held(self) -> bool:
        """Whether the measurement satisfies the comparison.

        False for a missing or NaN measurement and for a claim whose precondition failed (``blocked_by``).
        """
        if self.blocked_by:
            return False
        return self.measurement_passes

    @property
    def measured_ok(self) -> bool:
        """Whether there is a measurement at all (not None, not NaN) and no failed precondition."""
        m = self.measured
        if self.blocked_by or m is None:
            return False
        return not (isinstance(m, float) and math.isnan(m))

    @property
    def status(self) -> str:
        """``"held"``, ``"failed"`` or ``"not measured"`` (a failed precondition or no measurement)."""
        if not self.measured_ok:
            return "not measured"
        return "held" if self.held else "failed"

    def status_text(self) -> str:
        """The status for a report cell, naming the failed preconditions."""
        if self.blocked_by:
            return f"not measured (precondition {', '.join(self.blocked_by)} failed)"
        return {"held": "yes", "failed": "**no**", "not measured": "not measured"}[self.status]

    @property
    def measurement_passes(self) -> bool:
        """The bare comparison of ``measured`` with ``threshold``, ignoring preconditions."""
        m = self.measured
        if m is None or (isinstance(m, float) and math.isnan(m)):
            return False
        if self.comparison == "is_true":
            return bool(m)
        return bool(COMPARISONS[self.comparison][1](m, self.threshold))

    def threshold_text(self) -> str:
        """Human-readable comparison, e.g. ``"≥ 0.9"``."""
        sym = COMPARISONS[self.comparison][0]
        if self.comparison == "within":
            return f"{sym} [{_fmt(self.threshold[0])}, {_fmt(self.threshold[1])}]"
        if self.comparison == "is_true":
            return "is true"
        return f"{sym} {_fmt(self.threshold)}"

    def measured_text(self) -> str:
        """Measured value with spread and unit, e.g. ``"0.912 ± 0.004 %"``."""
        if isinstance(self.measured, float) and math.isnan(self.measured):
            return "not measured"
        txt = _fmt(self.measured)
        if self.spread is not None:
            txt += f" ± {_fmt(self.spread)}"
        return f"{txt} {self.unit}".strip()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict; includes the computed ``held``."""
        return {
            "id": self.id,
            "statement": self.statement,
            "paper_value": self.paper_value,
            "measured": self.measured,
            "spread": self.spread,
            "per_seed": self.per_seed,
            "comparison": self.comparison,
            "threshold": self.threshold,
            "scale": self.scale.value,
            "unit": self.unit,
            "note": self.note,
            "kind": self.kind,
            "source": self.source,
            "reference_value": self.reference_value,
            "reference_source": self.reference_source,
            "requires": list(self.requires),
            "aggregate": self.aggregate,
            "no_stub_reason": self.no_stub_reason,
            "timing": self.timing,
            "headline": self.headline,
            "threshold_reason": self.threshold_reason,
            "blocked_by": list(self.blocked_by),
            "status": self.status,
            "held": self.held,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Claim:
        """Inverse of :meth:`to_dict` (``held`` is recomputed, never read)."""
        if "kind" not in d:
            raise ValueError(f"claim {d.get('id')!r} has no 'kind': the report was written under the older claim "
                             "contract; rerun the reproduction")
        keys = {"id", "statement", "paper_value", "measured", "comparison", "threshold", "scale", "spread",
                "per_seed", "unit", "note", "kind", "source", "reference_value", "reference_source", "requires",
                "aggregate", "no_stub_reason", "timing", "headline", "threshold_reason", "blocked_by"}
        return cls(**{k: v for k, v in d.items() if k in keys})


def _fmt(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
            return f"{x:.3g}"
        return f"{x:.4g}"
    return str(x)


@dataclass
class Report:
    """What a reproduction returns: claims, tables, figures, configuration.

    Parameters
    ----------
    slug : str
        The paper's slug (folder name).
    title : str
        The paper's title.
    scale : Scale
        Scale the report was produced at.
    seed : int or list of int
        Seed(s) used.
    claims : list of Claim
    tables : dict of name -> list of row dicts
        Tidy tables written to the Markdown report (and JSON).
    figures : dict of name -> matplotlib Figure or path to a PNG
        Written as ``<name>.png`` beside the report.
    config : dict
        The configuration the run used (written as ``config.json``).
    notes : list of str
        Free text shown under the claims (deviations, what a failed claim means).
    """

    slug: str
    title: str
    scale: Scale = Scale.QUICK
    seed: Any = 0
    claims: list[Claim] = field(default_factory=list)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    wall_time_s: float | None = None

    def add_claim(self, *args: Any, **kwargs: Any) -> Claim:
        """Create a :class:`Claim` from the arguments, append it and return it."""
        claim = Claim(*args, **kwargs)
        if any(c.id == claim.id for c in self.claims):
            raise ValueError(f"duplicate claim id {claim.id!r} in report {self.slug!r}")
        known = {c.id for c in self.claims}
        missing = [r for r in claim.requires if r not in known]
        if missing:
            raise ValueError(f"claim {claim.id!r} requires {missing}, which are not (yet) in report {self.slug!r}; "
                             "add the claims it depends on first")
        self.claims.append(claim)
        self.resolve_preconditions()
        return claim

    def resolve_preconditions(self) -> None:
        """Set every claim's ``blocked_by`` to the required claims that did not hold (transitively)."""
        by_id = {c.id: c for c in self.claims}
        for c in self.claims:  # claims are in dependency order: a claim only requires earlier ones
            c.blocked_by = [r for r in c.requires if r in by_id and not by_id[r].held]

    def counts(self, claims: Sequence[Claim] | None = None) -> dict[str, dict[str, int]]:
        """Per kind: ``{"paper": {"held": h, "failed": f, "not measured": n, "total": t}, ...}``."""
        self.resolve_preconditions()
        out: dict[str, dict[str, int]] = {}
        for c in self.claims if claims is None else claims:
            d = out.setdefault(c.kind or "unspecified", {"held": 0, "failed": 0, "not measured": 0, "total": 0})
            d[c.status] += 1
            d["total"] += 1
        return out

    def add_table(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Attach a tidy table (list of row dicts with the same keys)."""
        self.tables[name] = [{k: _as_number(v) for k, v in r.items()} for r in rows]

    def add_figure(self, name: str, figure: Any) -> None:
        """Attach a matplotlib Figure (or a path to an existing PNG) saved as ``<name>.png``."""
        self.figures[name] = figure

    @property
    def all_held(self) -> bool:
        """True when every claim held."""
        return all(c.held for c in self.claims)

    def claims_at(self, scale: Scale | str) -> list[Claim]:
        """Claims asserted at ``scale``: those registered at ``scale`` or a smaller one (QUICK: QUICK claims; FULL:
        QUICK and FULL claims; PAPER: all)."""
        rank = Scale.parse(scale).rank
        return [c for c in self.claims if c.scale.rank <= rank]

    def preview_claims(self) -> list[Claim]:
        """Claims of a larger scale than the run's that were measured anyway (e.g. full-scale claims on a quick run):
        a preview, never counted as the run's own result."""
        rank = Scale.parse(self.scale).rank
        return [c for c in self.claims if c.scale.rank > rank and c.measured_ok]

    def not_measured_here(self) -> list[Claim]:
        """Claims of a larger scale than the run's that it could not measure (e.g. ``paper``-scale claims)."""
        rank = Scale.parse(self.scale).rank
        return [c for c in self.claims if c.scale.rank > rank and not c.measured_ok]

    def add_unmeasured_claim(self, *args: Any, needs: str, **kwargs: Any) -> Claim:
        """Register a claim that this run cannot measure (its scale is larger than the run's): measured NaN and a
        note ``"not measured here: <needs>"``. ``needs`` says what the measurement takes (e.g. "--scale paper:
        the 7B policy on a GPU"). Raises ValueError when the claim's scale is not larger than the run's."""
        scale = Scale.parse(kwargs.get("scale", Scale.QUICK))
        if scale.rank <= Scale.parse(self.scale).rank:
            raise ValueError(f"claim {kwargs.get('id', args[0] if args else '?')!r}: a {scale.value}-scale claim is "
                             f"measured by a {Scale.parse(self.scale).value} run; add it with add_claim")
        note = f"not measured here: {needs}"
        if kwargs.get("note"):
            note = f"{kwargs.pop('note')} {note}"
        kwargs["note"] = note
        kwargs["measured"] = math.nan
        return self.add_claim(*args, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict with a top-level ``claims`` list."""
        self.resolve_preconditions()
        return {
            "slug": self.slug,
            "title": self.title,
            "scale": self.scale.value if isinstance(self.scale, Scale) else str(self.scale),
            "seed": self.seed,
            "wall_time_s": self.wall_time_s,
            "all_held": self.all_held,
            "counts": self.counts(),
            "claims": [c.to_dict() for c in self.claims],
            "tables": self.tables,
            "figures": sorted(self.figures),
            "config": self.config,
            "notes": self.notes,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Report:
        """Rebuild a Report from :meth:`to_dict` output (figures are kept as names only)."""
        rep = cls(
            slug=d["slug"], title=d.get("title", ""), scale=Scale.parse(d.get("scale", "quick")),
            seed=d.get("seed", 0), claims=[Claim.from_dict(c) for c in d.get("claims", [])],
            tables=d.get("tables", {}), figures={n: None for n in d.get("figures", [])},
            config=d.get("config", {}), notes=d.get("notes", []), wall_time_s=d.get("wall_time_s"),
        )
        rep.resolve_preconditions()
        return rep


def aggregate_reports(reports: list[Report]) -> Report:
    """Combine the reports of several seeds with each claim's own statistic (``Claim.aggregate``).

    ``"mean"`` (default), ``"min"``, ``"max"``, ``"median"``; boolean measurements aggregate to True only when
    every seed was True. The statistic used is stated in the claim's note. Tables and figures come from the first
    seed; ``per_seed`` and ``spread`` (sample std) record the spread. Preconditions are re-resolved on the
    aggregated claims.
    """
    if not reports:
        raise ValueError("aggregate_reports needs at least one report")
    if len(reports) == 1:
        return reports[0]
    first = reports[0]
    ids = [c.id for c in first.claims]
    for r in reports[1:]:
        if [c.id for c in r.claims] != ids:
            raise ValueError("reports of different seeds have different claim ids; cannot aggregate")
    claims = []
    for i, c in enumerate(first.claims):
        values = [r.claims[i].measured for r in reports]
        stat = c.aggregate
        if c.comparison == "is_true" or all(isinstance(v, bool) for v in values):
            measured: Any = all(bool(v) for v in values)
            spread = None
            stat = "all"
        else:
            arr = [float(v) if v is not None else math.nan for v in values]
            measured = AGGREGATES[stat](arr)
            mu = sum(arr) / len(arr)
            spread = math.sqrt(sum((a - mu) ** 2 for a in arr) / max(len(arr) - 1, 1))
        note = f"{c.note} [{stat} over {len(values)} seeds]".strip()
        claims.append(Claim(id=c.id, statement=c.statement, paper_value=c.paper_value, measured=measured,
                            comparison=c.comparison, threshold=c.threshold, scale=c.scale, spread=spread,
                            per_seed=values, unit=c.unit, note=note, kind=c.kind, source=c.source,
                            reference_value=c.reference_value, reference_source=c.reference_source,
                            requires=list(c.requires), aggregate=c.aggregate, no_stub_reason=c.no_stub_reason,
                            timing=c.timing, headline=c.headline, threshold_reason=c.threshold_reason))
    agg = Report(slug=first.slug, title=first.title, scale=first.scale, seed=[r.seed for r in reports],
                  claims=claims, tables=first.tables, figures=first.figures, config=first.config,
                  notes=first.notes, wall_time_s=sum(r.wall_time_s or 0.0 for r in reports))
    agg.resolve_preconditions()
    return agg
