"""SDP-CROWN: ℓ2 neural-network verification with SDP-tight offsets at bound-propagation cost (Chiu et al., ICML 2025).

Native PyTorch CROWN, α-CROWN and SDP-CROWN (Theorem 4.1 offsets, per-layer/per-spec λ optimised with α) for
feed-forward ReLU networks (Linear, Conv2d, Flatten, ZeroPad2d, normalisation) under ℓ2 input balls, with the
LipNaive baseline, an ℓ2 PGD attack on the same ball, and exact/SDP oracles for tiny networks.

Examples
--------
>>> import torch
>>> from icml25.sdp_crown import BoundedNet
>>> net = BoundedNet([(torch.eye(2), torch.zeros(2))], (2,))
>>> lower, _ = net.bounds(torch.tensor([[1.0, 0.0]]), 0.5, torch.tensor([0]), method="crown")
>>> round(float(lower[0, 0]), 4)  # margin 1 − 0.5·‖e0 − e1‖₂
0.2929
"""

from icml25.core.optional import require

require("torch", extra="torch")

from .attack import pgd_l2, sample_ball, sampled_min_margin  # noqa: E402
from .models import MODELS, digits_data, load_images, load_model, train_digits_mlp  # noqa: E402
from .network import SUPPORTED_LAYERS, BoundedNet, Normalize  # noqa: E402
from .offsets import best_lambda, crown_offset, relu_relaxation, sdp_offset, sdp_offset_zero_centre  # noqa: E402
from .propagation import METHODS, compute_bounds, spec_matrix  # noqa: E402
from .verification import lipnaive_bounds, verified_accuracy, verify  # noqa: E402

__all__ = [
    "BoundedNet", "Normalize", "SUPPORTED_LAYERS", "METHODS", "compute_bounds", "spec_matrix",
    "relu_relaxation", "crown_offset", "sdp_offset", "best_lambda", "sdp_offset_zero_centre",
    "verify", "verified_accuracy", "lipnaive_bounds", "pgd_l2", "sample_ball", "sampled_min_margin",
    "load_model", "load_images", "train_digits_mlp", "digits_data", "MODELS",
]
