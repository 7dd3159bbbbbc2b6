"""Turn infection-state data into (Y(t), Y(t+1)) transition pairs that never cross a trajectory boundary."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validation import check_states

__all__ = ["as_transitions"]


def as_transitions(Y: Any, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Split ``Y`` into transition pairs.

    Parameters
    ----------
    Y : array_like of shape (T, n), or a list of such arrays
        Infection states (0/1 or bool); each array is one trajectory of consecutive time steps.
    n : int, optional
        Required number of vertices.

    Returns
    -------
    prev, nxt : ndarray of bool, shape (transitions, n)
        Y(t) and Y(t+1) for every t inside each trajectory.
    """
    if isinstance(Y, (list, tuple)):
        if not Y:
            raise ValueError("Y must hold at least one trajectory, got an empty list")
        arrays = [check_states(y, n, name=f"Y[{j}]") for j, y in enumerate(Y)]
        widths = {a.shape[1] for a in arrays}
        if len(widths) != 1:
            raise ValueError(f"all trajectories in Y must have the same number of vertices, got {sorted(widths)}")
    else:
        arrays = [check_states(Y, n)]
    prev = np.concatenate([a[:-1] for a in arrays], axis=0)
    nxt = np.concatenate([a[1:] for a in arrays], axis=0)
    return prev, nxt
