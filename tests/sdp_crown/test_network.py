"""BoundedNet conversion (conv/pad/normalisation as exact dense maps), shipped models, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from icml25.sdp_crown import (
    BoundedNet,
    Normalize,
    compute_bounds,
    load_images,
    load_model,
    sampled_min_margin,
    verified_accuracy,
    verify,
)


def _conv_model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(Normalize([0.5, 0.4], [0.2, 0.3]), nn.ZeroPad2d((1, 0, 0, 1)), nn.Conv2d(2, 3, 3, 2, 1),
                         nn.ReLU(), nn.Conv2d(3, 4, 2, 1, 0), nn.ReLU(), nn.Flatten(), nn.Linear(36, 5)).double()


def test_dense_conversion_matches_module_forward() -> None:
    model = _conv_model()
    net = BoundedNet(model, (2, 7, 7))
    x = torch.rand(6, 2, 7, 7, dtype=torch.float64)
    torch.testing.assert_close(net(x), model(x), rtol=1e-12, atol=1e-12)
    assert net.widths == [98, 48, 36, 5]


def test_conv_dense_matrix_equals_unfold_construction() -> None:
    # the conv layer's dense matrix rebuilt independently with im2col (F.unfold)
    torch.manual_seed(1)
    conv = nn.Conv2d(2, 3, 3, 2, 1).double()
    net = BoundedNet(nn.Sequential(conv, nn.ReLU(), nn.Flatten(), nn.Linear(48, 2).double()), (2, 8, 8))
    eye = torch.eye(128, dtype=torch.float64).view(128, 2, 8, 8)
    cols = torch.nn.functional.unfold(eye, 3, padding=1, stride=2)  # [128, 18, 16]
    dense = torch.einsum("of,bfp->opb", conv.weight.view(3, -1), cols).reshape(48, 128)
    torch.testing.assert_close(net.weights[0], dense)


def test_conv_net_bounds_are_sound() -> None:
    model = _conv_model()
    net = BoundedNet(model, (2, 7, 7))
    x = torch.rand(2, 2, 7, 7, dtype=torch.float64)
    y = net(x).argmax(1)
    samp = sampled_min_margin(net, x, 0.3, y, n=20_000)
    for m in ("crown", "alpha-crown", "sdp-crown", "sdp-crown-hybrid"):
        assert (compute_bounds(net, x, 0.3, y, method=m, iters=10)[0] <= samp + 1e-9).all()


@pytest.mark.parametrize(("name", "correct"), [("mnist_mlp", 158), ("mnist_convsmall", 175), ("cifar10_cnn_a", 124),
                                             ("cifar10_cnn_c", 102), ("cifar10_convsmall", 121),
                                             ("cifar10_convdeep", 106)])
def test_shipped_models_clean_accuracy_matches_table_2(name: str, correct: int) -> None:
    """Table 2 of the paper on its 200 images (79, 87.5, 62, 51, 60.5, 53 %), as exact counts."""
    from icml25.sdp_crown.models import MODEL_INFO

    dataset, shape, _ = MODEL_INFO[name]
    X, y = load_images(dataset, 200)
    assert X.shape[1:] == shape
    model = load_model(name).double()
    with torch.no_grad():
        assert int((model(X).argmax(1) == y).sum()) == correct


def test_verify_counts_misclassified_as_not_verified() -> None:
    net = BoundedNet(load_model("mnist_mlp"), (1, 28, 28))
    X, y = load_images("mnist", 4)
    wrong = (y + 1) % 10
    out = verify(net, X, wrong, 0.0, method="crown")
    assert not out["verified"][~out["clean_correct"]].any()
    right = verify(net, X, y, 0.0, method="crown")
    # at radius 0 every correctly classified image is verified (margins equal the logit gaps)
    assert torch.equal(right["verified"], right["clean_correct"])
    assert verified_accuracy(net, X, y, 0.0, method="lipnaive") == right["clean_correct"].double().mean().item()


@pytest.mark.parametrize("kwargs,msg", [
    ({"eps": -0.1}, "eps must be"),
    ({"x": torch.zeros(2, 5)}, "x must have shape"),
    ({"method": "beta-crown"}, "method must be one of"),
    ({"C": torch.tensor([0, 7])}, "labels must lie in"),
    ({"lambda_mode": "closed"}, "lambda_mode"),
])
def test_bad_inputs_raise_clear_errors(kwargs, msg) -> None:
    net = BoundedNet([(np.eye(3), np.zeros(3)), (np.ones((3, 3)), np.zeros(3))], (3,))
    args = {"x": torch.zeros(2, 3), "eps": 0.1, "C": torch.tensor([0, 1]), "method": "crown"}
    args.update(kwargs)
    with pytest.raises(ValueError, match=msg):
        compute_bounds(net, args.pop("x"), args.pop("eps"), args.pop("C"), **args)


def test_unsupported_layer_and_nan_weights() -> None:
    with pytest.raises(TypeError, match=r"MaxPool2d.*supported layers: Linear, Conv2d"):
        BoundedNet(nn.Sequential(nn.Conv2d(1, 2, 3), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(2, 2)), (1, 4, 4))
    lin = nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight[0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        BoundedNet(nn.Sequential(lin), (3,))
    with pytest.raises(ValueError, match="must end with an affine layer"):
        BoundedNet(nn.Sequential(nn.Linear(3, 2), nn.ReLU()), (3,))
    with pytest.raises(TypeError, match="model must be"):
        BoundedNet("mlp", (3,))
