"""Entropic risk, the OCE utility and the budget grid against closed forms and properties that must hold."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from icml25.risk_cmdp import BudgetGrid, erm, oce, utility


def test_erm_equals_the_definition() -> None:
    rng = np.random.default_rng(0)
    for alpha in (-0.3, -1.0, -4.0):
        v, p = rng.uniform(0, 5, 7), rng.dirichlet(np.ones(7))
        direct = logsumexp(alpha * v, b=p) / alpha  # (1/α) log E[e^{αG}]
        assert erm(v, p, alpha) == pytest.approx(direct, abs=1e-12)


def test_erm_properties() -> None:
    rng = np.random.default_rng(1)
    v, p = rng.uniform(0, 5, 6), rng.dirichlet(np.ones(6))
    mean = float(v @ p)
    assert erm(v, p, -1.0) <= mean  # risk aversion: below the mean (Jensen)
    assert erm(v, p, -1e-6) == pytest.approx(mean, abs=1e-5)  # risk-neutral limit α → 0⁻
    assert erm(v, p, -200.0) == pytest.approx(v.min(), abs=0.05)  # worst case as α → −∞
    assert erm(v + 1.3, p, -1.0) == pytest.approx(erm(v, p, -1.0) + 1.3)  # translation equivariance
    assert erm(np.array([2.0]), np.array([1.0]), -2.0) == pytest.approx(2.0)  # a sure total is its own risk
    assert erm(v, p, -2.0) <= erm(v, p, -1.0)  # more risk aversion, lower value


def test_oce_is_maximised_at_the_erm() -> None:
    v, p, alpha = np.array([0.0, 1.0, 3.0]), np.array([0.2, 0.5, 0.3]), -1.0
    e = erm(v, p, alpha)
    assert oce(v, p, e, alpha) == pytest.approx(e, abs=1e-12)  # closed form: the maximiser is λ* = ERM
    for lam in np.linspace(-1, 4, 21):
        assert oce(v, p, lam, alpha) <= e + 1e-12


def test_utility_closed_form() -> None:
    t = np.linspace(-3, 3, 13)
    assert np.allclose(utility(t, -0.5), (np.exp(-0.5 * t) - 1) / -0.5)
    h = 1e-6  # u(0) = 0, u'(0) = 1, concave
    assert float(utility(0.0, -2.0)) == 0.0
    assert (float(utility(h, -2.0)) - float(utility(-h, -2.0))) / (2 * h) == pytest.approx(1.0, abs=1e-6)
    assert np.all(np.diff(utility(t, -2.0), 2) < 0)


def test_budget_grid_indices() -> None:
    grid = BudgetGrid(3, 0.5)
    assert grid.n == 13 and grid.offset == 6
    assert np.allclose(grid.budgets, np.arange(-3, 3.01, 0.5))
    assert np.allclose(grid.budgets[grid.lambda_indices], np.arange(0, 3.01, 0.5))
    assert np.array_equal(grid.utility_steps(np.array([0.0, 0.5, 1.0])), [0, 1, 2])
