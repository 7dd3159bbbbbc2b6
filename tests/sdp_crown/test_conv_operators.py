"""Conv layers as operators (conv2d / conv_transpose2d) against the exact dense-matrix path; devices; CIFAR scaling."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from icml25.sdp_crown import BoundedNet, Normalize, compute_bounds, spec_matrix
from icml25.sdp_crown._affine import AffineBlock


def _net(seed: int) -> nn.Sequential:
    """Normalize, asymmetric zero padding, strided/padded/dilated convs, a 1-channel-group conv, two fc layers."""
    torch.manual_seed(seed)
    return nn.Sequential(Normalize([0.4, 0.5, 0.6], [0.225] * 3), nn.ZeroPad2d((1, 0, 2, 1)),
                         nn.Conv2d(3, 4, 3, 2, 1), nn.ReLU(), nn.Conv2d(4, 4, 3, 1, 2, dilation=2, groups=2), nn.ReLU(),
                         nn.Conv2d(4, 5, 2, 2, 0), nn.ReLU(), nn.Flatten(), nn.Linear(20, 12), nn.ReLU(),
                         nn.Linear(12, 4)).double().eval()


@pytest.mark.parametrize("shape", [(3, 7, 7), (3, 6, 6)])
def test_transpose_is_the_adjoint_and_matches_the_dense_matrix(shape, global_seed) -> None:
    model = _net(global_seed)
    net, dense = BoundedNet(model, shape), BoundedNet(model, shape, dense=True)
    gen = torch.Generator().manual_seed(global_seed)
    for blk, dblk in zip(net.blocks, dense.blocks):
        x = torch.randn(5, blk.n_in, generator=gen, dtype=torch.float64)
        v = torch.randn(5, blk.n_out, generator=gen, dtype=torch.float64)
        # <W x, v> = <x, Wᵀ v> for the operator pair, and both equal the dense matrix's products
        torch.testing.assert_close((blk.linear(x) * v).sum(1), (x * blk.transpose(v)).sum(1), rtol=1e-12, atol=1e-12)
        W = dblk.dense_matrix()
        torch.testing.assert_close(blk.linear(x), x @ W.T, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(blk.transpose(v), v @ W, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(blk.row_norms(), W.norm(dim=1), rtol=1e-12, atol=1e-12)
        assert blk.spectral_norm() == pytest.approx(dblk.spectral_norm(), rel=1e-12)
    x = torch.rand(3, *shape, dtype=torch.float64, generator=gen)
    torch.testing.assert_close(net(x), model(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", ["crown", "alpha-crown", "sdp-crown", "sdp-crown-hybrid"])
def test_operator_bounds_equal_dense_bounds(method, global_seed) -> None:
    """The same bounds (to rounding) from convolutions and from the dense matrices, batched over images, with the
    intermediate passes chunked by pixels (operators) or done at once (dense)."""
    model = _net(global_seed)
    net, dense = BoundedNet(model, (3, 7, 7)), BoundedNet(model, (3, 7, 7), dense=True)
    x = torch.rand(3, 3, 7, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(global_seed))
    y = net(x).argmax(1)
    kw = {"iters": 0 if method == "crown" else 4}
    for ofl in (1, 3):
        a, _ = compute_bounds(net, x, 0.2, y, method=method, optimize_from_layer=ofl, **kw)
        b, _ = compute_bounds(dense, x, 0.2, y, method=method, optimize_from_layer=ofl, **kw)
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-9)


def test_chunked_pass_equals_unchunked(monkeypatch, global_seed) -> None:
    from icml25.sdp_crown import propagation

    model = _net(global_seed)
    net = BoundedNet(model, (3, 7, 7))
    x = torch.rand(2, 3, 7, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(global_seed))
    y = net(x).argmax(1)
    ref, _ = compute_bounds(net, x, 0.2, y, method="sdp-crown", iters=0)
    monkeypatch.setattr(propagation, "_CHUNK_ELEMENTS", 64)  # a handful of rows per chunk
    small, _ = compute_bounds(net, x, 0.2, y, method="sdp-crown", iters=0)
    torch.testing.assert_close(small, ref, rtol=1e-10, atol=1e-10)


def test_normalize_layer_equals_scaled_radius_in_normalised_space(global_seed) -> None:
    """Spec §3: the CIFAR radius ρ in pixels is ρ/0.225 in the normalised input space (same std per channel)."""
    model = _net(global_seed)
    raw = BoundedNet(model, (3, 7, 7))
    norm = BoundedNet(nn.Sequential(*list(model)[1:]), (3, 7, 7))
    x = torch.rand(2, 3, 7, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(global_seed))
    y = raw(x).argmax(1)
    xn = model[0](x)
    for method in ("crown", "sdp-crown"):
        a, _ = compute_bounds(raw, x, 24 / 255, y, method=method, iters=0)
        b, _ = compute_bounds(norm, xn, 24 / 255 / 0.225, y, method=method, iters=0)
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-9)


def test_bounded_net_moves_with_to_device() -> None:
    """BoundedNet is an nn.Module: .to() moves every weight, forward stays on that device (meta: shapes only)."""
    net = BoundedNet(_net(0), (3, 7, 7))
    assert isinstance(net, nn.Module) and net.device.type == "cpu"
    meta = BoundedNet(_net(0), (3, 7, 7)).to("meta")
    assert meta.device.type == "meta" and all(t.device.type == "meta" for t in meta.buffers())
    out = meta(torch.zeros(2, 3, 7, 7, device="meta", dtype=torch.float64))
    assert out.device.type == "meta" and out.shape == (2, 4)
    zs = meta.pre_activations(torch.zeros(2, 147, device="meta"))
    assert [z.shape[1] for z in zs] == meta.widths[1:]
    # CPU -> CPU with a dtype round trip keeps the bounds
    x = torch.rand(2, 3, 7, 7, dtype=torch.float64)
    y = net(x).argmax(1)
    a, _ = compute_bounds(net, x, 0.1, y, method="crown")
    b, _ = compute_bounds(net.to("cpu"), x.tolist(), 0.1, y, method="crown")
    torch.testing.assert_close(a, b)


def test_affine_block_rejects_unsupported_conv() -> None:
    with pytest.raises(TypeError, match="padding"):
        AffineBlock([nn.Conv2d(1, 1, 3, padding="same")], (1, 5, 5))
    with pytest.raises(ValueError, match="Flatten"):
        BoundedNet(nn.Sequential(nn.Conv2d(1, 1, 3), nn.ReLU(), nn.Linear(9, 2)), (1, 5, 5))
    with pytest.raises(TypeError, match="dense"):
        BoundedNet(nn.Sequential(nn.Linear(2, 2)), (2,), dense="yes")


def test_spec_matrix_on_shipped_cifar_model_is_sound_against_pgd() -> None:
    """One image of the shipped CIFAR CNN-C at the paper's radius: every bound below the PGD margin."""
    from icml25.sdp_crown import load_images, load_model, pgd_l2
    from icml25.sdp_crown.models import MODEL_INFO

    _, shape, radius = MODEL_INFO["cifar10_cnn_c"]
    net = BoundedNet(load_model("cifar10_cnn_c"), shape)
    X, y = load_images("cifar", 1)
    C = spec_matrix(y, 10)
    pgd = pgd_l2(net, X, radius, C, steps=10, restarts=0, seed=0)
    for method in ("crown", "sdp-crown"):
        lb, _ = compute_bounds(net, X, radius, C, method=method, iters=1, optimize_from_layer=len(net.blocks) - 1)
        assert (lb <= pgd + 1e-9).all()
