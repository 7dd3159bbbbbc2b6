"""One way to set the torch/BLAS/OpenMP thread count of a block: :func:`thread_limits` (applied and restored)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

__all__ = ["thread_limits", "THREAD_ENV"]

#: environment variables that size the thread pools of BLAS/OpenMP libraries loaded after they are set
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
               "NUMEXPR_NUM_THREADS")

@contextlib.contextmanager
def thread_limits(threads: int) -> Iterator[None]:
    """Run the block with ``threads`` torch/BLAS/OpenMP threads; the previous settings are restored after it.

    Libraries loaded before are limited with ``threadpoolctl`` (when installed) and ``torch.set_num_threads``
    (when torch is imported); libraries loaded inside the block read the ``OMP_NUM_THREADS``-style variables.
    """
    old_env = {k: os.environ.get(k) for k in THREAD_ENV}
    os.environ.update({k: str(threads) for k in THREAD_ENV})
    torch = sys.modules.get("torch")
    old_torch = torch.get_num_threads() if torch is not None else None
    stack = contextlib.ExitStack()
    try:
        try:
            from threadpoolctl import threadpool_limits

            stack.enter_context(threadpool_limits(limits=threads))
        except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
            pass
        if torch is not None:
            torch.set_num_threads(threads)
        yield
    finally:
        stack.close()
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if torch is not None and old_torch is not None:
            torch.set_num_threads(old_torch)
