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
    norm = BSPN(4, groups=1, warmup_iters=100, alpha_bkw=0.9, ste=True, projected_shift=False)  # shift = const
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


def _shift_surrogate(h: torch.Tensor, groups: int, c: torch.Tensor) -> torch.Tensor:
    """The function whose gradient the projected shift uses: h * c / (mean|h| + 1e-5), c held fixed."""
    hg = h.reshape(*h.shape[:-1], groups, h.shape[-1] // groups)
    return (hg * c / (hg.abs().mean(-1, keepdim=True) + 1e-5)).reshape(h.shape)


def test_projected_shift_gradient_matches_finite_differences_and_closed_form():
    torch.manual_seed(3)
    G, n = 3, 4
    h = (torch.randn(2, 5, G * n, dtype=torch.float64) * 3).requires_grad_(True)
    g = torch.randn(2, 5, G * n, dtype=torch.float64)
    y = group_shift(h, G, projected=True)
    assert torch.equal(y.detach(), group_shift(h.detach(), G))           # forward value unchanged, bit for bit
    (grad,) = torch.autograd.grad((y * g).sum(), h)
    hg = h.detach().reshape(2, 5, G, n)
    mu = hg.abs().mean(-1, keepdim=True)
    s = torch.exp2(torch.ceil(torch.log2(mu + 1e-5)))
    c = (mu + 1e-5) / s
    # central finite differences of the surrogate (independent of autograd)
    fd = torch.zeros_like(grad)
    flat_h, flat_fd = h.detach().reshape(-1), fd.view(-1)
    for i in range(flat_h.numel()):
        e = torch.zeros_like(flat_h)
        e[i] = 1e-6
        up = (_shift_surrogate((flat_h + e).view_as(h), G, c) * g).sum()
        dn = (_shift_surrogate((flat_h - e).view_as(h), G, c) * g).sum()
        flat_fd[i] = (up - dn) / 2e-6
    assert torch.allclose(grad, fd, atol=1e-6, rtol=1e-5)
    # closed form: (g - sign(h) <g, h> / (n (mu + eps))) / s, per group
    gg = g.reshape(2, 5, G, n)
    closed = (gg - torch.sign(hg) * (gg * hg).sum(-1, keepdim=True) / (n * (mu + 1e-5))) / s
    assert torch.allclose(grad, closed.reshape_as(grad), atol=1e-12)
    # a projection: the gradient has (almost) no component along each group's own direction
    assert float(((grad.reshape(2, 5, G, n) * hg).sum(-1)).abs().max()) < 1e-4 * float(g.abs().max())


def test_constant_shift_gradient_is_g_over_s_and_bspn_flag_reaches_the_shift():
    torch.manual_seed(4)
    h = (torch.randn(3, 8, dtype=torch.float64) * 5).requires_grad_(True)
    g = torch.randn(3, 8, dtype=torch.float64)
    (grad,) = torch.autograd.grad((group_shift(h, 2) * g).sum(), h)
    mu = h.detach().reshape(3, 2, 4).abs().mean(-1, keepdim=True)
    s = torch.exp2(torch.ceil(torch.log2(mu + 1e-5)))
    assert torch.allclose(grad, (g.reshape(3, 2, 4) / s).reshape(3, 8))
    x = torch.randn(2, 3, 8) * 4
    grads = []
    for proj in (False, True):
        norm = BSPN(8, groups=2, warmup_iters=5, projected_shift=proj)
        xi = x.clone().requires_grad_(True)
        y = norm(xi)
        (y * torch.arange(8.0)).sum().backward()
        grads.append(xi.grad)
    assert torch.equal(BSPN(8, 2, warmup_iters=5)(x), BSPN(8, 2, warmup_iters=5, projected_shift=True)(x))
    assert not torch.allclose(grads[0], grads[1])
