"""Manifold operations against closed forms and identities (spec §6 quick unit checks)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25.manifold_diffusion import SPD, Euclidean, Grassmann, Product, Stiefel


def _proj_matrix(x: np.ndarray) -> np.ndarray:
    return x @ np.swapaxes(x, -1, -2)


@pytest.fixture
def rng(global_seed: int) -> np.random.Generator:
    return np.random.default_rng(global_seed)


def _near(m, x, rng, scale):  # a point at geodesic distance <= scale from x
    v = m.random_tangent(x, rng)
    return m.exp(x, scale * v / m.norm(x, v)[..., None, None])


def test_grassmann_exp_log_inverse_and_distance(rng: np.random.Generator) -> None:
    g = Grassmann(10, 5)
    x = g.random_point(rng, 6)
    y = _near(g, x, rng, 1.2)
    v = g.log(x, y)
    # Log gives a tangent vector whose exponential spans Y (compare projection matrices)
    assert np.abs(np.swapaxes(x, -1, -2) @ v).max() < 1e-10
    assert np.abs(_proj_matrix(g.exp(x, v)) - _proj_matrix(y)).max() < 1e-8
    # |Log_X(Y)| = d(X, Y); symmetry; Log_X(X) = 0
    np.testing.assert_allclose(g.norm(x, v), g.dist(x, y), atol=1e-7)
    np.testing.assert_allclose(g.dist(x, y), g.dist(y, x), atol=1e-7)
    assert np.abs(g.log(x, x)).max() < 1e-8
    # distance is invariant to the choice of basis (X O represents the same subspace)
    o, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    np.testing.assert_allclose(g.dist(x @ o, y), g.dist(x, y), atol=1e-7)


def test_grassmann_exp_log_on_random_far_points(rng: np.random.Generator) -> None:
    g = Grassmann(6, 2)
    x, y = g.random_point(rng, 20), g.random_point(rng, 20)
    assert np.abs(_proj_matrix(g.exp(x, g.log(x, y))) - _proj_matrix(y)).max() < 1e-8


@pytest.mark.parametrize("man", [Grassmann(7, 3), Stiefel(7, 3), Grassmann(5, 2, retraction="qr"),
                                 Stiefel(5, 5)])
def test_frames_retraction_projection(man, rng: np.random.Generator) -> None:
    x = man.random_point(rng, 4)
    g = rng.standard_normal(x.shape)
    p = man.proj(x, g)
    np.testing.assert_allclose(man.proj(x, p), p, atol=1e-12)  # idempotent
    for t in (0.1, 1.0, 5.0):
        y = man.retr(x, t * p)
        assert man.is_point(y, tol=1e-10)
        assert man.is_point(man.exp(x, t * p), tol=1e-10)
    # first-order agreement of retraction and exponential
    small = 1e-4 * p
    assert np.abs(man.retr(x, small) - man.exp(x, small)).max() < 1e-7


def test_stiefel_log_inverts_polar_retraction(rng: np.random.Generator) -> None:
    s = Stiefel(8, 3)
    x = s.random_point(rng, 5)
    v = 0.7 * s.random_tangent(x, rng)
    y = s.retr(x, v)
    np.testing.assert_allclose(s.log(x, y), v, atol=1e-10)
    np.testing.assert_allclose(s.retr(x, s.log(x, y)), y, atol=1e-10)


def test_stiefel_exp_is_a_geodesic_with_constant_speed(rng: np.random.Generator) -> None:
    s = Stiefel(6, 2)
    x = s.random_point(rng)
    v = s.random_tangent(x, rng)
    # Exp_X(2V) = Exp_{Exp_X(V)}(parallel velocity): check via the embedded distance of midpoints
    a, b = s.exp(x, v), s.exp(x, 2 * v)
    np.testing.assert_allclose(np.linalg.norm(a - x), np.linalg.norm(b - a), rtol=1e-8)


def test_spd_closed_forms(rng: np.random.Generator) -> None:
    m = SPD(4)
    s, p = m.random_point(rng, 3), m.random_point(rng, 3)
    # d(S, P)² = Σ log² λ(S⁻¹P), computed independently with scipy's generalized eigensolver
    import scipy.linalg

    for j in range(3):
        lam = scipy.linalg.eigh(p[j], s[j], eigvals_only=True)
        assert np.isclose(m.dist(s[j], p[j]) ** 2, np.sum(np.log(lam) ** 2), rtol=1e-9)
    # affine invariance d(A S Aᵀ, A P Aᵀ) = d(S, P)
    a = rng.standard_normal((4, 4)) + 3 * np.eye(4)
    np.testing.assert_allclose(m.dist(a @ s @ a.T, a @ p @ a.T), m.dist(s, p), rtol=1e-8)
    # exp/log inverse and |Log| = d
    v = m.log(s, p)
    np.testing.assert_allclose(m.exp(s, v), p, atol=1e-9)
    np.testing.assert_allclose(m.norm(s, v), m.dist(s, p), rtol=1e-9)
    # at the identity Exp is the matrix exponential
    sym = rng.standard_normal((4, 4))
    sym = sym + sym.T
    np.testing.assert_allclose(m.exp(np.eye(4), sym), scipy.linalg.expm(sym), rtol=1e-9, atol=1e-9)


def test_spd_retraction_stays_spd_and_gradient_metric(rng: np.random.Generator) -> None:
    m = SPD(5, k=3)
    s = m.random_point(rng, 2)
    assert s.shape == (2, 3, 5, 5)
    v = m.proj(s, 10.0 * rng.standard_normal(s.shape))
    assert m.is_point(m.retr(s, v), tol=1e-8)
    # Riemannian gradient: <rgrad, U>_S = <egrad, U>_F for every tangent U
    eg = rng.standard_normal(s.shape)
    eg = eg + np.swapaxes(eg, -1, -2)
    u = m.proj(s, rng.standard_normal(s.shape))
    np.testing.assert_allclose(m.inner(s, m.egrad2rgrad(s, eg), u), np.sum(eg * u, axis=(-3, -2, -1)), rtol=1e-9)


@pytest.mark.parametrize("man", [Grassmann(6, 2), Stiefel(6, 2), SPD(3), SPD(3, k=2), Euclidean(3, 2)])
def test_batched_equals_loop(man, rng: np.random.Generator) -> None:
    x, y = man.random_point(rng, 5), man.random_point(rng, 5)
    if isinstance(man, (Grassmann, Stiefel)):
        y = man.retr(x, 0.5 * man.random_tangent(x, rng))
    v = man.log(x, y)
    for j in range(5):
        np.testing.assert_allclose(man.log(x[j], y[j]), v[j], atol=1e-12)
        np.testing.assert_allclose(man.dist(x[j], y[j]), man.dist(x, y)[j], atol=1e-12)
        np.testing.assert_allclose(man.retr(x[j], v[j]), man.retr(x, v)[j], atol=1e-12)


@pytest.mark.parametrize("man", [Grassmann(6, 2), SPD(3), Product([SPD(3, k=2), Euclidean(2)])])
def test_frechet_mean_of_identical_points_is_the_point(man, rng: np.random.Generator) -> None:
    x = man.random_point(rng)
    stack = tuple(np.repeat(c[None], 4, 0) for c in x) if isinstance(x, tuple) else np.repeat(x[None], 4, 0)
    mean = man.mean(stack, weights=np.array([0.1, 0.2, 0.3, 0.4]))
    assert float(man.dist(mean, x)) < 1e-7


def test_frechet_mean_euclidean_is_weighted_average_and_grassmann_is_critical(rng: np.random.Generator) -> None:
    e = Euclidean(3)
    pts = rng.standard_normal((5, 3))
    w = rng.uniform(0.1, 1.0, size=5)
    np.testing.assert_allclose(e.mean(pts, w), (w / w.sum()) @ pts, atol=1e-12)
    g = Grassmann(8, 3)
    base = g.random_point(rng)
    pts = _near(g, np.repeat(base[None], 6, 0), rng, 0.4)
    mean = g.mean(pts, weights=w.tolist() + [0.5], iters=100)
    grad = g.weighted_log_sum(mean[None], pts, np.array([w.tolist() + [0.5]]))[0]
    assert np.linalg.norm(grad) < 1e-8
    # the mean minimises the weighted sum of squared distances among nearby points
    cost = lambda x: float(np.sum(np.array(w.tolist() + [0.5]) * g.dist(np.repeat(x[None], 6, 0), pts) ** 2))  # noqa: E731
    for _ in range(5):
        other = g.retr(mean, 0.05 * g.random_tangent(mean, rng))
        assert cost(other) >= cost(mean)


def test_product_distance_is_root_sum_of_squares(rng: np.random.Generator) -> None:
    p = Product([Grassmann(5, 2), SPD(3), Euclidean(2)])
    x, y = p.random_point(rng, 3), p.random_point(rng, 3)
    parts = [m.dist(a, b) ** 2 for m, a, b in zip(p.manifolds, x, y, strict=True)]
    np.testing.assert_allclose(p.dist(x, y), np.sqrt(sum(parts)), rtol=1e-12)
    assert p.is_point(p.retr(x, p.random_tangent(x, rng)))


@settings(max_examples=25, deadline=None)
@given(d=st.integers(2, 8), data=st.data())
def test_grassmann_distance_properties(d: int, data) -> None:  # type: ignore[no-untyped-def]
    r = data.draw(st.integers(1, d))
    seed = data.draw(st.integers(0, 2**31 - 1))
    g = Grassmann(d, r)
    rng = np.random.default_rng(seed)
    x, y, z = (g.random_point(rng) for _ in range(3))
    dxy = float(g.dist(x, y))
    assert 0.0 <= dxy <= np.sqrt(r) * np.pi / 2 + 1e-9
    assert abs(dxy - float(g.dist(y, x))) < 1e-7
    assert float(g.dist(x, z)) <= dxy + float(g.dist(y, z)) + 1e-7


def test_check_point_errors() -> None:
    g = Grassmann(4, 2)
    with pytest.raises(ValueError, match="trailing shape"):
        g.check_point(np.zeros((3, 4, 3)), name="init")
    with pytest.raises(ValueError, match="not on Grassmann"):
        g.check_point(np.ones((4, 2)), name="init")
    with pytest.raises(ValueError, match="not on SPD"):
        SPD(2).check_point(-np.eye(2))
    with pytest.raises(ValueError, match="1 <= r <= d"):
        Grassmann(2, 3)
    with pytest.raises(TypeError, match="Manifold"):
        Product([Grassmann(3, 1), "sphere"])
