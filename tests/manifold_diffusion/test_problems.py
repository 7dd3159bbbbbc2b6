"""PCA and GMM problems: gradients vs finite differences, likelihood vs scipy, data generators, learning."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from icml25.manifold_diffusion import (
    Grassmann,
    pca_loss,
    pca_loss_grad,
    principal_subspace,
    synthetic_pca_stream,
)
from icml25.manifold_diffusion.gmm import (
    average_log_likelihood,
    gmm_loss_grad,
    gmm_manifold,
    gmm_params_to_manifold,
    manifold_to_gmm_params,
)
from icml25.manifold_diffusion.gmm_data import kmeans_plusplus_gmm, random_gmm_parameters, sample_gmm


def test_pca_gradient_matches_finite_differences(global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    w = rng.standard_normal((3, 5, 2))
    x = rng.standard_normal((3, 5))
    e = rng.standard_normal(w.shape)
    eps = 1e-6
    fd = (pca_loss(w + eps * e, x) - pca_loss(w - eps * e, x)) / (2 * eps)
    np.testing.assert_allclose(fd, np.sum(pca_loss_grad(w, x) * e, axis=(1, 2)), rtol=1e-6)
    with pytest.raises(ValueError, match="d must match"):
        pca_loss_grad(w, rng.standard_normal((3, 4)))


def test_principal_subspace_matches_sklearn_pca(global_seed: int) -> None:
    PCA = pytest.importorskip("sklearn.decomposition").PCA

    rng = np.random.default_rng(global_seed)
    x = rng.standard_normal((200, 6)) @ np.diag([3, 2, 1.5, 1, 0.5, 0.2])
    u = principal_subspace(x, 3, center=True)
    ref = PCA(3).fit(x).components_.T
    assert float(Grassmann(6, 3).dist(u, ref)) < 1e-8


def test_synthetic_pca_stream_has_the_prescribed_covariance(global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    stream, target = synthetic_pca_stream(4, 50, d=6, r=2, decay=0.8, rng=rng)
    x = stream.reshape(-1, 6)
    lam = np.linalg.eigvalsh(x.T @ x / (len(x) - 1))[::-1]
    np.testing.assert_allclose(lam, 0.64 ** np.arange(6), rtol=1e-10)
    assert float(Grassmann(6, 2).dist(principal_subspace(x, 2), target)) < 1e-6


def _loss(point, x):  # independent per-sample GMM loss through scipy densities (up to a constant)
    s, v = point
    logits = np.r_[v, 0.0]
    pi = np.exp(logits - np.logaddexp.reduce(logits))
    y = np.r_[x, 1.0]
    dens = [pi[j] * multivariate_normal(np.zeros(len(y)), s[j]).pdf(y) for j in range(len(pi))]
    return -np.log(np.sum(dens))


def test_gmm_gradient_matches_finite_differences(global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    means, covs, weights = random_gmm_parameters(3, 2, rng)
    s, v = gmm_params_to_manifold(means, covs, weights)
    x = rng.standard_normal(3) + means[0]
    gs, gv = gmm_loss_grad((s[None], v[None]), x[None])
    e = rng.standard_normal(s.shape)
    e = e + np.swapaxes(e, -1, -2)
    ev = rng.standard_normal(v.shape)
    eps = 1e-6
    fd = (_loss((s + eps * e, v + eps * ev), x) - _loss((s - eps * e, v - eps * ev), x)) / (2 * eps)
    assert np.isclose(fd, np.sum(gs[0] * e) + gv[0] @ ev, rtol=1e-5, atol=1e-8)


def test_gmm_likelihood_and_parameter_roundtrip(global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    means, covs, weights = random_gmm_parameters(3, 3, rng)
    point = gmm_params_to_manifold(means, covs, weights)
    assert gmm_manifold(3, 3).is_point(point)
    back = manifold_to_gmm_params(point)
    for got, ref in zip(back, (means, covs, weights), strict=True):
        np.testing.assert_allclose(got, ref, atol=1e-10)
    x = sample_gmm(means, covs, weights, 100, rng)
    y = np.c_[x, np.ones(100)]
    ref = np.mean(np.log(sum(weights[j] * multivariate_normal(np.zeros(4), point[0][j]).pdf(y) for j in range(3))))
    assert np.isclose(average_log_likelihood(point, x, chunk=33), ref, rtol=1e-10)
    # the augmented likelihood differs from the plain GMM likelihood by the constant ½ + ½ log 2π per sample
    plain = np.mean(np.log(sum(weights[j] * multivariate_normal(means[j], covs[j]).pdf(x) for j in range(3))))
    assert np.isclose(average_log_likelihood(point, x) - plain, -0.5 - 0.5 * np.log(2 * np.pi), rtol=1e-9)


def test_random_gmm_parameters_are_separated(global_seed: int) -> None:
    rng = np.random.default_rng(global_seed)
    means, covs, weights = random_gmm_parameters(8, 3, rng)
    tr = np.trace(covs, axis1=1, axis2=2)
    for j in range(3):
        assert np.all(np.linalg.eigvalsh(covs[j]) > 0)
        for l in range(j):
            assert np.linalg.norm(means[j] - means[l]) >= max(tr[j], tr[l])
    assert np.isclose(weights.sum(), 1)


def test_riemannian_sgd_on_gmm_increases_likelihood(global_seed: int) -> None:
    from icml25.manifold_diffusion import NonCooperative, simulate

    pytest.importorskip("sklearn")
    rng = np.random.default_rng(global_seed)
    means, covs, weights = random_gmm_parameters(2, 2, rng)
    x = sample_gmm(means, covs, weights, 1200, rng)
    init = gmm_params_to_manifold(*kmeans_plusplus_gmm(x, 2))
    m = gmm_manifold(2, 2)
    out = simulate(NonCooperative(m, 0.05), x.reshape(1, 1200, 2), gmm_loss_grad, init)
    truth = average_log_likelihood(gmm_params_to_manifold(means, covs, weights), x)
    start = average_log_likelihood(init, x)
    end = average_log_likelihood(out.points, x)[0]
    assert m.is_point(out.points, tol=1e-8)
    assert end > start
    assert truth - end < 0.5 * (truth - start) + 0.05
