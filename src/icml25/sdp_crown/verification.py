"""Verification front end: certified margins by any method, verified flags, verified accuracy, LipNaive.

An input counts as verified iff it is correctly classified and every certified margin lower bound
``f_y(x') − f_j(x')`` over the ball is positive (Section 2; misclassified inputs are never verified).
"""

from __future__ import annotations

from typing import Any

import torch

from icml25.core.validation import check_option

from .network import BoundedNet
from .propagation import METHODS, _check_eps, compute_bounds, spec_matrix

__all__ = ["lipnaive_bounds", "verify", "verified_accuracy", "as_bounded"]


def as_bounded(model: Any, input_shape: Any = None) -> BoundedNet:
    """Return ``model`` as a :class:`BoundedNet` (wrapping an ``nn.Sequential`` needs ``input_shape``)."""
    if isinstance(model, BoundedNet):
        return model
    if input_shape is None:
        raise ValueError("input_shape is required when model is not a BoundedNet")
    if not isinstance(input_shape, (tuple, list)):
        raise TypeError(f"input_shape must be a tuple of ints, got {input_shape!r}")
    return BoundedNet(model, input_shape)


def lipnaive_bounds(net: BoundedNet, x: Any, eps: Any, C: Any) -> torch.Tensor:
    """LipNaive margins ``cᵀf(x̂) − ρ ‖cᵀW⁽ᴺ⁾‖₂ Π_{k<N} ‖W⁽ᵏ⁾‖₂`` (Table 1 baseline); shape ``[B, m]``."""
    from .propagation import _check_spec

    if not isinstance(net, BoundedNet):
        raise TypeError(f"net must be a BoundedNet, got {type(net).__name__}")
    x = net.flatten_input(x)
    B = x.shape[0]
    e = _check_eps(eps, B).to(x.device)
    Cm = _check_spec(C, B, net.n_classes).to(x.device)
    lip = 1.0
    for s in net.spectral_norms()[:-1]:
        lip *= s
    with torch.no_grad():
        centre = (Cm @ net.forward(x).unsqueeze(-1)).squeeze(-1)
        row = net.blocks[-1].transpose(Cm).norm(dim=-1)
    return centre - e.unsqueeze(1) * row * lip


def verify(model: Any, X: Any, y: Any, eps: Any, method: str = "sdp-crown", input_shape: Any = None,
           **kw: Any) -> dict[str, torch.Tensor]:
    """Certify ``argmax f(x') = y`` on ``‖x' − x‖₂ ≤ eps`` for every input.

    Parameters
    ----------
    model : BoundedNet or nn.Sequential
        The classifier (``input_shape`` needed for a Sequential).
    X : array-like [B, ...]
        Inputs.
    y : array-like of int [B]
        True labels.
    eps : float or [B]
        ℓ2 radii.
    method : {'crown', 'alpha-crown', 'sdp-crown', 'sdp-crown-hybrid', 'lipnaive'}
    **kw
        Passed to :func:`compute_bounds` (``iters``, ``lambda_mode``, ...).

    Returns
    -------
    dict
        ``verified`` bool [B], ``margins`` float64 [B, q−1] (certified lower bounds), ``clean_correct`` bool [B].
    """
    from .propagation import _check_labels

    check_option(method, "method", METHODS + ("lipnaive",))
    net = as_bounded(model, input_shape)
    x = net.flatten_input(X, "X")
    labels = _check_labels(y, "y")
    if labels.numel() != x.shape[0]:
        raise ValueError(f"y must have one label per input ({x.shape[0]}), got {labels.numel()}")
    if labels.min() < 0 or labels.max() >= net.n_classes:
        raise ValueError(f"y must hold labels in [0, {net.n_classes - 1}], got range [{int(labels.min())}, "
                         f"{int(labels.max())}]")
    C = spec_matrix(labels, net.n_classes).to(x.device)
    labels = labels.to(x.device)
    with torch.no_grad():
        correct = net.forward(x).argmax(1) == labels
    if method == "lipnaive":
        margins = lipnaive_bounds(net, x, eps, C)
    elif method in METHODS:
        margins, _ = compute_bounds(net, x, eps, C, method=method, **kw)
    else:
        raise ValueError(f"method must be one of {METHODS + ('lipnaive',)}, got {method!r}")
    verified = correct & (margins.min(dim=1).values > 0)
    return {"verified": verified, "margins": margins, "clean_correct": correct}


def verified_accuracy(model: Any, X: Any, y: Any, eps: Any, method: str = "sdp-crown", **kw: Any) -> float:
    """Fraction of inputs verified by :func:`verify` (misclassified inputs count as failures)."""
    return float(verify(model, X, y, eps, method=method, **kw)["verified"].double().mean())
