"""Figures: a headless matplotlib, saved as PNG with labelled axes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .optional import require

__all__ = ["new_figure", "save_figure", "reference_line"]


def _plt() -> Any:
    mpl = require("matplotlib", extra="plot")
    mpl.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def new_figure(ncols: int = 1, nrows: int = 1, width: float = 5.0, height: float = 3.6) -> tuple[Any, Any]:
    """A ``(figure, axes)`` pair on the Agg backend, sized ``width × height`` inches per panel."""
    plt = _plt()
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=True)
    return fig, axes


def reference_line(ax: Any, value: float, label: str = "paper", horizontal: bool = True) -> None:
    """Draw the paper's reference value as a dashed line on ``ax``."""
    if horizontal:
        ax.axhline(value, color="grey", ls="--", lw=1, label=label)
    else:
        ax.axvline(value, color="grey", ls="--", lw=1, label=label)


def save_figure(fig: Any, path: str | Path) -> Path:
    """Save ``fig`` as a PNG at ``path`` (parents created) and close it."""
    plt = _plt()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
