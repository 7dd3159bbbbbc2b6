"""Symmetric positive definite matrices with the affine-invariant metric, batched over leading axes."""

from __future__ import annotations

import numpy as np

from .manifold_base import Manifold

__all__ = ["SPD"]


def _t(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _sym(a: np.ndarray) -> np.ndarray:
    return 0.5 * (a + _t(a))


def _eig_fn(s: np.ndarray, fn) -> np.ndarray:  # type: ignore[no-untyped-def]
    """``Q fn(Λ) Qᵀ`` for symmetric ``s = Q Λ Qᵀ``."""
    lam, q = np.linalg.eigh(_sym(s))
    return (q * fn(lam)[..., None, :]) @ _t(q)


class SPD(Manifold):
    """The manifold SPD(n)^k of (products of) n×n symmetric positive definite matrices.

    Affine-invariant metric ``⟨U, V⟩_S = tr(S⁻¹ U S⁻¹ V)`` (spec §2.3):
    ``grad f = S sym(∇f) S``, ``Exp_S(V) = S^½ expm(S^-½ V S^-½) S^½``, ``Log_S(P) = S^½ logm(S^-½ P S^-½) S^½``,
    ``d(S, P)² = Σ_j log² λ_j(S⁻¹P)`` (summed over the k factors). :meth:`retr` is pymanopt's second-order
    retraction ``S + V + ½ V S⁻¹ V`` (symmetrised).

    Parameters
    ----------
    n : int
        Matrix size.
    k : int
        Number of factors; a point has shape ``(n, n)`` when k = 1 and ``(k, n, n)`` otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> M = SPD(3)
    >>> S = M.random_point(np.random.default_rng(0))
    >>> round(float(M.dist(S, 2.0 * S) ** 2 / np.log(2.0) ** 2), 10)  # = n
    3.0
    """

    name = "SPD"

    def __init__(self, n: int, k: int = 1) -> None:
        from icml25.core.validation import check_int

        n, k = check_int(n, "n", low=1), check_int(k, "k", low=1)
        self.n, self.k = n, k
        self.point_shape = (n, n) if k == 1 else (k, n, n)

    def __repr__(self) -> str:
        return f"SPD({self.n})" if self.k == 1 else f"SPD({self.n}, k={self.k})"

    def _reduce(self, a: np.ndarray) -> np.ndarray:
        """Sum per-matrix quantities over the k axis when k > 1."""
        return a.sum(axis=-1) if self.k > 1 else a

    def proj(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Symmetric part ``sym(G)`` (the tangent space is the symmetric matrices)."""
        return _sym(np.asarray(g, dtype=float))

    def egrad2rgrad(self, x: np.ndarray, egrad: np.ndarray) -> np.ndarray:
        """``S sym(∇f) S``."""
        x = np.asarray(x)
        return _sym(x @ _sym(np.asarray(egrad, dtype=float)) @ x)

    def retr(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Second-order retraction ``sym(S + V + ½ V S⁻¹ V)`` (stays SPD for any symmetric V)."""
        x, v = np.asarray(x), np.asarray(v)
        return _sym(x + v + 0.5 * v @ np.linalg.solve(x, v))

    def exp(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``S^½ expm(S^-½ V S^-½) S^½``."""
        lam, q = np.linalg.eigh(_sym(np.asarray(x)))
        sq = (q * np.sqrt(lam)[..., None, :]) @ _t(q)
        isq = (q * (1.0 / np.sqrt(lam))[..., None, :]) @ _t(q)
        return _sym(sq @ _eig_fn(isq @ v @ isq, np.exp) @ sq)

    @staticmethod
    def _roots(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lam, q = np.linalg.eigh(_sym(np.asarray(x)))
        sq = (q * np.sqrt(lam)[..., None, :]) @ _t(q)
        isq = (q * (1.0 / np.sqrt(lam))[..., None, :]) @ _t(q)
        return sq, isq

    def log(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``S^½ logm(S^-½ P S^-½) S^½``."""
        sq, isq = self._roots(x)
        return _sym(sq @ _eig_fn(isq @ np.asarray(y) @ isq, np.log) @ sq)

    def pair_logs(self, base: np.ndarray, points: np.ndarray, m_idx: np.ndarray, n_idx: np.ndarray) -> np.ndarray:
        """Pair logarithms computing each base point's square roots once."""
        sq, isq = self._roots(base)
        sq, isq = sq[m_idx], isq[m_idx]
        return _sym(sq @ _eig_fn(isq @ np.asarray(points)[n_idx] @ isq, np.log) @ sq)

    def dist(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``sqrt(Σ log² λ(S⁻¹P))`` (summed over the k factors)."""
        lam, q = np.linalg.eigh(_sym(np.asarray(x)))
        isq = (q * (1.0 / np.sqrt(lam))[..., None, :]) @ _t(q)
        ev = np.linalg.eigvalsh(_sym(isq @ np.asarray(y) @ isq))
        return np.sqrt(self._reduce(np.sum(np.log(ev) ** 2, axis=-1)))

    def inner(self, x: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``tr(S⁻¹ U S⁻¹ V)`` (summed over the k factors)."""
        x = np.asarray(x)
        a = np.linalg.solve(x, u)
        b = np.linalg.solve(x, v)
        return self._reduce(np.sum(a * _t(b), axis=(-2, -1)))

    def random_point(self, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """``Q diag(exp(z)) Qᵀ`` with Haar ``Q`` and ``z ~ N(0, 1)``."""
        lead = () if size is None else (int(size),)
        shape = lead + self.point_shape
        q, _ = np.linalg.qr(rng.standard_normal(shape))
        z = np.exp(rng.standard_normal(shape[:-1]))
        return _sym((q * z[..., None, :]) @ _t(q))

    def _point_error(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        asym = np.abs(x - _t(x)).max(axis=(-2, -1))
        lam_min = np.linalg.eigvalsh(_sym(x))[..., 0]
        return np.maximum(asym, np.where(lam_min > 0, 0.0, 1.0 - lam_min))
