"""Spectral radius of a graph and of vertex-deleted subgraphs (the quantity SRM minimises)."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from icml25.core.validation import check_array

from ._validation import check_graph

__all__ = ["spectral_radius", "spectral_radius_after_removal"]

#: above this many vertices the largest eigenvalue is computed with Lanczos (eigsh) on a sparse matrix
DENSE_LIMIT = 400


def _dense_rho(a: np.ndarray) -> float:
    if a.shape[0] == 0:
        return 0.0
    if a.shape[0] == 1:
        return float(abs(a[0, 0]))
    return float(scipy.linalg.eigvalsh(a, subset_by_index=[a.shape[0] - 1, a.shape[0] - 1])[0])


def _matrix_rho(a: Any) -> float:
    n = a.shape[0]
    if n <= DENSE_LIMIT:
        dense = a.toarray() if scipy.sparse.issparse(a) else np.asarray(a, dtype=float)
        return max(_dense_rho(dense.astype(float)), 0.0)
    sp = scipy.sparse.csr_matrix(a, dtype=float)
    if sp.nnz == 0:
        return 0.0
    val = scipy.sparse.linalg.eigsh(sp, k=1, which="LA", return_eigenvectors=False, tol=1e-10)
    return max(float(val[0]), 0.0)


def spectral_radius(graph: Any) -> float:
    """Largest adjacency eigenvalue ρ(G) of an undirected graph.

    Parameters
    ----------
    graph : networkx.Graph or array_like of shape (n, n)
        An undirected simple graph, or a symmetric (dense or scipy.sparse) adjacency matrix.

    Returns
    -------
    float
        ρ(G) = λ_max(A) ≥ 0 (the maximum over connected components; 0 for a graph without edges). Dense
        ``eigvalsh`` up to 400 vertices, sparse Lanczos (``eigsh``) above.

    Examples
    --------
    >>> import networkx as nx
    >>> round(spectral_radius(nx.star_graph(4)), 6)
    2.0
    """
    if isinstance(graph, nx.Graph):
        check_graph(graph)
        if graph.number_of_nodes() == 0:
            return 0.0
        return _matrix_rho(nx.to_scipy_sparse_array(graph, dtype=float, weight=None, format="csr"))
    if scipy.sparse.issparse(graph):
        a = scipy.sparse.csr_matrix(graph, dtype=float)
        check_array(a.data, "graph", ndim=1, min_size=0)  # finite entries
        sym = abs(a - a.T).max() <= 1e-9 if a.shape[0] == a.shape[1] else False
    else:
        a = check_array(graph, "graph", ndim=2, min_size=0)
        sym = a.shape[0] == a.shape[1] and np.allclose(a, a.T)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"graph must be a networkx.Graph or a square adjacency matrix, got shape {a.shape}")
    if not sym:
        raise ValueError("graph must be a symmetric adjacency matrix (an undirected graph)")
    return _matrix_rho(a)


def spectral_radius_after_removal(graph: nx.Graph, removed: Any) -> float:
    """ρ(G − R): the spectral radius of the subgraph induced by the vertices not in ``removed``.

    Parameters
    ----------
    graph : networkx.Graph
        Undirected simple graph.
    removed : iterable of nodes
        The vaccinated (deleted) vertex set R; unknown nodes raise ValueError.

    Returns
    -------
    float
        ρ(G[V ∖ R]).
    """
    check_graph(graph)
    removed = set(removed)
    unknown = [v for v in removed if v not in graph]
    if unknown:
        raise ValueError(f"removed must hold nodes of the graph, got unknown node {unknown[0]!r}")
    keep = [v for v in graph.nodes if v not in removed]
    return spectral_radius(graph.subgraph(keep))
