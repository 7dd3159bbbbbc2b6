"""MSD and disagreement against scipy's principal angles and the Euclidean variance; dB conversion."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import subspace_angles

from icml25.manifold_diffusion import Euclidean, Grassmann, disagreement, msd, to_db


def test_msd_is_the_mean_squared_principal_angle_distance() -> None:
    rng = np.random.default_rng(0)
    g = Grassmann(8, 3)
    pts, target = g.random_point(rng, size=6), g.random_point(rng)
    expected = np.mean([np.sum(subspace_angles(p, target) ** 2) for p in pts])
    assert msd(g, pts, target) == pytest.approx(expected, rel=1e-9)
    assert msd(g, np.repeat(target[None], 4, 0), target) == pytest.approx(0.0, abs=1e-20)


def test_disagreement_on_a_flat_manifold_is_the_variance_around_the_mean() -> None:
    rng = np.random.default_rng(1)
    e = Euclidean(3)
    pts = rng.normal(size=(7, 3))
    expected = np.mean(np.sum((pts - pts.mean(0)) ** 2, axis=1))
    assert disagreement(e, pts) == pytest.approx(expected, rel=1e-9)


def test_disagreement_of_a_grassmann_network_is_at_most_its_msd_to_any_point() -> None:
    rng = np.random.default_rng(2)
    g = Grassmann(6, 2)
    base = g.random_point(rng)
    pts = g.exp(np.repeat(base[None], 5, 0), 0.2 * g.proj(np.repeat(base[None], 5, 0), rng.normal(size=(5, 6, 2))))
    assert disagreement(g, pts) <= msd(g, pts, base) + 1e-12  # the Fréchet mean minimises the mean squared distance


def test_to_db() -> None:
    assert np.allclose(to_db(np.array([1.0, 10.0, 0.01])), [0.0, 10.0, -20.0])
