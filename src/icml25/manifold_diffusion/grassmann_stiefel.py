"""The Grassmann and Stiefel manifolds of orthonormal d×r frames, batched over leading axes (spec §2.3)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .manifold_base import Manifold

__all__ = ["Grassmann", "Stiefel"]


def _t(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _sym(a: np.ndarray) -> np.ndarray:
    return 0.5 * (a + _t(a))


def _gram_fn(a: np.ndarray, fn) -> np.ndarray:  # type: ignore[no-untyped-def]
    """``W diag(fn(λ)) Wᵀ`` for the r×r Gram matrix ``aᵀa = W diag(λ) Wᵀ`` (λ clipped at 0).

    With the thin SVD ``a = U Σ Wᵀ`` this turns ``U g(Σ) Wᵀ`` into ``a · W diag(g(σ)/σ) Wᵀ``: an r×r
    eigendecomposition replaces the d×r SVD, which is the main cost when d ≫ r.
    """
    lam, w = np.linalg.eigh(_t(a) @ a)
    return (w * fn(np.maximum(lam, 0.0))[..., None, :]) @ _t(w)


def _polar(a: np.ndarray) -> np.ndarray:
    """Nearest matrix with orthonormal columns, ``U Wᵀ`` for ``a = U Σ Wᵀ``, computed as ``a (aᵀa)^-½``."""
    return a @ _gram_fn(a, lambda lam: 1.0 / np.sqrt(lam))


def _arctan_ratio(lam: np.ndarray) -> np.ndarray:
    """``arctan(σ)/σ`` with ``σ = sqrt(λ)`` (→ 1 as σ → 0)."""
    sig = np.sqrt(lam)
    small = sig < 1e-4
    safe = np.where(small, 1.0, sig)
    return np.where(small, 1.0 - lam / 3.0, np.arctan(safe) / safe)


def _sinc_cos(lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sin σ / σ, cos σ)`` with ``σ = sqrt(λ)``."""
    sig = np.sqrt(lam)
    return np.sinc(sig / np.pi), np.cos(sig)


def _qr_positive(a: np.ndarray) -> np.ndarray:
    """Q factor of the thin QR decomposition with a non-negative diagonal of R."""
    q, r = np.linalg.qr(a)
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    signs = np.where(signs == 0, 1.0, signs)
    return q * signs[..., None, :]


class _Frames(Manifold):
    """Shared parts of Grassmann and Stiefel: d×r matrices with orthonormal columns."""

    def __init__(self, d: int, r: int, retraction: str = "polar") -> None:
        from icml25.core.validation import check_int

        d, r = check_int(d, "d", low=1), check_int(r, "r", low=1)
        if not (1 <= r <= d):
            raise ValueError(f"need 1 <= r <= d, got d={d}, r={r}")
        if retraction not in ("polar", "qr"):
            raise ValueError(f"retraction must be 'polar' or 'qr', got {retraction!r}")
        self.d, self.r, self.retraction = d, r, retraction
        self.point_shape = (d, r)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.d}, {self.r})"

    def retr(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Polar retraction ``U Wᵀ`` with ``x + v = U Σ Wᵀ`` (or Q of a QR when ``retraction='qr'``)."""
        y = np.asarray(x) + v
        return _polar(y) if self.retraction == "polar" else _qr_positive(y)

    def inner(self, x: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Embedded (Frobenius) inner product ``tr(uᵀ v)``."""
        return np.sum(np.asarray(u) * v, axis=(-2, -1))

    def random_point(self, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Q factor of a Gaussian d×r matrix (Haar-distributed frame)."""
        lead = () if size is None else (int(size),)
        return _qr_positive(rng.standard_normal(lead + (self.d, self.r)))

    def _point_error(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        gram = _t(x) @ x
        return np.abs(gram - np.eye(self.r)).max(axis=(-2, -1))


class Grassmann(_Frames):
    """The Grassmann manifold Gr(d, r) of r-dimensional subspaces of R^d.

    A point is a d×r matrix ``X`` with orthonormal columns representing ``span(X)``; tangent vectors satisfy
    ``Xᵀ V = 0``. Formulas of spec §2.3 (Edelman, Arias & Smith 1998):
    ``P_X(G) = G − X XᵀG``, ``Log_X(Y) = U arctan(Σ) Wᵀ`` with ``U Σ Wᵀ = (Y − X XᵀY)(XᵀY)⁻¹``,
    ``Exp_X(V) = X W cos(Σ) Wᵀ + U sin(Σ) Wᵀ`` with ``V = U Σ Wᵀ``, ``d(X, Y)² = Σ_j arccos²(σ_j(XᵀY))`` (evaluated stably).

    Parameters
    ----------
    d, r : int
        Ambient dimension and subspace dimension (1 <= r <= d).
    retraction : {"polar", "qr"}
        The retraction (pymanopt uses polar).

    Examples
    --------
    >>> import numpy as np
    >>> G = Grassmann(5, 2)
    >>> rng = np.random.default_rng(0)
    >>> X, Y = G.random_point(rng), G.random_point(rng)
    >>> bool(np.isclose(G.dist(Y, G.exp(X, G.log(X, Y))), 0.0, atol=1e-6))
    True
    """

    name = "Grassmann"

    def proj(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """``G − X (XᵀG)``."""
        x = np.asarray(x)
        return g - x @ (_t(x) @ g)

    def exp(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Geodesic ``X W cos(Σ) Wᵀ + U sin(Σ) Wᵀ`` (``V = U Σ Wᵀ``), re-orthonormalised by a polar step."""
        v = np.asarray(v, dtype=float)
        lam, w = np.linalg.eigh(_t(v) @ v)  # V = U Σ Wᵀ: Σ² = eig(VᵀV), U sin(Σ) Wᵀ = V W (sin Σ / Σ) Wᵀ
        sinc, cos = _sinc_cos(np.maximum(lam, 0.0))
        y = np.asarray(x) @ ((w * cos[..., None, :]) @ _t(w)) + v @ ((w * sinc[..., None, :]) @ _t(w))
        return _polar(y)

    def log(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``U arctan(Σ) Wᵀ`` with ``U Σ Wᵀ = (Y − X XᵀY)(XᵀY)⁻¹`` (needs all principal angles < π/2).

        When ``XᵀY`` is singular the pseudo-inverse is used (the result then has a huge norm; the subspaces
        are orthogonal in some direction and the logarithm is not unique).
        """
        x, y = np.asarray(x), np.asarray(y)
        xty = _t(x) @ y
        try:
            inv = np.linalg.inv(xty)
        except np.linalg.LinAlgError:
            inv = np.linalg.pinv(xty)
        m = (y - x @ xty) @ inv  # M = U Σ Wᵀ; U arctan(Σ) Wᵀ = M W (arctan Σ / Σ) Wᵀ
        return m @ _gram_fn(m, _arctan_ratio)

    def dist(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Geodesic distance ``sqrt(Σ_j θ_j²)``, θ_j the principal angles between the subspaces.

        With ``XᵀY = U Σ Wᵀ`` the principal vectors are ``XU`` and ``YW``; ``θ_j = 2 arcsin(‖XU_j − YW_j‖ / 2)``
        equals ``arccos(σ_j)`` but stays accurate for tiny angles (arccos loses half the digits near 1).
        """
        x, y = np.asarray(x), np.asarray(y)
        u, _, wt = np.linalg.svd(_t(x) @ y)
        chord = np.linalg.norm(x @ u - y @ _t(wt), axis=-2)
        theta = 2.0 * np.arcsin(np.clip(0.5 * chord, 0.0, 1.0))
        return np.sqrt(np.sum(theta ** 2, axis=-1))


class Stiefel(_Frames):
    """The Stiefel manifold St(d, r) of d×r matrices with orthonormal columns, embedded metric.

    ``P_X(G) = G − X sym(XᵀG)``; the exponential map is Edelman et al.'s closed form for the embedded
    metric. The Stiefel logarithm has no closed form: :meth:`log` returns the inverse of the polar
    retraction (``V = Y S − X`` with ``S`` symmetric solving ``XᵀY S + S YᵀX = 2I``), and :meth:`dist` is its
    norm. Both agree with the true log/distance to second order for nearby points, which is what the
    one-step combine of the diffusion strategy needs.

    Parameters
    ----------
    d, r : int
        Ambient dimension and number of columns.
    retraction : {"polar", "qr"}
        The retraction (pymanopt's Stiefel uses QR).

    Examples
    --------
    >>> import numpy as np
    >>> S = Stiefel(4, 2)
    >>> X = S.random_point(np.random.default_rng(1))
    >>> bool(S.is_point(S.retr(X, 0.3 * S.random_tangent(X, np.random.default_rng(2)))))
    True
    """

    name = "Stiefel"

    def proj(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """``G − X sym(XᵀG)``."""
        x = np.asarray(x)
        return g - x @ _sym(_t(x) @ g)

    def exp(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Embedded-metric geodesic ``[X V] expm([[A, −VᵀV], [I, A]]) [expm(−A); 0]`` with ``A = XᵀV``."""
        x, v = np.asarray(x), np.asarray(v)
        a = _t(x) @ v
        r = self.r
        eye = np.broadcast_to(np.eye(r), a.shape)
        block = np.concatenate([np.concatenate([a, -_t(v) @ v], axis=-1),
                                np.concatenate([eye, a], axis=-1)], axis=-2)
        big = scipy.linalg.expm(block)
        right = np.concatenate([scipy.linalg.expm(-a), np.zeros_like(a)], axis=-2)
        y = np.concatenate([x, v], axis=-1) @ big @ right
        return _polar(y)

    def log(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Inverse polar retraction: the tangent ``V`` with ``retr(X, V) = Y`` (see the class docstring)."""
        x, y = np.asarray(x), np.asarray(y)
        b = _t(x) @ y
        r = self.r
        eye = np.eye(r)
        # row-major vec: vec(B S) = (B ⊗ I) vec S, vec(S Bᵀ) = (I ⊗ B) vec S
        lhs = np.einsum("...ij,kl->...ikjl", b, eye).reshape(b.shape[:-2] + (r * r, r * r))
        lhs = lhs + np.einsum("ij,...kl->...ikjl", eye, b).reshape(b.shape[:-2] + (r * r, r * r))
        rhs = np.broadcast_to((2.0 * eye).reshape(r * r), b.shape[:-2] + (r * r,))
        s = np.linalg.solve(lhs, rhs[..., None])[..., 0].reshape(b.shape)
        return y @ _sym(s) - x
