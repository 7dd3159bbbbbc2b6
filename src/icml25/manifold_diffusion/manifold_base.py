"""Base class of the batched manifolds, the Euclidean space and the product manifold.

All operations broadcast over leading axes: a stack of K points of ``Grassmann(d, r)`` is a ``(K, d, r)``
array and ``dist(X, Y)`` returns ``(K,)`` distances. Points of a :class:`Product` are tuples of such arrays.
This vectorisation over agents (one batched SVD/eigh per step instead of K small ones) is what makes the
diffusion strategies fast on CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _tree
from ._tree import Tree

__all__ = ["Manifold", "Euclidean", "Product"]


class Manifold:
    """Interface of a Riemannian manifold with operations batched over leading axes.

    Subclasses implement ``proj``, ``retr``, ``exp``, ``log``, ``dist``, ``inner``, ``random_point`` and
    ``_point_error``; :meth:`mean`, :meth:`weighted_log_sum`, :meth:`check_point` are generic.

    Attributes
    ----------
    point_shape : tuple of int
        Shape of one (unbatched) point; a tuple of shapes for a :class:`Product`.
    """

    point_shape: Any = ()
    name: str = "manifold"

    # --- operations every manifold provides -------------------------------------------------------------
    def proj(self, x: Tree, g: Tree) -> Tree:
        """Orthogonal projection of an ambient vector ``g`` onto the tangent space at ``x``."""
        raise TypeError(f"{type(self).__name__} does not define proj")

    def egrad2rgrad(self, x: Tree, egrad: Tree) -> Tree:
        """Riemannian gradient at ``x`` from the Euclidean gradient ``egrad`` (same shapes as ``x``)."""
        return self.proj(x, egrad)

    def retr(self, x: Tree, v: Tree) -> Tree:
        """Retraction ``R_x(v)``: a first-order approximation of the exponential map that lands on M."""
        return self.exp(x, v)

    def exp(self, x: Tree, v: Tree) -> Tree:
        """Exponential map ``Exp_x(v)``."""
        raise TypeError(f"{type(self).__name__} does not define exp")

    def log(self, x: Tree, y: Tree) -> Tree:
        """Logarithm map ``Log_x(y)``: the tangent vector at ``x`` pointing to ``y`` with length ``dist(x, y)``."""
        raise TypeError(f"{type(self).__name__} does not define log")

    def dist(self, x: Tree, y: Tree) -> np.ndarray:
        """Geodesic distance, shape = the leading (batch) shape."""
        return np.sqrt(np.maximum(self.inner(x, self.log(x, y), self.log(x, y)), 0.0))

    def inner(self, x: Tree, u: Tree, v: Tree) -> np.ndarray:
        """Riemannian inner product ``<u, v>_x``, shape = the leading (batch) shape."""
        raise TypeError(f"{type(self).__name__} does not define inner")

    def norm(self, x: Tree, u: Tree) -> np.ndarray:
        """Riemannian norm of the tangent vector ``u`` at ``x``."""
        return np.sqrt(np.maximum(self.inner(x, u, u), 0.0))

    def random_point(self, rng: np.random.Generator, size: int | None = None) -> Tree:
        """A random point (or ``size`` stacked points) drawn with the numpy Generator ``rng``."""
        raise TypeError(f"{type(self).__name__} does not define random_point")

    def random_tangent(self, x: Tree, rng: np.random.Generator) -> Tree:
        """A random tangent vector at ``x`` (Gaussian ambient vector projected on the tangent space)."""
        g = _tree.tree_map(lambda a: rng.standard_normal(np.shape(a)), x)
        return self.proj(x, g)

    def _point_error(self, x: Tree) -> np.ndarray:
        """Largest violation of the manifold's defining equations over the batch (0 on the manifold)."""
        raise TypeError(f"{type(self).__name__} does not define _point_error")

    # --- generic helpers ------------------------------------------------------------------------------------
    def _check_shape(self, x: Tree, name: str) -> None:
        shp = tuple(self.point_shape)
        arr = np.asarray(x)
        if arr.ndim < len(shp) or tuple(arr.shape[arr.ndim - len(shp):]) != shp:
            raise ValueError(f"{name} must have trailing shape {shp} for {self!r}, got shape {arr.shape}")

    def check_point(self, x: Tree, name: str = "point", tol: float = 1e-6) -> None:
        """Raise ValueError naming ``name`` when ``x`` has the wrong shape or lies off the manifold by > ``tol``."""
        self._check_shape(x, name)
        if not np.all(np.isfinite(np.asarray(x))):
            raise ValueError(f"{name} contains NaN or inf")
        err = float(np.max(self._point_error(x)))
        if err > tol:
            raise ValueError(f"{name} is not on {self!r}: constraint violation {err:.3g} > tol {tol:g}")

    def is_point(self, x: Tree, tol: float = 1e-8) -> bool:
        """True when ``x`` satisfies the manifold's equations to ``tol`` (shape errors give False)."""
        try:
            self.check_point(x, tol=tol)
        except ValueError:
            return False
        return True

    def weighted_log_sum(self, base: Tree, points: Tree, weights: np.ndarray) -> Tree:
        """``out[m] = sum_n weights[m, n] Log_{base[m]}(points[n])``, computing only the non-zero pairs.

        Parameters
        ----------
        base : (M, ...) stacked points
        points : (N, ...) stacked points
        weights : (M, N) array

        Returns
        -------
        (M, ...) stacked tangent vectors (minus the Riemannian gradient of ``½ Σ_n w_mn d²(·, y_n)``).
        """
        w = np.asarray(weights, dtype=float)
        m_idx, n_idx = np.nonzero(w)
        # pairs with m == n contribute Log_x(x) = 0
        keep = ~((m_idx == n_idx) & (base is points))
        m_idx, n_idx = m_idx[keep], n_idx[keep]
        m_count = w.shape[0]
        if m_idx.size == 0:
            return _tree.tree_map(np.zeros_like, base)
        logs = _tree.scale(w[m_idx, n_idx], self.pair_logs(base, points, m_idx, n_idx))
        # np.nonzero returns m_idx sorted, so each agent's pairs form one contiguous segment
        rows, starts = np.unique(m_idx, return_index=True)

        def _segment_sum(leaf: np.ndarray) -> np.ndarray:
            out = np.zeros((m_count,) + leaf.shape[1:])
            out[rows] = np.add.reduceat(leaf, starts, axis=0)
            return out

        return _tree.tree_map(_segment_sum, logs)

    def pair_logs(self, base: Tree, points: Tree, m_idx: np.ndarray, n_idx: np.ndarray) -> Tree:
        """``Log_{base[m_idx[e]]}(points[n_idx[e]])`` for every pair e (manifolds may reuse base factorisations)."""
        return self.log(_tree.take(base, m_idx), _tree.take(points, n_idx))

    def mean(self, points: Tree, weights: np.ndarray | None = None, init: Tree | None = None, iters: int = 50,
             tol: float = 1e-10, step: float = 1.0) -> Tree:
        """Weighted Fréchet (Karcher) mean ``argmin_w Σ_n a_n d²(w, y_n)`` by Riemannian gradient descent.

        Iterates ``w ← Exp_w(step · Σ_n a_n Log_w(y_n))`` (weights normalised to sum to one), i.e. gradient
        descent with unit step on ``½ Σ a_n d²``; stops when the update norm falls below ``tol``.

        Parameters
        ----------
        points : (N, ...) stacked points
        weights : (N,) or (M, N) non-negative weights, optional (uniform when omitted). With (M, N) the M
            weighted means are computed at once.
        init : point or (M, ...) stacked points, optional
            Starting point(s); default the point with the largest weight.
        iters : int
            Maximum number of iterations.

        Returns
        -------
        One point (weights 1-D) or (M, ...) stacked points.
        """
        n = _tree.leading_size(points)
        w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, dtype=float)
        single = w.ndim == 1
        w2 = np.atleast_2d(w)
        if w2.shape[1] != n or np.any(w2 < 0) or np.any(w2.sum(axis=1) <= 0):
            raise ValueError(f"weights must be non-negative with shape ({n},) or (M, {n}) and positive row sums, "
                             f"got shape {w.shape}")
        w2 = w2 / w2.sum(axis=1, keepdims=True)
        if init is None:
            x = _tree.take(points, np.argmax(w2, axis=1))
        else:
            x = _tree.copy(init)
            if single and _tree.tree_leaves(x)[0].ndim == len(_tree.tree_leaves(self.point_shape_tree())[0]):
                x = _tree.broadcast(x, 1)
        for _ in range(int(iters)):
            v = self.weighted_log_sum(x, points, w2)
            x = self.exp(x, _tree.scale(step, v))
            if float(np.max(self.norm(x, v))) < tol:
                break
        return _tree.take(x, 0) if single else x

    def point_shape_tree(self) -> Tree:
        """An all-zero array (or tuple) with the shape of one point; used to tell batched from single points."""
        return np.zeros(self.point_shape)


class Euclidean(Manifold):
    """Flat space R^shape with the Frobenius inner product (``Exp_x(v) = x + v``, ``Log_x(y) = y - x``).

    Parameters
    ----------
    *shape : int
        Shape of one point, e.g. ``Euclidean(3)`` or ``Euclidean(2, 2)``.

    Examples
    --------
    >>> import numpy as np
    >>> E = Euclidean(2)
    >>> float(E.dist(np.zeros(2), np.array([3.0, 4.0])))
    5.0
    """

    name = "Euclidean"

    def __init__(self, *shape: int) -> None:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        from icml25.core.validation import check_int

        if not shape:
            raise ValueError("shape must be one or more positive integers, got none")
        self.point_shape = tuple(check_int(s, "shape", low=1) for s in shape)

    def __repr__(self) -> str:
        return f"Euclidean{self.point_shape}"

    @property
    def dim(self) -> int:
        """Dimension of the space."""
        return int(np.prod(self.point_shape))

    def _axes(self, a: np.ndarray) -> tuple[int, ...]:
        return tuple(range(a.ndim - len(self.point_shape), a.ndim))

    def proj(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Identity (every ambient vector is tangent)."""
        return np.asarray(g, dtype=float)

    def retr(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``x + v``."""
        return np.asarray(x) + v

    def exp(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``x + v``."""
        return np.asarray(x) + v

    def log(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``y - x``."""
        return np.asarray(y) - x

    def inner(self, x: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Frobenius inner product over the point axes."""
        prod = np.asarray(u) * v
        return prod.sum(axis=self._axes(prod))

    def dist(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Frobenius distance ``‖y − x‖``."""
        d = np.asarray(y) - x
        return np.sqrt((d * d).sum(axis=self._axes(d)))

    def random_point(self, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Standard normal entries."""
        lead = () if size is None else (int(size),)
        return rng.standard_normal(lead + self.point_shape)

    def _point_error(self, x: np.ndarray) -> np.ndarray:
        return np.zeros(1)


class Product(Manifold):
    """Cartesian product of manifolds; points and tangent vectors are tuples with one entry per factor.

    The metric is the sum of the factors' metrics, so ``dist² = Σ_j dist_j²`` and every map acts
    factor-wise (spec §2.3: the GMM parameters live on ``SPD(d+1)^G × R^{G−1}``).

    Parameters
    ----------
    manifolds : sequence of Manifold
        The factors.

    Examples
    --------
    >>> import numpy as np
    >>> M = Product([Euclidean(2), Euclidean(1)])
    >>> x = (np.zeros(2), np.zeros(1)); y = (np.array([3.0, 0.0]), np.array([4.0]))
    >>> float(M.dist(x, y))
    5.0
    """

    name = "Product"

    def __init__(self, manifolds: Any) -> None:
        manifolds = list(manifolds)
        if not manifolds or not all(isinstance(m, Manifold) for m in manifolds):
            raise TypeError(f"manifolds must be a non-empty list of Manifold objects, got {manifolds!r}")
        self.manifolds = manifolds
        self.point_shape = tuple(m.point_shape for m in manifolds)

    def __repr__(self) -> str:
        return "Product([" + ", ".join(repr(m) for m in self.manifolds) + "])"

    def _each(self, op: str, *args: Tree) -> tuple:
        self._check_tuple(args[0])
        return tuple(getattr(m, op)(*parts) for m, *parts in zip(self.manifolds, *args, strict=True))

    def _check_tuple(self, x: Tree, name: str = "point") -> None:
        if not isinstance(x, (tuple, list)) or len(x) != len(self.manifolds):
            raise ValueError(f"{name} must be a tuple of {len(self.manifolds)} arrays for {self!r}, "
                             f"got {type(x).__name__}")

    def proj(self, x: Tree, g: Tree) -> Tree:
        """Factor-wise projection."""
        return self._each("proj", x, g)

    def egrad2rgrad(self, x: Tree, egrad: Tree) -> Tree:
        """Factor-wise Riemannian gradient."""
        return self._each("egrad2rgrad", x, egrad)

    def retr(self, x: Tree, v: Tree) -> Tree:
        """Factor-wise retraction."""
        return self._each("retr", x, v)

    def exp(self, x: Tree, v: Tree) -> Tree:
        """Factor-wise exponential map."""
        return self._each("exp", x, v)

    def log(self, x: Tree, y: Tree) -> Tree:
        """Factor-wise logarithm map."""
        return self._each("log", x, y)

    def pair_logs(self, base: Tree, points: Tree, m_idx: np.ndarray, n_idx: np.ndarray) -> Tree:
        """Factor-wise pair logarithms."""
        return tuple(m.pair_logs(b, p, m_idx, n_idx) for m, b, p in zip(self.manifolds, base, points, strict=True))

    def inner(self, x: Tree, u: Tree, v: Tree) -> np.ndarray:
        """Sum of the factors' inner products."""
        return sum(self._each("inner", x, u, v))  # type: ignore[return-value]

    def dist(self, x: Tree, y: Tree) -> np.ndarray:
        """``sqrt(Σ_j dist_j²)``."""
        return np.sqrt(sum(d ** 2 for d in self._each("dist", x, y)))

    def random_point(self, rng: np.random.Generator, size: int | None = None) -> Tree:
        """A tuple of random points of the factors."""
        return tuple(m.random_point(rng, size) for m in self.manifolds)

    def random_tangent(self, x: Tree, rng: np.random.Generator) -> Tree:
        """Factor-wise random tangent vectors."""
        self._check_tuple(x)
        return tuple(m.random_tangent(xi, rng) for m, xi in zip(self.manifolds, x, strict=True))

    def check_point(self, x: Tree, name: str = "point", tol: float = 1e-6) -> None:
        """Factor-wise :meth:`Manifold.check_point`."""
        self._check_tuple(x, name)
        for j, (m, xi) in enumerate(zip(self.manifolds, x, strict=True)):
            m.check_point(xi, name=f"{name}[{j}]", tol=tol)

    def _point_error(self, x: Tree) -> np.ndarray:
        return np.array([float(np.max(m._point_error(xi))) for m, xi in zip(self.manifolds, x, strict=True)])

    def point_shape_tree(self) -> Tree:
        """A tuple of zero arrays with the factors' point shapes."""
        return tuple(m.point_shape_tree() for m in self.manifolds)
