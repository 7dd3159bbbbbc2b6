"""Seeded synthetic inputs: random trees, ambiguity-controlled posteriors on a real tree (spec §5), random costs."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_int, check_positive, check_real

from .hierarchy import Hierarchy

__all__ = ["random_tree", "synthetic_posteriors", "weighted_path_cost"]


def random_tree(n_nodes: int, random_state: Any = None, max_children: int | None = None) -> Hierarchy:
    """A random recursive tree: node ``i`` attaches to a uniformly drawn earlier node (with < ``max_children``).

    Parameters
    ----------
    n_nodes : int
        Number of nodes (≥ 2).
    random_state : None, int or numpy Generator
    max_children : int, optional
        Cap on the number of children of a node.
    """
    n_nodes = check_int(n_nodes, "n_nodes", low=2)
    if max_children is not None:
        max_children = check_int(max_children, "max_children", low=1)
    rng = check_random_state(random_state)
    children: dict[int, list[int]] = {0: []}
    for i in range(1, int(n_nodes)):
        options = [p for p in range(i) if max_children is None or len(children.get(p, [])) < max_children]
        p = int(rng.choice(options))
        children.setdefault(p, []).append(i)
        children.setdefault(i, [])
    return Hierarchy({str(k): [str(c) for c in v] for k, v in children.items() if v})


def synthetic_posteriors(h: Hierarchy, n_samples: int, blur: float, random_state: Any = None,
                         gamma0: float = 4.0, sigma: float = 0.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Posteriors whose ambiguity grows with ``blur`` (spec §5, 'synthetic posteriors').

    For each sample a leaf ``l*`` is drawn uniformly, ``s_l = −γ_b (d(l) − d(LCA(l, l*))) + σ ε_l`` with
    ``γ_b = γ0 / (1 + b)`` and ``ε ~ N(0, 1)``, ``p = softmax(s)``; a label ``y ~ p`` is drawn (calibrated by
    construction).

    Returns
    -------
    (P, y, l_star) : ndarray (n_samples, n_leaves), ndarray (n_samples,), ndarray (n_samples,)
    """
    if not isinstance(h, Hierarchy):
        raise TypeError(f"h must be a Hierarchy, got {type(h).__name__}")
    n_samples = check_int(n_samples, "n_samples", low=1)
    blur = check_real(blur, "blur", low=0.0)
    gamma0 = check_positive(gamma0, "gamma0")
    sigma = check_real(sigma, "sigma", low=0.0)
    rng = check_random_state(random_state)
    L = h.n_leaves
    lca_depth = h.depth[h.lca_matrix()[:L]]  # (L, L), symmetric
    leaf_depth = h.depth[:L]
    l_star = rng.integers(0, L, size=n_samples)
    gamma = gamma0 / (1.0 + blur)
    s = -gamma * (leaf_depth[None, :] - lca_depth[l_star]) + sigma * rng.standard_normal((n_samples, L))
    s -= s.max(axis=1, keepdims=True)
    P = np.exp(s)
    P /= P.sum(axis=1, keepdims=True)
    u = rng.random(n_samples)[:, None]
    y = np.minimum((np.cumsum(P, axis=1) < u).sum(axis=1), L - 1)
    return P, y, l_star


def weighted_path_cost(h: Hierarchy, random_state: Any = None) -> np.ndarray:
    """A strictly reasonable node-to-leaf cost: tree path length with random positive edge weights.

    Returns
    -------
    ndarray, shape (n_nodes, n_leaves)
        ``C(n, l) = w(root→n) + w(root→l) − 2 w(root→LCA(n, l))``, edge weights ~ U(0.5, 2).
    """
    rng = check_random_state(random_state)
    w = rng.uniform(0.5, 2.0, size=h.n_nodes)
    w[h.root] = 0.0
    dist_root = h.ancestor_matrix.astype(np.float64) @ w  # weighted depth
    lca = h.lca_matrix()
    return dist_root[:, None] + dist_root[None, : h.n_leaves] - 2.0 * dist_root[lca]
