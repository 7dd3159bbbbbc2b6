"""Our Grassmann/Stiefel/SPD operations against pymanopt's, and the from_pymanopt adapter."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.manifold_diffusion import (
    SPD,
    DiffusionAdaptation,
    Euclidean,
    Grassmann,
    Stiefel,
    from_pymanopt,
    paper_combination_matrix,
)
from icml25.testing import requires


def _pm(x: np.ndarray) -> np.ndarray:
    return x @ x.T


@requires("pymanopt")
def test_grassmann_matches_pymanopt(global_seed: int) -> None:
    from pymanopt.manifolds import Grassmann as PG

    rng = np.random.default_rng(global_seed)
    ours, theirs = Grassmann(9, 3), PG(9, 3)
    for _ in range(5):
        x = ours.random_point(rng)
        y = ours.retr(x, 0.8 * ours.random_tangent(x, rng))
        g = rng.standard_normal((9, 3))
        v = ours.proj(x, g)
        np.testing.assert_allclose(ours.proj(x, g), theirs.projection(x, g), atol=1e-12)
        np.testing.assert_allclose(ours.retr(x, v), theirs.retraction(x, v), atol=1e-10)
        np.testing.assert_allclose(_pm(ours.exp(x, v)), _pm(theirs.exp(x, v)), atol=1e-10)
        np.testing.assert_allclose(ours.log(x, y), theirs.log(x, y), atol=1e-9)
        assert np.isclose(ours.dist(x, y), theirs.dist(x, y), atol=1e-9)
        assert np.isclose(ours.inner(x, v, v), theirs.inner_product(x, v, v))


@requires("pymanopt")
def test_stiefel_and_spd_match_pymanopt(global_seed: int) -> None:
    from pymanopt.manifolds import Stiefel as PS
    from pymanopt.manifolds import SymmetricPositiveDefinite as PSPD

    rng = np.random.default_rng(global_seed)
    ours, theirs = Stiefel(7, 3, retraction="qr"), PS(7, 3)
    x = ours.random_point(rng)
    g = rng.standard_normal((7, 3))
    v = ours.proj(x, g)
    np.testing.assert_allclose(v, theirs.projection(x, g), atol=1e-12)
    np.testing.assert_allclose(ours.retr(x, v), theirs.retraction(x, v), atol=1e-10)
    np.testing.assert_allclose(ours.exp(x, v), theirs.exp(x, v), atol=1e-9)
    spd, pspd = SPD(4, k=2), PSPD(4, k=2)
    s, p = spd.random_point(rng), spd.random_point(rng)
    u = spd.proj(s, rng.standard_normal(s.shape))
    np.testing.assert_allclose(spd.dist(s, p), pspd.dist(s, p), rtol=1e-9)
    np.testing.assert_allclose(spd.log(s, p), pspd.log(s, p), atol=1e-9)
    np.testing.assert_allclose(spd.exp(s, u), pspd.exp(s, u), atol=1e-9)
    np.testing.assert_allclose(spd.retr(s, u), pspd.retraction(s, u), atol=1e-9)
    np.testing.assert_allclose(spd.egrad2rgrad(s, u), pspd.euclidean_to_riemannian_gradient(s, u), atol=1e-9)


@requires("pymanopt")
def test_adapter_runs_diffusion_like_native(global_seed: int) -> None:
    from pymanopt.manifolds import Grassmann as PG

    rng = np.random.default_rng(global_seed)
    a = paper_combination_matrix()
    native, adapted = Grassmann(6, 2), from_pymanopt(PG(6, 2))
    assert adapted.point_shape == (6, 2)
    base = native.random_point(rng)
    pts = native.retr(np.repeat(base[None], 20, 0), 0.2 * native.random_tangent(np.repeat(base[None], 20, 0), rng))
    grads = rng.standard_normal(pts.shape)
    out_native = DiffusionAdaptation(native, a, 0.05, 1.0).step(pts, grads)
    out_adapted = DiffusionAdaptation(adapted, a, 0.05, 1.0).step(pts, grads)
    np.testing.assert_allclose(_pm(out_native[3]), _pm(out_adapted[3]), atol=1e-9)


class _Plane:
    """Duck-typed pymanopt-like flat manifold."""

    def projection(self, x, g):  # type: ignore[no-untyped-def]
        return g

    def retraction(self, x, v):  # type: ignore[no-untyped-def]
        return x + v

    def log(self, x, y):  # type: ignore[no-untyped-def]
        return y - x

    def dist(self, x, y):  # type: ignore[no-untyped-def]
        return float(np.linalg.norm(y - x))

    def inner_product(self, x, u, v):  # type: ignore[no-untyped-def]
        return float(np.sum(u * v))

    def random_point(self):  # type: ignore[no-untyped-def]
        return np.zeros(3)


def test_duck_typed_adapter_equals_euclidean(global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    m, e = from_pymanopt(_Plane()), Euclidean(3)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    np.testing.assert_allclose(m.dist(x, y), e.dist(x, y))
    np.testing.assert_allclose(m.exp(x, y), e.exp(x, y))  # falls back to the retraction
    np.testing.assert_allclose(m.mean(y), y.mean(axis=0), atol=1e-12)


def test_adapter_rejects_incomplete_objects() -> None:
    with pytest.raises(TypeError, match="lacks"):
        from_pymanopt(object())
