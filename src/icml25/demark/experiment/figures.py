"""The report's figures: z-scores of the simulated deployment's texts, and the chooser-bias curve with the real
model's measured bias."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core import Report


def add_figures(rep: Report, d: dict[str, Any], curve: list[dict[str, float]], real: dict[str, Any] | None) -> None:
    """Add the detection and chooser-bias figures."""
    rep.add_figure("detection", _figure_detection(d))
    rep.add_figure("chooser_bias", _figure_curve(curve, real))


def _figure_detection(d: dict[str, Any]) -> Any:
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    names = [k for k in ("null", "clean", "wm", "demark", "scrub", "blackbox", "surrogate", "spoof") if f"z_{k}" in d]
    ax.boxplot([d[f"z_{k}"] for k in names], tick_labels=names)
    ax.axhline(2.326, color="r", ls="--", lw=1, label="z for p = 0.01")
    ax.set_ylabel("KGW z-score")
    ax.set_title("simulated deployment: detection before / after De-mark")
    ax.legend()
    return fig


def _figure_curve(curve: list[dict[str, float]], real: dict[str, Any] | None) -> Any:
    from icml25.core.plotting import new_figure

    fig, ax = new_figure()
    s = [c["sigma_b"] for c in curve]
    ax.plot(s, [c["accuracy"] for c in curve], "o-", label="green-list accuracy (simulated oracle)")
    ax.plot(s, [c["h rate"] for c in curve], "s-", label="h recovery rate (simulated oracle)")
    if real is not None and np.isfinite(real["bias"]["sigma_b_equivalent"]):
        ax.axvline(real["bias"]["sigma_b_equivalent"], color="r", ls="--",
                   label=f"SmolLM2-135M measured sigma_b = {real['bias']['sigma_b_equivalent']:.2f}")
        ax.plot([real["bias"]["sigma_b_equivalent"]], [real["green"]["accuracy"]], "r*", ms=12,
                label="SmolLM2 green-list accuracy at real steps")
    ax.set_xlabel("chooser bias sigma_b (log-odds)")
    ax.set_ylabel("rate")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    return fig
