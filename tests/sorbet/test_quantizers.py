"""Binary weights and LSQ quantisers against their formulas; power-of-two rounding against brute force."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from icml25.sorbet import BinaryEmbedding, BinaryLinear, LSQQuantizer, pow2_round  # noqa: E402


def test_pow2_round_brute_force():
    for v in [0.3, 0.37, 0.75, 1.0, 1.41, 1.42, 3.0, -5.5, 1000.0]:
        cands = [2.0 ** k for k in range(-10, 11)]
        best = min(cands, key=lambda c: abs(math.log2(c) - math.log2(abs(v))))
        assert float(pow2_round(torch.tensor(v))) == math.copysign(best, v)
    assert float(pow2_round(torch.tensor(0.0))) == 0.0


def test_binary_linear_formula_and_ste():
    torch.manual_seed(0)
    layer = BinaryLinear(6, 3)
    x = torch.randn(4, 6)
    w = layer.weight.detach()
    wb = w.abs().mean() * torch.sign(w - w.mean())
    assert torch.allclose(layer(x), x @ wb.T + layer.bias, atol=1e-6)
    g = torch.randn(4, 3)
    layer(x).backward(g)
    assert torch.allclose(layer.weight.grad, g.T @ x, atol=1e-5)  # straight-through: identity to W


def test_binary_embedding_rows():
    emb = BinaryEmbedding(5, 4)
    e = emb.weight.detach()[2]
    assert torch.allclose(emb(torch.tensor([2]))[0], e.abs().mean() * torch.sign(e - e.mean()))


def test_lsq_codes_and_pow2_step():
    q = LSQQuantizer(4, signed=True)
    x = torch.randn(1000, generator=torch.Generator().manual_seed(0))
    y = q(x)
    a = float(q.step())
    assert a == 2.0 ** round(math.log2(a))
    expect = torch.clamp(torch.round(x / a), -8, 7) * a
    assert torch.equal(y, expect)
    # init: 2 mean|x| / sqrt(7) rounded to a power of two
    assert a == float(pow2_round(2 * x.abs().mean() / math.sqrt(7)))
    codes, step, off = q.codes(x)
    assert torch.equal(codes * step + off, y)


def test_lsq_gradients():
    q = LSQQuantizer(4, signed=True, pow2_step=False)
    q(torch.ones(4))  # initialise
    with torch.no_grad():
        q.alpha.fill_(0.5)
    x = torch.tensor([0.3, -0.8, 10.0, -10.0], requires_grad=True)
    q(x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 0.0, 0.0]
    u = x.detach() / 0.5
    inside = (torch.round(u[:2]) - u[:2]).sum()
    expect = (inside + 7 - 8) / math.sqrt(4 * 7)
    assert float(q.alpha.grad) == pytest.approx(float(expect), rel=1e-5)


def test_unsigned_offset_frozen_at_inference():
    torch.manual_seed(0)
    q = LSQQuantizer(4, signed=False)
    for _ in range(5):
        q(torch.randn(8, 6) - 1.0)
    q.eval()
    x = torch.randn(8, 6) - 1.0
    full = q(x)
    single = torch.cat([q(x[i:i + 1]) for i in range(8)])
    assert torch.equal(full, single)  # batch-1 and batch-N agree


def test_binary_scale_gradient_is_the_exact_derivative_of_the_scale():
    import torch

    from icml25.sorbet import BinaryLinear

    torch.manual_seed(5)
    x, g = torch.randn(6, 5, dtype=torch.float64), torch.randn(6, 3, dtype=torch.float64)
    grads = {}
    for flag in (False, True):
        torch.manual_seed(6)
        lay = BinaryLinear(5, 3, bias=False, scale_grad=flag).double()
        y = lay(x)
        (y * g).sum().backward()
        grads[flag] = lay.weight.grad.clone()
    W = lay.weight.detach()
    S = torch.sign(W - W.mean())
    ident = g.T @ x                                           # straight-through part: identity to W
    dm = (g * (x @ S.T)).sum()                                # dL/dm with m = mean|W|
    assert torch.allclose(grads[False], ident)
    assert torch.allclose(grads[True], ident + torch.sign(W) / W.numel() * dm)


def test_init_step_fixes_the_first_step_and_unit_attention_steps_do_not_clip(tiny):
    import torch

    from icml25.sorbet import LSQQuantizer, convert

    q = LSQQuantizer(4, signed=False, init_step=1 / 16).train()
    p = torch.tensor([[1.0, 0.5, 0.25, 0.0] + [0.0] * 60])      # a long, peaked row: mean p tiny
    assert float(q(p)[0, 0]) == 15 / 16 and float(q.step()) == 1 / 16
    lsq = LSQQuantizer(4, signed=False).train()
    assert float(lsq(p)[0, 0]) < 0.5                           # the first-batch rule clips the peak
    m = convert(tiny.hf(), "w1a4", attn_prob_step="unit", bspn_warmup=1).train()
    b = tiny.batch()
    m(b["input_ids"], b["attention_mask"], b["token_type_ids"])
    assert all(float(lay.p_quant.step()) == 1 / 16 for lay in m.layers)
