"""BSPN against its definition (spec §2): group shift, power normalisation, pow2 gains, fold, approximate backward."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from icml25.sorbet import BSPN, group_shift, pow2_round  # noqa: E402


def _p2(x: float) -> float:
    return 0.0 if x == 0 else math.copysign(2.0 ** round(math.log2(abs(x))), x)


def test_group_shift_by_hand():
    h = torch.tensor([[3.0, -0.6, 0.2, 0.2, 40.0, 20.0, 1.0, 1.0]])
    # groups of 2: mu1 = 1.8 -> 2^1; 0.2 -> 2^-2; 30 -> 2^5; exactly 1 -> 2^ceil(log2(1 + 1e-5)) = 2
    expect = [1.5, -0.3, 0.8, 0.8, 1.25, 0.625, 0.5, 0.5]
    assert group_shift(h, 4)[0].tolist() == pytest.approx(expect, rel=1e-6)


def test_eval_matches_definition_by_hand():
    norm = BSPN(4, groups=2).eval()
    with torch.no_grad():
        norm.weight.copy_(torch.tensor([1.0, 3.0, -0.7, 0.2]))
        norm.bias.copy_(torch.tensor([0.0, 0.1, -0.2, 0.5]))
        norm.running_phi.copy_(torch.tensor([4.0, 1.0, 0.25, 9.0]))
    h = torch.tensor([[[1.0, 2.0, -3.0, 0.5]]])
    y = norm(h)[0, 0].tolist()
    # group shift: mu1 = 1.5 -> 2, mu1 = 1.75 -> 2
    hs = [0.5, 1.0, -1.5, 0.25]
    k = [_p2(g / math.sqrt(p + 1e-5)) for g, p in zip([1.0, 3.0, -0.7, 0.2], [4.0, 1.0, 0.25, 9.0])]
    expect = [_p2(kk * x + b) for kk, x, b in zip(k, hs, [0.0, 0.1, -0.2, 0.5])]
    assert y == pytest.approx(expect, rel=1e-6)


def test_fold_gives_identical_outputs():
    torch.manual_seed(0)
    norm = BSPN(16, groups=4, warmup_iters=2)
    for _ in range(5):
        norm(torch.randn(3, 7, 16) * 3)
    norm.eval()
    x = torch.randn(4, 5, 16) * 2
    before = norm(x)
    norm.fold()
    assert torch.equal(norm(x), before)
    assert torch.equal(norm.k_hat.abs(), pow2_round(norm.k_hat).abs())
    with pytest.raises(ValueError, match="folded"):
        norm.train()(x)


def test_running_statistic_update_and_pad_mask():
    norm = BSPN(2, groups=1, warmup_iters=10, alpha_fwd=0.9)
    h = torch.tensor([[[0.9, 0.9], [0.9, -0.9], [50.0, -50.0]]])  # third token is padding, huge values
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    norm(h, mask)
    # group shift of the real tokens: mu1 = 0.9 -> 2^0 -> unchanged; psi2 = 0.81 per channel
    # warm-up iteration 1: phi = 1*0/1 + 0.81/1, then EMA 0.9*0.81 + 0.1*0.81 = 0.81
    assert norm.running_phi.tolist() == pytest.approx([0.81, 0.81])
    released = BSPN(2, groups=1, warmup_iters=10, pad_mask=False)
    released(h, mask)
    assert abs(float(released.running_phi[0]) - 0.81) > 0.05  # padding enters the released statistic


def test_outputs_are_powers_of_two_and_ste_gradients():
    torch.manual_seed(1)
    norm = BSPN(8, groups=2, warmup_iters=1)
    x = torch.randn(2, 3, 8, requires_grad=True)
    for _ in range(3):  # past warm-up: the forward value is the inference function
        y = norm(x)
        assert torch.equal(y.abs(), pow2_round(y).abs())
    y.sum().backward()
    assert x.grad.abs().sum() > 0 and norm.weight.grad is not None
    frozen = BSPN(8, groups=2, ste=False)
    x2 = torch.randn(2, 3, 8, requires_grad=True)
    assert not frozen(x2).requires_grad


def test_approximate_backward_formula():
    torch.manual_seed(2)
    norm = BSPN(4, groups=1, warmup_iters=100, alpha_bkw=0.9, ste=True)
    with torch.no_grad():
        norm.ema_gz.copy_(torch.tensor([0.5, -0.2, 0.1, 0.0]))
    x = (torch.rand(1, 6, 4) + 0.5).requires_grad_(True)  # mu1 in [0.5, 1.5)
    hs = group_shift(x.detach(), 1)
    psi2 = (hs ** 2).mean(dim=(0, 1))
    y = norm(x)
    g = torch.randn_like(y)
    y.backward(g)
    z = hs / torch.sqrt(psi2 + 1e-5)
    approx = g * 1.0 - 0.1 * torch.tensor([0.5, -0.2, 0.1, 0.0]) * z  # gamma = 1 -> pow2 gain 1
    shift = torch.exp2(torch.ceil(torch.log2(x.detach().abs().mean(-1, keepdim=True) + 1e-5)))
    expect = approx / torch.sqrt(psi2 + 1e-5) / shift
    assert torch.allclose(x.grad, expect, atol=1e-5)
