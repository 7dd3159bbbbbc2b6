"""``icml25 rstar-math eval ...``: evaluate a policy (+PPM) on a benchmark file (see :mod:`.real_llm`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]

USAGE = ("usage: icml25 rstar-math eval --data math500 --policy hf:<dir> [--ppm <dir> | --ppm-head value_head.bin] "
         "[--method mcts --n 8] [--limit K] [--out results.json]")


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch ``icml25 rstar-math <command>``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    if argv[0] != "eval":
        print(f"icml25 rstar-math: unknown command {argv[0]!r}\n{USAGE}", file=sys.stderr)
        return 2
    from .models.real_llm import main as eval_main

    return eval_main(argv[1:])
