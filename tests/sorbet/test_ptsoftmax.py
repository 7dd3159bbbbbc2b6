"""PTsoftmax against its definition (spec §2 steps 1-4) on hand-made inputs and a brute-force reference."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from icml25.sorbet import LSQQuantizer, PTSoftmax, nearest_pow2, pt_softmax  # noqa: E402


def _reference(row: list[float]) -> list[float]:
    """Plain-Python PTsoftmax of one row, written from the spec's steps."""
    s = [math.ceil(x) for x in row]
    m = max(s)
    a = [2.0 ** (x - m) for x in s]
    z = sum(a)
    lo = 2.0 ** math.floor(math.log2(z))
    z_hat = lo if z - lo < 2 * lo - z else 2 * lo
    return [x / z_hat for x in a]


def test_hand_made_rows():
    # ceil -> [1, 0, 0], a = [1, .5, .5], Z = 2 -> Z^ = 2
    assert pt_softmax(torch.tensor([0.2, -0.7, -0.1])).tolist() == [0.5, 0.25, 0.25]
    # a = [1, 1, 1], Z = 3: |3-2| = 1 == |4-3| = 1 -> tie goes up -> 4
    assert pt_softmax(torch.tensor([1.0, 1.0, 1.0])).tolist() == [0.25, 0.25, 0.25]
    # a = [1, .25], Z = 1.25 -> 1 (not 2)
    assert pt_softmax(torch.tensor([3.0, 1.0])).tolist() == [1.0, 0.25]


def test_matches_reference_on_random_rows():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 7, generator=g) * 3
    got = pt_softmax(x)
    for r in range(200):
        assert got[r].tolist() == pytest.approx(_reference(x[r].tolist()), abs=0)


def test_row_sums_and_powers_of_two():
    x = torch.randn(500, 11, generator=torch.Generator().manual_seed(1)) * 4
    p = pt_softmax(x)
    sums = p.sum(-1)
    assert bool((sums >= 0.75).all()) and bool((sums < 1.5).all())
    assert bool((p > 0).all())
    assert torch.equal(torch.exp2(torch.round(torch.log2(p))), p)


def test_equals_base2_softmax_when_exact():
    # integer scores whose 2^s sum to a power of two: PTsoftmax == base-2 softmax exactly
    s = torch.tensor([2.0, 1.0, 0.0, 0.0])  # 4 + 2 + 1 + 1 = 8
    base2 = torch.softmax(s * math.log(2), -1)
    assert torch.allclose(pt_softmax(s), base2, atol=1e-7)


def test_masked_positions_and_single_token():
    s = torch.tensor([[0.3, -10000.0, -10000.0], [5.0, 2.0, -10000.0]])
    p = PTSoftmax()(s)
    assert p[0].tolist() == [1.0, 0.0, 0.0]
    assert p[1, 2].item() == 0.0
    q = LSQQuantizer(4, signed=False).eval()
    q(p)  # initialise the step
    assert q(p)[0, 1:].tolist() == [0.0, 0.0] and q(p)[1, 2].item() == 0.0


def test_nearest_pow2_is_not_log_rounding():
    z = torch.tensor([1.45, 1.5, 2.9, 3.0, 5.9, 6.0, 7.0])
    assert nearest_pow2(z).tolist() == [1.0, 2.0, 2.0, 4.0, 4.0, 8.0, 8.0]
    # brute force over a grid
    for v in torch.linspace(1.01, 100, 300):
        cands = [2.0 ** k for k in range(0, 8)]
        best = min(cands, key=lambda c: (abs(c - float(v)), -c))
        assert float(nearest_pow2(v)) == best


def test_ste_gradient_flows_and_released_flag_blocks_it():
    s = torch.randn(3, 5, requires_grad=True)
    w = torch.randn(3, 5)
    (pt_softmax(s) * w).sum().backward()
    assert s.grad.abs().sum() > 0
    # the STE backward is that of the base-2 softmax with the normaliser treated straight-through
    s2 = s.detach().clone().requires_grad_(True)
    (torch.softmax(s2 * math.log(2), -1) * w).sum().backward()
    assert torch.corrcoef(torch.stack([s.grad.flatten(), s2.grad.flatten()]))[0, 1] > 0.5
    s3 = s.detach().clone().requires_grad_(True)
    (pt_softmax(s3, ste_grad=False) * w).sum().backward()  # ceil has a zero derivative
    assert s3.grad is None or float(s3.grad.abs().sum()) == 0.0
