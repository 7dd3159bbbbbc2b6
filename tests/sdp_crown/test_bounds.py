"""Soundness and exactness of CROWN / α-CROWN / SDP-CROWN bounds against sampling, PGD and exact oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from icml25.sdp_crown import (
    BoundedNet,
    compute_bounds,
    lipnaive_bounds,
    pgd_l2,
    sampled_min_margin,
    spec_matrix,
)
from icml25.testing import requires

METHODS = ("crown", "alpha-crown", "sdp-crown", "sdp-crown-hybrid")


def _net(widths: tuple[int, ...], seed: int) -> BoundedNet:
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    for a, b in zip(widths[:-2], widths[1:-1]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    layers.append(nn.Linear(widths[-2], widths[-1]))
    return BoundedNet(nn.Sequential(*layers).double(), (widths[0],))


def test_single_linear_layer_closed_form() -> None:
    rng = np.random.default_rng(0)
    W, b, x = rng.normal(size=(4, 6)), rng.normal(size=4), rng.normal(size=(3, 6))
    net = BoundedNet([(W, b)], (6,))
    eps = np.array([0.1, 0.5, 2.0])
    for method in METHODS:
        lb, _ = compute_bounds(net, x, eps, None, method=method, iters=3)
        closed = x @ W.T + b - eps[:, None] * np.linalg.norm(W, axis=1)
        np.testing.assert_allclose(lb.numpy(), closed, atol=1e-12)


def test_worked_example_b3() -> None:
    net = BoundedNet([([[0.0, 1.0], [1.0, 0.0]], [0.0, 0.0]), ([[-1.0, 1.0], [1.0, -1.0]], [0.0, 0.0]),
                      ([[-1.0, -1.0]], [0.0])], (2,))
    x, C = torch.tensor([[1.0, 1.0]]), torch.ones(1, 1, 1)
    ibp = [(torch.zeros(1, 2), 2 * torch.ones(1, 2)), (-2 * torch.ones(1, 2), 2 * torch.ones(1, 2))]
    assert compute_bounds(net, x, 1.0, C, method="crown", intermediate_bounds=ibp)[0].item() == pytest.approx(-2)
    sdp, info = compute_bounds(net, x, 1.0, C, method="sdp-crown", iters=0, lambda_mode="exact",
                               intermediate_bounds=ibp)
    assert sdp.item() == pytest.approx(-math.sqrt(2), abs=1e-6)
    assert info["lambdas"][1].item() == pytest.approx(math.sqrt(1 / 8), rel=1e-4)
    # Adam on λ approaches the same value from λ = 1
    adam = compute_bounds(net, x, 1.0, C, method="sdp-crown", iters=40, intermediate_bounds=ibp)[0].item()
    assert -math.sqrt(2) - 1e-3 <= adam <= -math.sqrt(2) + 1e-9
    assert compute_bounds(net, x, 1.0, C, method="crown")[0].item() == pytest.approx(-math.sqrt(2))


@pytest.mark.parametrize("widths,eps", [((3, 6, 5, 3), 0.8), ((4, 8, 8, 6, 3), 0.5), ((5, 10, 4), 1.5)])
def test_all_methods_sound_against_sampling_and_pgd(widths, eps, global_seed) -> None:
    net = _net(widths, global_seed)
    x = torch.randn(3, widths[0], generator=torch.Generator().manual_seed(global_seed), dtype=torch.float64)
    y = net(x).argmax(1)
    C = spec_matrix(y, widths[-1])
    samp = sampled_min_margin(net, x, eps, C, n=100_000, seed=global_seed)
    pgd = pgd_l2(net, x, eps, C, steps=100, restarts=3, seed=global_seed)
    bounds = {m: compute_bounds(net, x, eps, C, method=m, iters=20)[0] for m in METHODS}
    bounds["sdp-exact"] = compute_bounds(net, x, eps, C, method="sdp-crown", iters=5, lambda_mode="exact")[0]
    bounds["lipnaive"] = lipnaive_bounds(net, x, eps, C)
    for m, lb in bounds.items():
        assert (lb <= samp + 1e-9).all(), m
        assert (lb <= pgd + 1e-9).all(), m


@requires("cvxpy")
def test_bounds_below_exact_minimum_and_sdp(global_seed) -> None:
    from icml25.sdp_crown.oracles import exact_min, lp_all, sdp_full

    net = _net((3, 5, 4, 3), global_seed + 7)
    x = torch.randn(2, 3, generator=torch.Generator().manual_seed(global_seed), dtype=torch.float64)
    y = net(x).argmax(1)
    C = spec_matrix(y, 3)
    eps = 0.7
    bounds = {m: compute_bounds(net, x, eps, C, method=m, iters=30)[0] for m in METHODS}
    samp = sampled_min_margin(net, x, eps, C, n=50_000, seed=0)
    for b in range(2):
        for j in range(2):
            exact = exact_min(net, x[b], eps, C[b, j].numpy(), solver="enumerate")
            assert exact <= samp[b, j].item() + 1e-7
            assert sdp_full(net, x[b], eps, C[b, j].numpy()) <= exact + 1e-5
            for m, lb in bounds.items():
                assert lb[b, j].item() <= exact + 1e-7, m
        # LP-All is the optimum of the triangle relaxation CROWN/α-CROWN bound from below (with looser
        # intermediate bounds), and a relaxation of the exact problem
        lp = lp_all(net, x[b], eps, C[b].numpy())
        assert (bounds["alpha-crown"][b].numpy() <= lp + 1e-6).all() and (bounds["crown"][b].numpy() <= lp + 1e-6).all()
        for j in range(2):
            assert lp[j] <= exact_min(net, x[b], eps, C[b, j].numpy(), solver="enumerate") + 1e-6


@requires("pyscipopt")
def test_scip_and_enumeration_agree() -> None:
    from icml25.sdp_crown.oracles import exact_min

    net = _net((3, 5, 4, 3), 11)
    x = torch.tensor([0.2, -0.4, 0.9], dtype=torch.float64)
    c = np.array([1.0, -1.0, 0.0])
    assert exact_min(net, x, 0.8, c, solver="scip") == pytest.approx(exact_min(net, x, 0.8, c, solver="enumerate"),
                                                                      abs=1e-5)


def test_hybrid_never_looser_than_alpha_crown() -> None:
    net = _net((6, 12, 12, 4), 3)
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    y = net(x).argmax(1)
    for eps in (0.2, 1.0):
        a = compute_bounds(net, x, eps, y, method="alpha-crown", iters=20)[0]
        h = compute_bounds(net, x, eps, y, method="sdp-crown-hybrid", iters=20)[0]
        assert (h >= a - 1e-9).all()


def test_optimisation_improves_on_crown_and_is_deterministic() -> None:
    net = _net((6, 12, 12, 4), 5)
    x = torch.randn(3, 6, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    y = net(x).argmax(1)
    crown = compute_bounds(net, x, 0.6, y, method="crown")[0]
    a1 = compute_bounds(net, x, 0.6, y, method="alpha-crown", iters=15)[0]
    a2 = compute_bounds(net, x, 0.6, y, method="alpha-crown", iters=15)[0]
    s1 = compute_bounds(net, x, 0.6, y, method="sdp-crown", iters=15)[0]
    s2 = compute_bounds(net, x, 0.6, y, method="sdp-crown", iters=15)[0]
    assert torch.equal(a1, a2) and torch.equal(s1, s2)
    assert (a1 >= crown - 1e-12).all()


def test_batched_equals_one_at_a_time() -> None:
    net = _net((6, 10, 10, 4), 9)
    x = torch.randn(3, 6, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    y = net(x).argmax(1)
    batched = compute_bounds(net, x, 0.5, y, method="sdp-crown", iters=10)[0]
    single = torch.cat([compute_bounds(net, x[i:i + 1], 0.5, y[i:i + 1], method="sdp-crown", iters=10)[0]
                        for i in range(3)])
    torch.testing.assert_close(batched, single, rtol=1e-10, atol=1e-10)


def test_spectral_norms_are_upper_bounds() -> None:
    net = _net((7, 9, 5, 3), 4)
    for w, s in zip(net.weights, net.spectral_norms()):
        v = torch.randn(2000, w.shape[1], dtype=torch.float64)
        ratio = (v @ w.T).norm(dim=1) / v.norm(dim=1)
        assert ratio.max() <= s
        assert s <= np.linalg.norm(w.numpy(), 2) * (1 + 1e-8)
