"""What a run will take before it starts: the dry-run plan of a reproduction (``icml25 reproduce --dry-run``).

Every paper's ``Config`` has a ``plan(self) -> Plan`` method. A :class:`Plan` lists the stages, models, data sets and
number of runs, what the run needs (GPU memory, CPU cores, disk, weights or a server to provide, downloads), and an
estimated wall time computed from measured per-unit costs (:class:`UnitCost`: e.g. seconds per update measured at
full scale on this project's 2-core machine, times the number of updates of the plan). Nothing heavy runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Plan", "UnitCost", "Needs", "format_seconds", "plans_table", "closest_preset"]


@dataclass(frozen=True)
class UnitCost:
    """One measured cost of a plan: ``count`` units of ``unit`` at ``seconds_each``.

    Parameters
    ----------
    what : str
        The stage it belongs to ("PPO updates", "generated tokens").
    unit : str
        What one unit is ("update", "1k tokens", "image").
    count : float
        How many units the plan runs.
    seconds_each : float
        Measured seconds per unit on the hardware named by ``measured_on``.
    measured_on : str
        Where and how ``seconds_each`` was measured ("2-core CPU, full run 2026-12-03", "H200, vLLM, 1 GPU").
    scale_note : str
        How the number was carried to the plan's hardware, if it was (e.g. "GPU assumed 20x the CPU rate").
    """

    what: str
    unit: str
    count: float
    seconds_each: float
    measured_on: str
    scale_note: str = ""

    def __post_init__(self) -> None:
        for name in ("count", "seconds_each"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"UnitCost {self.what!r}: {name} must be a finite number >= 0, got {v!r}")
        if not self.measured_on.strip():
            raise ValueError(f"UnitCost {self.what!r}: measured_on must say where seconds_each was measured")

    @property
    def seconds(self) -> float:
        """``count * seconds_each``."""
        return float(self.count) * float(self.seconds_each)


@dataclass(frozen=True)
class Needs:
    """What a run needs from the machine and the user."""

    cpu_cores: int = 2
    gpu_memory_gb: float = 0.0  # 0: no GPU needed
    gpus: int = 0
    ram_gb: float = 4.0
    disk_gb: float = 0.5
    weights: tuple[str, ...] = ()  # model weights the user provides (name and how: "hf:/path", a server)
    downloads: tuple[str, ...] = ()  # data sets fetched with --allow-download (or placed by hand)
    server: str = ""  # an OpenAI-compatible server the run talks to, if any

    def lines(self) -> list[str]:
        """Human-readable lines, one per need."""
        out = [f"CPU cores: {self.cpu_cores}", f"RAM: {self.ram_gb:g} GB", f"disk: {self.disk_gb:g} GB"]
        out.append(f"GPU: {self.gpus} x {self.gpu_memory_gb:g} GB" if self.gpus else "GPU: none")
        out += [f"weights: {w}" for w in self.weights]
        out += [f"download: {d}" for d in self.downloads]
        if self.server:
            out.append(f"server: {self.server}")
        return out


@dataclass(frozen=True)
class Plan:
    """The dry-run plan of a reproduction at one scale.

    Parameters
    ----------
    slug, scale : str
    stages : sequence of str
        The stages in order, each one line.
    models, datasets : sequence of str
        The models (with their sizes) and data sets the run uses.
    runs : int
        Independent runs (seeds x settings).
    needs : Needs
    costs : sequence of UnitCost
        The measured per-unit costs; the estimate is their sum.
    notes : sequence of str
        Anything else a user should know before starting.
    """

    slug: str
    scale: str
    stages: Sequence[str]
    models: Sequence[str] = ()
    datasets: Sequence[str] = ()
    runs: int = 1
    needs: Needs = field(default_factory=Needs)
    costs: Sequence[UnitCost] = ()
    notes: Sequence[str] = ()

    def __post_init__(self) -> None:
        if not self.stages:
            raise ValueError(f"Plan {self.slug!r}: stages must list at least one stage")
        if isinstance(self.runs, bool) or not isinstance(self.runs, int) or self.runs < 1:
            raise ValueError(f"Plan {self.slug!r}: runs must be an integer >= 1, got {self.runs!r}")
        if not self.costs:
            raise ValueError(f"Plan {self.slug!r}: costs must hold at least one measured UnitCost for the estimate")

    @property
    def estimated_seconds(self) -> float:
        """Sum of the per-unit costs."""
        return sum(c.seconds for c in self.costs)

    def text(self) -> str:
        """The plan as the dry run prints it."""
        lines = [f"{self.slug} at scale {self.scale}: {self.runs} run{'s' if self.runs != 1 else ''}, "
                 f"estimated {format_seconds(self.estimated_seconds)}", "", "stages:"]
        lines += [f"  {i}. {s}" for i, s in enumerate(self.stages, 1)]
        if self.models:
            lines += ["models:"] + [f"  - {m}" for m in self.models]
        if self.datasets:
            lines += ["data sets:"] + [f"  - {d}" for d in self.datasets]
        lines += ["needs:"] + [f"  - {n}" for n in self.needs.lines()]
        lines += ["estimate (measured per-unit costs x units):"]
        for c in self.costs:
            note = f"; {c.scale_note}" if c.scale_note else ""
            lines.append(f"  - {c.what}: {c.count:g} {c.unit} x {c.seconds_each:.3g} s = {format_seconds(c.seconds)} "
                         f"(measured on {c.measured_on}{note})")
        if self.notes:
            lines += ["notes:"] + [f"  - {n}" for n in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict with the estimate."""
        d = asdict(self)
        d["estimated_seconds"] = self.estimated_seconds
        return d


def closest_preset(config: Any) -> str:
    """The preset (``"quick"``, ``"full"`` or ``"paper"``) a config dataclass differs from in the fewest fields.

    The scale a ``Config.plan()`` called on a hand-made config reports (``--set`` changes a few fields of a preset;
    the registry relabels plans it builds itself with the scale asked for). A tie goes to the larger scale.
    ``config``'s class must have the classmethods ``quick()``, ``full()`` and ``paper()``.
    """
    import dataclasses

    names = [f.name for f in dataclasses.fields(config)]
    cls = type(config)

    def differing(preset: str) -> int:
        other = getattr(cls, preset)()
        return sum(getattr(config, n) != getattr(other, n) for n in names)

    return min(("paper", "full", "quick"), key=differing)


def format_seconds(seconds: float) -> str:
    """``"42 s"``, ``"12 min"``, ``"3.4 h"`` or ``"2.1 days"``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def plans_table(plans: Sequence[Plan]) -> str:
    """One Markdown table for several plans (``icml25 plan all``)."""
    rows = ["| paper | scale | runs | GPU | cores | weights / server | downloads | estimate |",
            "|---|---|---|---|---|---|---|---|"]
    for p in plans:
        gpu = f"{p.needs.gpus} x {p.needs.gpu_memory_gb:g} GB" if p.needs.gpus else "none"
        weights = ", ".join([*p.needs.weights, *([p.needs.server] if p.needs.server else [])]) or "—"
        rows.append(f"| {p.slug} | {p.scale} | {p.runs} | {gpu} | {p.needs.cpu_cores} | {weights} "
                    f"| {', '.join(p.needs.downloads) or '—'} | {format_seconds(p.estimated_seconds)} |")
    return "\n".join(rows)
