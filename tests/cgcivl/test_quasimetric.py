"""MRN/IQE: quasimetric axioms on random triples, IQE's union length against brute-force interval merging."""

import numpy as np
import pytest
import torch

from icml25.cgcivl import IQE, MRN, QuasimetricValue, interval_union_length


def _union_brute(lo, hi):
    """Merge intervals in plain Python (independent of the sort/cummax formulation)."""
    iv = sorted(zip(lo, hi))
    total, cur_lo, cur_hi = 0.0, None, None
    for a, b in iv:
        if cur_hi is None or a > cur_hi:
            if cur_hi is not None:
                total += cur_hi - cur_lo
            cur_lo, cur_hi = a, b
        else:
            cur_hi = max(cur_hi, b)
    return total + (cur_hi - cur_lo)


def test_union_length_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(200):
        lo = rng.normal(size=6)
        hi = lo + np.abs(rng.normal(size=6)) * (rng.random(6) < 0.7)
        got = float(interval_union_length(torch.tensor(lo)[None], torch.tensor(hi)[None])[0])
        assert got == pytest.approx(_union_brute(lo, hi), abs=1e-12)


@pytest.mark.parametrize("head", [MRN(16), IQE(4, 4)])
def test_quasimetric_axioms(head):
    g = torch.Generator().manual_seed(0)
    x, y, z = (torch.randn(1000, 16, generator=g, dtype=torch.float64) for _ in range(3))
    with torch.no_grad():
        dxy, dyz, dxz, dyx = head(x, y), head(y, z), head(x, z), head(y, x)
        assert torch.equal(head(x, x), torch.zeros(1000, dtype=torch.float64))
    assert (dxy >= 0).all()
    assert (dxz <= dxy + dyz + 1e-9).all()
    assert ((dxy - dyx).abs() > 1e-6).float().mean() > 0.5  # asymmetric


def test_mrn_closed_form_and_gradient_at_zero():
    x = torch.tensor([[1.0, 2.0, 0.5, -1.0]], requires_grad=True)
    y = torch.tensor([[4.0, 6.0, 0.0, 3.0]])
    assert float(MRN(4)(x, y)) == pytest.approx(5.0 + 0.5)
    d = MRN(4)(x, x.detach())
    d.sum().backward()
    assert torch.isfinite(x.grad).all()


def test_iqe_mixes_mean_and_max():
    head = IQE(2, 1)
    x, y = torch.tensor([0.0, 0.0]), torch.tensor([1.0, 3.0])
    with torch.no_grad():
        head.alpha.fill_(0.0)  # a = 1/2
    assert float(head(x, y)) == pytest.approx(0.5 * 2.0 + 0.5 * 3.0)


def test_value_head_is_non_positive_and_zero_on_diagonal():
    torch.manual_seed(0)
    for kind in ("mrn", "iqe"):
        v = QuasimetricValue(2, (16,), head=kind, latent=16)
        s, g = torch.randn(50, 2), torch.randn(50, 2)
        with torch.no_grad():
            assert (v(s, g) <= 0).all() and torch.equal(v(s, s), torch.zeros(50))
