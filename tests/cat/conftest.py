"""Shared fixtures of the cat tests: one thread, tiny untrained models."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture
def tiny_vae():
    from icml25.cat import TinyVAE

    torch.manual_seed(0)
    return TinyVAE(width=8)


@pytest.fixture
def tiny_ldm():
    from icml25.cat import LatentDenoiser, NoiseSchedule

    torch.manual_seed(0)
    return LatentDenoiser((2, 4, 4), n_classes=12, hidden=32), NoiseSchedule(50)


@pytest.fixture
def images():
    g = torch.Generator().manual_seed(0)
    return torch.rand(4, 1, 16, 16, generator=g)
