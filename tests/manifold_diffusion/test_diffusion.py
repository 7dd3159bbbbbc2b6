"""Diffusion strategies: flat-space identities, agreement, staying on the manifold, loop equivalence, learning."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.manifold_diffusion import (
    DRSGD,
    SPD,
    Centralized,
    DiffusionAdaptation,
    Euclidean,
    Grassmann,
    NonCooperative,
    check_combination_matrix,
    combine_step_bound,
    disagreement,
    metropolis_weights,
    msd,
    paper_combination_matrix,
    pca_loss_grad,
    simulate,
    synthetic_pca_stream,
    to_db,
    uniform_weights,
)


def _path(n: int) -> np.ndarray:
    return np.eye(n, k=1) + np.eye(n, k=-1)


def _cycle(n: int) -> np.ndarray:
    adj = _path(n)
    adj[0, -1] = adj[-1, 0] = 1.0
    return adj


def _star(n_leaves: int) -> np.ndarray:
    adj = np.zeros((n_leaves + 1, n_leaves + 1))
    adj[0, 1:] = adj[1:, 0] = 1.0
    return adj


@pytest.fixture
def a() -> np.ndarray:
    return paper_combination_matrix("metropolis")


def test_paper_matrices_and_weight_rules() -> None:
    a = paper_combination_matrix("metropolis")
    u = paper_combination_matrix("uniform")
    np.testing.assert_allclose(metropolis_weights(a > 0), a, atol=1e-9)
    np.testing.assert_allclose(uniform_weights(u > 0), u, atol=1e-9)
    np.testing.assert_allclose(a, a.T)
    assert np.isclose(combine_step_bound(a), 2 / (1 + 0.150), atol=2e-3)
    g = _path(4)
    w = metropolis_weights(g)
    np.testing.assert_allclose(w.sum(0), 1)
    np.testing.assert_allclose(w.sum(1), 1)
    assert w[0, 2] == 0 and np.isclose(w[0, 1], 1 / 3)
    uw = uniform_weights(g)
    np.testing.assert_allclose(uw.sum(0), 1)
    assert np.isclose(uw[0, 1], 1 / 3) and np.isclose(uw[1, 0], 1 / 2)
    check_combination_matrix(w, graph=g)


def test_weights_from_a_networkx_graph() -> None:
    nx = pytest.importorskip("networkx")
    g = nx.connected_watts_strogatz_graph(12, 4, 0.3, seed=1)
    adj = nx.to_numpy_array(g)
    np.testing.assert_allclose(metropolis_weights(g), metropolis_weights(adj))
    np.testing.assert_allclose(uniform_weights(g), uniform_weights(adj))
    check_combination_matrix(metropolis_weights(g), graph=g)


def test_bad_combination_matrices_and_steps() -> None:
    g = _path(3)
    with pytest.raises(ValueError, match="left-stochastic"):
        check_combination_matrix(np.full((3, 3), 0.5))
    with pytest.raises(ValueError, match="does not match the graph"):
        check_combination_matrix(np.full((3, 3), 1 / 3), graph=g)
    with pytest.raises(ValueError, match="square"):
        check_combination_matrix(np.ones((2, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        check_combination_matrix(np.array([[1.5, 0.0], [-0.5, 1.0]]))
    a = metropolis_weights(g)
    with pytest.raises(ValueError, match="step_size must be > 0"):
        DiffusionAdaptation(Grassmann(3, 1), a, step_size=0.0)
    with pytest.raises(ValueError, match="combine must be"):
        DiffusionAdaptation(Grassmann(3, 1), a, 0.1, combine="average")
    with pytest.raises(TypeError, match="manifold"):
        NonCooperative("grassmann", 0.1)
    with pytest.warns(UserWarning, match="stability bound"):
        DiffusionAdaptation(Grassmann(3, 1), a, 0.1, combine_step=5.0)


def test_flat_combine_with_unit_step_is_the_weighted_average(a: np.ndarray, global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    psi = rng.standard_normal((20, 3, 2))
    algo = DiffusionAdaptation(Euclidean(3, 2), a, step_size=0.1, combine_step=1.0)
    np.testing.assert_allclose(algo.combine_points(psi), np.einsum("lk,lij->kij", a, psi), atol=1e-12)
    # the full step is adapt (ψ = w − μ g) then combine
    w, g = rng.standard_normal((20, 3, 2)), rng.standard_normal((20, 3, 2))
    np.testing.assert_allclose(algo.step(w, g), np.einsum("lk,lij->kij", a, w - 0.1 * g), atol=1e-12)
    # the exact Fréchet combine is the same weighted average in flat space
    exact = DiffusionAdaptation(Euclidean(3, 2), a, 0.1, combine="exact_frechet", frechet_iters=3)
    np.testing.assert_allclose(exact.combine_points(psi), np.einsum("lk,lij->kij", a, psi), atol=1e-12)


def test_column_convention_with_non_symmetric_matrix(global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    a = uniform_weights(_star(3))  # columns sum to one, rows do not
    psi = rng.standard_normal((4, 2))
    out = DiffusionAdaptation(Euclidean(2), a, 0.1).combine_points(psi)
    np.testing.assert_allclose(out, a.T @ psi, atol=1e-12)


def test_drsgd_and_centralized_flat_closed_forms(a: np.ndarray, global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    w, g = rng.standard_normal((20, 4)), rng.standard_normal((20, 4))
    out = DRSGD(Euclidean(4), a, step_size=0.2, consensus_step=0.5).step(w, g)
    np.testing.assert_allclose(out, w + 0.5 * (a.T @ w - w) - 0.2 * g, atol=1e-12)
    same = np.repeat(w[:1], 20, 0)
    cen = Centralized(Euclidean(4), 0.2).step(same, g)
    np.testing.assert_allclose(cen, np.repeat(w[:1] - 0.2 * g.mean(0, keepdims=True), 20, 0), atol=1e-12)


def test_consensus_only_shrinks_disagreement_50x(a: np.ndarray, global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    g = Grassmann(10, 5)
    base = np.repeat(g.random_point(rng)[None], 20, 0)
    v = g.random_tangent(base, rng)
    pts = g.exp(base, (0.3 * rng.uniform(0.5, 1, 20) / g.norm(base, v))[:, None, None] * v)
    algo = DiffusionAdaptation(g, a, step_size=1.0, combine_step=1.0)
    d0 = disagreement(g, pts)
    for _ in range(100):
        pts = algo.combine_points(pts)
    assert disagreement(g, pts) <= d0 / 50
    assert g.is_point(pts, tol=1e-8)


def test_extrinsic_average_without_retraction_leaves_the_manifold(a: np.ndarray, global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    g = Grassmann(10, 5)
    pts = g.random_point(rng, 20)
    stub = np.einsum("lk,lij->kij", a, pts)  # what a combine step without retraction would produce
    assert not g.is_point(stub, tol=1e-8)
    assert g.is_point(DiffusionAdaptation(g, a, 0.05, 1.6).combine_points(
        g.retr(np.repeat(pts[:1], 20, 0), 0.1 * g.random_tangent(np.repeat(pts[:1], 20, 0), rng))), tol=1e-8)


@pytest.mark.parametrize("combine", ["one_step", "exact_frechet"])
def test_vectorised_step_equals_per_agent_loop(a: np.ndarray, combine: str, global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    g = Grassmann(6, 2)
    base = np.repeat(g.random_point(rng)[None], 20, 0)
    w = g.retr(base, 0.3 * g.random_tangent(base, rng))
    x = rng.standard_normal((20, 6))
    algo = DiffusionAdaptation(g, a, 0.05, 1.2, combine=combine, frechet_iters=5)
    out = algo.step(w, pca_loss_grad(w, x))
    psi = []
    for k in range(20):  # adapt, one agent at a time, in plain numpy
        gk = -2.0 * np.outer(x[k], x[k]) @ w[k]
        rk = gk - w[k] @ (w[k].T @ gk)
        psi.append(g.retr(w[k], -0.05 * rk))
    psi = np.array(psi)
    for k in range(20):
        if combine == "one_step":
            v = sum(a[l, k] * g.log(psi[k], psi[l]) for l in range(20) if a[l, k] > 0)
            ref = g.retr(psi[k], 1.2 * v)
        else:
            ref = psi[k]
            for _ in range(5):
                ref = g.exp(ref, sum(a[l, k] * g.log(ref, psi[l]) for l in range(20) if a[l, k] > 0))
        np.testing.assert_allclose(ref @ ref.T, out[k] @ out[k].T, atol=1e-10)


def test_diffusion_learns_pca_better_than_non_cooperative(a: np.ndarray, global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    g = Grassmann(6, 2)
    stream, target = synthetic_pca_stream(20, 400, 6, 2, decay=0.6, rng=rng)
    init = g.random_point(rng)
    res = {}
    for name, algo in {"non": NonCooperative(g, 0.05), "diff": DiffusionAdaptation(g, a, 0.05, 1.0),
                       "cen": Centralized(g, 0.05)}.items():
        out = simulate(algo, stream, pca_loss_grad, init, metrics={"msd": lambda p: msd(g, p, target)})
        res[name] = float(to_db(out.history["msd"][-100:].mean()))
        assert g.is_point(out.points, tol=1e-8)
    assert res["diff"] < -10.0  # converged close to the principal subspace
    assert res["diff"] <= res["non"] - 6.0
    assert res["cen"] <= res["diff"] + 0.5


def test_spd_diffusion_estimates_a_covariance(global_seed: int) -> None:
    """Riemannian diffusion on SPD(2) for the Gaussian negative log-likelihood: agents reach the covariance."""
    rng = np.random.default_rng(global_seed)
    a = metropolis_weights(_cycle(6))
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    x = rng.multivariate_normal(np.zeros(2), cov, size=(6, 1500))
    m = SPD(2)

    def nll_grad(s, xs):  # ∇_S [½ log det S + ½ xᵀS⁻¹x]
        sinv = np.linalg.inv(s)
        sx = np.einsum("kij,kj->ki", sinv, xs)
        return 0.5 * (sinv - sx[:, :, None] * sx[:, None, :])

    out = simulate(DiffusionAdaptation(m, a, 0.01, 1.0), x, nll_grad, np.eye(2), n_iter=1500)
    assert m.is_point(out.points)
    assert float(np.max(m.dist(out.points, np.repeat(cov[None], 6, 0)))) < 0.3


def test_simulate_validates_inputs(a: np.ndarray, global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    g = Grassmann(4, 2)
    algo = DiffusionAdaptation(g, a, 0.1)
    with pytest.raises(ValueError, match="agents"):
        simulate(algo, rng.standard_normal((5, 10, 4)), pca_loss_grad, g.random_point(rng))
    with pytest.raises(ValueError, match="not on Grassmann"):
        simulate(algo, rng.standard_normal((20, 10, 4)), pca_loss_grad, np.ones((4, 2)))
    with pytest.raises(ValueError, match="dimension"):
        simulate(algo, rng.standard_normal((20, 10, 5)), pca_loss_grad, g.random_point(rng))
    with pytest.raises(ValueError, match="n_iter"):
        simulate(algo, rng.standard_normal((20, 10, 4)), pca_loss_grad, g.random_point(rng), n_iter=0)
