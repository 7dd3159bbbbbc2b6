"""Tiny helpers that treat a point of a product manifold (a tuple of arrays) like a single array.

Every point or tangent vector handled by this package is either a numpy array whose leading axes index
agents, or a tuple of such arrays (one per factor of a :class:`~icml25.manifold_diffusion.Product`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Tree = Any  # an ndarray or a (nested) tuple of ndarrays


def tree_map(fn: Callable[..., np.ndarray], *trees: Tree) -> Tree:
    """Apply ``fn`` leaf-wise to trees of identical structure."""
    if isinstance(trees[0], (tuple, list)):
        return tuple(tree_map(fn, *parts) for parts in zip(*trees, strict=True))
    return fn(*trees)


def tree_leaves(tree: Tree) -> list[np.ndarray]:
    """The arrays of a tree, in order."""
    if isinstance(tree, (tuple, list)):
        out: list[np.ndarray] = []
        for t in tree:
            out.extend(tree_leaves(t))
        return out
    return [tree]


def take(tree: Tree, idx: Any) -> Tree:
    """Index the leading (agent) axis of every leaf."""
    return tree_map(lambda a: np.asarray(a)[idx], tree)


def add(a: Tree, b: Tree) -> Tree:
    """Leaf-wise ``a + b``."""
    return tree_map(np.add, a, b)


def sub(a: Tree, b: Tree) -> Tree:
    """Leaf-wise ``a - b``."""
    return tree_map(np.subtract, a, b)


def scale(c: Any, a: Tree) -> Tree:
    """Multiply every leaf by ``c``; ``c`` may be an array over the leading axis (broadcast on the right)."""
    c = np.asarray(c, dtype=float)

    def _mul(x: np.ndarray) -> np.ndarray:
        return x * c.reshape(c.shape + (1,) * (x.ndim - c.ndim))

    return tree_map(_mul, a)


def mix(weights: np.ndarray, tree: Tree) -> Tree:
    """``out[m] = sum_n weights[m, n] * tree[n]`` on every leaf (a linear combination over the agent axis)."""
    w = np.asarray(weights, dtype=float)
    return tree_map(lambda x: np.tensordot(w, x, axes=(1, 0)), tree)


def broadcast(tree: Tree, n: int) -> Tree:
    """Stack ``n`` copies of an unbatched point along a new leading axis."""
    return tree_map(lambda x: np.repeat(np.asarray(x, dtype=float)[None], n, axis=0), tree)


def leading_size(tree: Tree) -> int:
    """Size of the leading (agent) axis."""
    return int(tree_leaves(tree)[0].shape[0])


def copy(tree: Tree) -> Tree:
    """A deep copy with float arrays."""
    return tree_map(lambda x: np.array(x, dtype=float, copy=True), tree)
