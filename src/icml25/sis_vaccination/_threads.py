"""Limit BLAS/LAPACK threads: tiny eigen-solves and products are much faster single-threaded on a busy CPU."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["single_blas_thread"]


def single_blas_thread() -> Any:
    """A context manager limiting BLAS to one thread (threadpoolctl when installed, else a no-op)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scipy/scikit-learn installs
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
