"""Combination matrices of the network: Metropolis and uniform rules, validation, the paper's 20-agent matrices."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["metropolis_weights", "uniform_weights", "check_combination_matrix", "paper_combination_matrix",
           "combine_step_bound"]


def _adjacency(graph: Any) -> np.ndarray:
    """Symmetric 0/1 adjacency (no self-loops) from a networkx graph or a square array."""
    if hasattr(graph, "nodes") and hasattr(graph, "edges"):
        nodes = list(graph.nodes)
        index = {n: i for i, n in enumerate(nodes)}
        adj = np.zeros((len(nodes), len(nodes)))
        for u, v in graph.edges:
            if u != v:
                adj[index[u], index[v]] = adj[index[v], index[u]] = 1.0
        return adj
    from icml25.core.validation import check_array

    adj = check_array(graph, "graph", ndim=2)
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
        raise ValueError(f"graph must be a networkx graph or a square adjacency array, got shape {adj.shape}")
    if not np.allclose(adj, adj.T):
        raise ValueError("graph adjacency must be symmetric (undirected graph)")
    adj = (adj != 0).astype(float)
    np.fill_diagonal(adj, 0.0)
    return adj


def metropolis_weights(graph: Any) -> np.ndarray:
    """Metropolis(-Hastings) combination matrix of an undirected graph (spec §2.1).

    ``a_lk = 1 / max(n_k, n_l)`` for neighbours ``l ≠ k`` (``n`` = degree counting the agent itself) and
    ``a_kk = 1 − Σ_{l≠k} a_lk``. The result is symmetric and doubly stochastic.

    Parameters
    ----------
    graph : networkx.Graph or (K, K) array
        Undirected graph (self-loops ignored).

    Returns
    -------
    (K, K) ndarray

    Examples
    --------
    >>> metropolis_weights([[0, 1], [1, 0]]).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    adj = _adjacency(graph)
    n = adj.sum(axis=1) + 1.0
    a = adj / np.maximum(n[:, None], n[None, :])
    np.fill_diagonal(a, 1.0 - a.sum(axis=0))
    return a


def uniform_weights(graph: Any) -> np.ndarray:
    """Uniform (averaging) combination matrix ``a_lk = 1/|N_k|`` for ``l ∈ N_k`` (self included).

    Columns sum to one (left-stochastic); the matrix is not symmetric unless the graph is regular.

    Parameters
    ----------
    graph : networkx.Graph or (K, K) array

    Returns
    -------
    (K, K) ndarray
    """
    adj = _adjacency(graph) + np.eye(_adjacency(graph).shape[0])
    return adj / adj.sum(axis=0, keepdims=True)


def check_combination_matrix(a: Any, graph: Any | None = None, tol: float = 1e-8, name: str = "a") -> np.ndarray:
    """Validate a left-stochastic combination matrix and return it as a float array.

    Checks: square, finite, non-negative, columns summing to one (agent k's weights are column k), and, when
    ``graph`` is given, ``a_lk = 0`` for every non-neighbour pair.

    ``name`` is the argument name used in error messages.

    Raises
    ------
    ValueError
        Naming the violated condition.
    """
    from icml25.core.validation import check_array

    a = check_array(a, name, ndim=2)  # finite, numeric, 2-d
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} (combination matrix) must be square (K, K), got shape {a.shape}")
    if np.any(a < -tol):
        raise ValueError(f"{name} (combination matrix) must be non-negative, min entry is {a.min():.3g}")
    colsum = a.sum(axis=0)
    if np.max(np.abs(colsum - 1.0)) > 1e-6:
        raise ValueError(f"{name} (combination matrix) must be left-stochastic (each column sums to 1; agent k uses "
                         f"column k), column sums range over [{colsum.min():.6g}, {colsum.max():.6g}]")
    if graph is not None:
        adj = _adjacency(graph)
        if adj.shape != a.shape:
            raise ValueError(f"graph has {adj.shape[0]} nodes but A is {a.shape}")
        allowed = adj + np.eye(adj.shape[0])
        bad = (allowed == 0) & (np.abs(a) > tol)
        if np.any(bad):
            l, k = np.argwhere(bad)[0]
            raise ValueError(f"{name} (combination matrix) does not match the graph: a[{l}, {k}] = {a[l, k]:.3g} but "
                             f"agents {l} and {k} are not neighbours")
    return np.clip(a, 0.0, None)


def combine_step_bound(a: Any) -> float:
    """Largest stable one-step combine size ``2 / (1 − λ_min(A))`` of the Euclidean analogue (spec §8).

    Each disagreement mode is multiplied by ``1 + α(λ − 1)`` per step, ``λ ∈ eig(A) ∖ {1}``.
    """
    lam = np.linalg.eigvals(check_combination_matrix(a)).real
    return float(2.0 / (1.0 - lam.min())) if lam.min() < 1.0 else float("inf")


def paper_combination_matrix(rule: str = "metropolis", path: Any = None) -> np.ndarray:
    """The 20-agent combination matrix of the paper's experiments (official release, MIT licence).

    Parameters
    ----------
    rule : {"metropolis", "uniform"}
        Metropolis (Figs. 2-6, 8) or uniform averaging (Fig. 7) weights on the same 37-edge graph.
    path : path-like, optional
        A local CSV to read instead of the shipped copy (a malformed one raises ``ValueError``: one line naming the
        file, the line and what was expected).

    Returns
    -------
    (20, 20) ndarray, left-stochastic.
    """
    from icml25.core import resolve_data

    if not isinstance(rule, str) or rule not in ("metropolis", "uniform"):
        raise ValueError(f"rule must be 'metropolis' or 'uniform', got {rule!r}")
    from icml25.core.files import FileFormatError, check_file, numeric_column, read_csv

    fname = f"A_{rule}.csv"
    url = None  # the release ships .mat files; the CSV copies are icml25's
    what = "a comma-separated K x K left-stochastic combination matrix (no header)"
    if path is not None and Path(path).is_dir():
        check_file(path, what)  # one line: a directory, expected the file
    p = resolve_data("manifold_diffusion", fname, path=path, url=url)
    _, rows = read_csv(p, what, header=False)
    a = np.column_stack([numeric_column(rows, j, p, f"column {j + 1}") for j in range(len(rows[0][1]))])
    try:
        return check_combination_matrix(a)
    except ValueError as exc:
        raise FileFormatError(f"{p}: {exc}; expected {what}") from None
