"""Bad-input registry of :mod:`icml25.sdp_crown` for the fuzz contract (tests/core/test_bad_input.py)."""

from __future__ import annotations

from typing import Any

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase


def _net() -> Any:
    import torch

    from icml25.sdp_crown import BoundedNet

    torch.manual_seed(0)
    seq = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3))
    return BoundedNet(seq, (3,))


def _x() -> Any:
    import torch

    return torch.tensor([[0.1, 0.2, 0.3], [0.3, -0.1, 0.2]], dtype=torch.float64)


def _labels() -> Any:
    import torch

    return torch.tensor([0, 2])


def _cg() -> dict[str, Any]:
    import torch

    g = torch.Generator().manual_seed(0)
    return {"c": torch.randn(2, 3, 4, generator=g, dtype=torch.float64),
            "g": torch.randn(2, 3, 4, generator=g, dtype=torch.float64),
            "radius": torch.tensor([0.5, 1.0], dtype=torch.float64)}


def _centre() -> Any:
    import torch

    return torch.tensor([[0.1, -0.2, 0.3, 0.0], [0.5, 0.1, -0.4, 0.2]], dtype=torch.float64)


def _bounds_args() -> dict[str, Any]:
    return {"x": _x(), "eps": 0.1, "C": _labels()}


def _sequential() -> Any:
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3))


CASES = [
    BadInputCase("BoundedNet", lambda: {"model": _sequential(), "input_shape": (3,)}),
    BadInputCase("BoundedNet.forward", lambda: {"x": _x()}, {"x": ARRAY}, obj=_net),
    BadInputCase("BoundedNet.flatten_input", lambda: {"x": _x()}, {"x": ARRAY}, obj=_net),
    BadInputCase("BoundedNet.pre_activations", lambda: {"x": _x()}, {"x": ARRAY}, obj=_net),
    BadInputCase("BoundedNet.bounds", lambda: {**_bounds_args(), "method": "crown"},
                 {"x": ARRAY, "eps": REAL, "C": ARRAY, "method": TEXT}, obj=_net),
    BadInputCase("BoundedNet.spectral_norms", lambda: {}, obj=_net),
    BadInputCase("Normalize", lambda: {"mean": [0.1, 0.2], "std": [0.3, 0.4]}, {"mean": ARRAY, "std": ARRAY}),
    BadInputCase("Normalize.forward", lambda: {"x": __import__("torch").ones(2, 2, 3, 3)}, {"x": ARRAY},
                 obj=lambda: __import__("icml25.sdp_crown", fromlist=["Normalize"]).Normalize([0.1, 0.2],
                                                                                              [0.3, 0.4])),
    BadInputCase("compute_bounds", lambda: {"net": _net(), **_bounds_args(), "method": "alpha-crown", "iters": 2,
                                            "lr_alpha": 0.5, "lr_lambda": 0.05},
                 {"x": ARRAY, "eps": REAL, "C": ARRAY, "method": TEXT, "lr_alpha": POSITIVE,
                  "lr_lambda": POSITIVE}),
    BadInputCase("spec_matrix", lambda: {"labels": _labels(), "n_classes": 3}, {"labels": ARRAY, "n_classes": SIZE}),
    BadInputCase("relu_relaxation", lambda: {"lower": -_centre().abs() - 0.1, "upper": _centre().abs() + 0.1},
                 {"lower": ARRAY, "upper": ARRAY}),
    BadInputCase("crown_offset", lambda: {"c": _cg()["c"], "upper_icpt": _centre().abs().unsqueeze(1)},
                 {"c": ARRAY, "upper_icpt": ARRAY}),
    BadInputCase("sdp_offset", lambda: {**_cg(), "centre": _centre(), "lam": __import__("torch").ones(2, 3)},
                 {"c": ARRAY, "g": ARRAY, "centre": ARRAY, "radius": ARRAY, "lam": ARRAY}),
    BadInputCase("best_lambda", lambda: {**_cg(), "centre": _centre(), "lo": 1e-3, "hi": 1e3, "steps": 10},
                 {"c": ARRAY, "g": ARRAY, "centre": ARRAY, "radius": ARRAY, "lo": POSITIVE, "hi": POSITIVE,
                  "steps": SIZE}),
    BadInputCase("sdp_offset_zero_centre", _cg, {"c": ARRAY, "g": ARRAY, "radius": ARRAY}),
    BadInputCase("verify", lambda: {"model": _net(), "X": _x(), "y": _labels(), "eps": 0.1, "method": "crown"},
                 {"X": ARRAY, "y": ARRAY, "eps": REAL, "method": TEXT}),
    BadInputCase("verified_accuracy", lambda: {"model": _net(), "X": _x(), "y": _labels(), "eps": 0.1,
                                               "method": "lipnaive"},
                 {"X": ARRAY, "y": ARRAY, "eps": REAL, "method": TEXT}),
    BadInputCase("lipnaive_bounds", lambda: {"net": _net(), **_bounds_args()}, {"x": ARRAY, "eps": REAL, "C": ARRAY}),
    BadInputCase("pgd_l2", lambda: {"net": _net(), **_bounds_args(), "steps": 3, "restarts": 1, "step_size": 0.05},
                 {"x": ARRAY, "eps": REAL, "C": ARRAY, "steps": SIZE, "step_size": POSITIVE}),
    BadInputCase("sample_ball", lambda: {"centre": _centre(), "radius": _cg()["radius"], "n": 5,
                                         "generator": __import__("torch").Generator().manual_seed(0),
                                         "surface_fraction": 0.5},
                 {"centre": ARRAY, "radius": ARRAY, "n": SIZE, "surface_fraction": PROB}),
    BadInputCase("sampled_min_margin", lambda: {"net": _net(), **_bounds_args(), "n": 50, "chunk": 20},
                 {"x": ARRAY, "eps": REAL, "C": ARRAY, "n": SIZE, "chunk": SIZE}),
    BadInputCase("load_model", lambda: {"name": "mnist_mlp"}, {"name": TEXT}),
    BadInputCase("load_images", lambda: {"dataset": "mnist", "n": 3}, {"dataset": TEXT, "n": SIZE}),
    BadInputCase("train_digits_mlp", lambda: {"hidden": (4,), "steps": 2, "lip_penalty": 0.05},
                 {"steps": SIZE, "lip_penalty": REAL}),
    BadInputCase("digits_data", lambda: {"seed": 0}),
]
