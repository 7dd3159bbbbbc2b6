"""Use a pymanopt manifold (or any object with pymanopt's method names) with the diffusion strategies."""

from __future__ import annotations

from typing import Any

import numpy as np

from .manifold_base import Manifold

__all__ = ["from_pymanopt", "PymanoptManifold"]

_REQUIRED = ("projection", "retraction", "log", "dist", "inner_product", "random_point")


class PymanoptManifold(Manifold):
    """Adapter exposing a pymanopt manifold through this package's batched interface.

    pymanopt's operations act on one point; the adapter loops over the leading (agent) axes, so it is
    correct but not vectorised. Product manifolds of pymanopt (list-valued points) are not adapted: build a
    :class:`~icml25.manifold_diffusion.Product` of adapted factors instead.

    Parameters
    ----------
    manifold : object
        A ``pymanopt.manifolds`` instance, or any object with the methods ``projection``, ``retraction``,
        ``log``, ``dist``, ``inner_product``, ``random_point`` (and optionally ``exp``,
        ``euclidean_to_riemannian_gradient``) acting on single numpy-array points.

    Examples
    --------
    >>> import numpy as np
    >>> class Plane:  # a duck-typed flat manifold R^2
    ...     def projection(self, x, g): return g
    ...     def retraction(self, x, v): return x + v
    ...     def log(self, x, y): return y - x
    ...     def dist(self, x, y): return float(np.linalg.norm(y - x))
    ...     def inner_product(self, x, u, v): return float(np.sum(u * v))
    ...     def random_point(self): return np.zeros(2)
    >>> M = from_pymanopt(Plane())
    >>> M.dist(np.zeros((3, 2)), np.ones((3, 2))).round(3).tolist()
    [1.414, 1.414, 1.414]
    """

    name = "pymanopt"

    def __init__(self, manifold: Any) -> None:
        missing = [m for m in _REQUIRED if not callable(getattr(manifold, m, None))]
        if missing:
            raise TypeError(f"manifold must provide pymanopt's methods {list(_REQUIRED)}; "
                            f"{type(manifold).__name__} lacks {missing}")
        probe = manifold.random_point()
        if isinstance(probe, (list, tuple)):
            raise TypeError("pymanopt product manifolds (list-valued points) are not supported by from_pymanopt; "
                            "adapt each factor and combine them with icml25.manifold_diffusion.Product")
        self.manifold = manifold
        self.point_shape = tuple(np.shape(probe))

    def __repr__(self) -> str:
        return f"from_pymanopt({type(self.manifold).__name__})"

    def _loop(self, fn: Any, *args: Any, scalar: bool = False) -> np.ndarray:
        nd = len(self.point_shape)
        arrs = [np.asarray(a, dtype=float) for a in args]
        lead = arrs[0].shape[: arrs[0].ndim - nd]
        if not lead:
            out = fn(*arrs)
            return np.asarray(out, dtype=float)
        flat = [a.reshape((-1,) + a.shape[a.ndim - nd:]) for a in arrs]
        res = np.stack([np.asarray(fn(*parts), dtype=float) for parts in zip(*flat, strict=True)])
        return res.reshape(lead) if scalar else res.reshape(lead + res.shape[1:])

    def proj(self, x: Any, g: Any) -> np.ndarray:
        """pymanopt ``projection``."""
        return self._loop(self.manifold.projection, x, g)

    def egrad2rgrad(self, x: Any, egrad: Any) -> np.ndarray:
        """pymanopt ``euclidean_to_riemannian_gradient`` (``projection`` when absent)."""
        fn = getattr(self.manifold, "euclidean_to_riemannian_gradient", None) or self.manifold.projection
        return self._loop(fn, x, egrad)

    def retr(self, x: Any, v: Any) -> np.ndarray:
        """pymanopt ``retraction``."""
        return self._loop(self.manifold.retraction, x, v)

    def exp(self, x: Any, v: Any) -> np.ndarray:
        """pymanopt ``exp`` (the retraction when the manifold has no exponential map)."""
        fn = getattr(self.manifold, "exp", None)
        try:
            return self._loop(fn, x, v) if callable(fn) else self.retr(x, v)
        except RuntimeError:  # pymanopt signals a manifold without closed-form exp by a RuntimeError subclass
            return self.retr(x, v)

    def log(self, x: Any, y: Any) -> np.ndarray:
        """pymanopt ``log``."""
        return self._loop(self.manifold.log, x, y)

    def dist(self, x: Any, y: Any) -> np.ndarray:
        """pymanopt ``dist``."""
        return self._loop(self.manifold.dist, x, y, scalar=True)

    def inner(self, x: Any, u: Any, v: Any) -> np.ndarray:
        """pymanopt ``inner_product``."""
        return self._loop(self.manifold.inner_product, x, u, v, scalar=True)

    def random_point(self, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """pymanopt ``random_point`` (pymanopt draws from numpy's global state, not from ``rng``)."""
        if size is None:
            return np.asarray(self.manifold.random_point(), dtype=float)
        return np.stack([np.asarray(self.manifold.random_point(), dtype=float) for _ in range(int(size))])

    def _point_error(self, x: Any) -> np.ndarray:
        # pymanopt has no membership test; only the shape is checked (by check_point)
        return np.zeros(1)


def from_pymanopt(manifold: Any) -> PymanoptManifold:
    """Wrap a pymanopt manifold so that it can be passed to the diffusion strategies.

    Parameters
    ----------
    manifold : pymanopt manifold or duck-typed object
        See :class:`PymanoptManifold`.

    Returns
    -------
    PymanoptManifold
        A batched (looping) adapter.
    """
    return PymanoptManifold(manifold)
