"""The reproduction's code paths: the full config's branches at tiny sizes, config validation, the stub."""

from __future__ import annotations

import dataclasses

import pytest

from icml25.core import Scale
from icml25.testing import requires

pytestmark = requires("torch", "cvxpy", "scipy", "sklearn")


def _tiny_full():
    from icml25.sdp_crown.reproduce import Config

    # every branch the default full config takes (ConvSmall, full-SDP oracle, the ≥ 100-image claims), at tiny sizes
    return dataclasses.replace(Config.full(), n_draws=5, n_points=50, mlp_images=3, mlp_iters=1, pgd_steps=2,
                               pgd_restarts=0, sweep_images=1, sweep_iters=1, sweep_radii=(0.5, 1.0),
                               n_images=2, table1_iters=1, table1_batch=1, tight_images=1, tight_iters=1,
                               tight_hidden=(4, 4), tight_sdp=1)


def _tiny_convnet(shape=(1, 28, 28)):
    """A seeded look-alike of the shipped conv nets (conv, conv, fc, fc) small enough for a unit test."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    c, h, _ = shape
    side = ((h - 4) // 4 + 1 + 1) // 2  # conv 4/4/0 then conv 3/2/1
    return nn.Sequential(nn.Conv2d(c, 2, 4, 4, 0), nn.ReLU(), nn.Conv2d(2, 2, 3, 2, 1), nn.ReLU(), nn.Flatten(),
                         nn.Linear(2 * side * side, 8), nn.ReLU(), nn.Linear(8, 10)).eval()


@pytest.mark.long  # over ~10 s: CI's second phase (make test-long)
def test_full_config_code_path_runs_at_tiny_size(tmp_path, monkeypatch) -> None:
    """Regression for issue 20: the default full run crashed in the ConvSmall branch the quick run never takes.

    The shipped conv nets are swapped for tiny conv nets of the same layer types and input shapes (their real bounds
    are covered by test_conv_operators.py); everything else is the full config's code, at tiny sizes.
    """
    import torch

    from icml25.sdp_crown import models
    from icml25.sdp_crown.reproduce import Config, reproduce

    real = models.load_model
    monkeypatch.setattr(models, "load_model", lambda name, path=None: real(name, path) if name == "mnist_mlp"
                        else _tiny_convnet(models.MODEL_INFO[name][1]))

    full = Config.full()
    assert set(full.table1_models) == {"mnist_convsmall", "cifar10_cnn_a", "cifar10_cnn_c", "cifar10_convsmall",
                                       "cifar10_convdeep"}
    assert full.tight_sdp > 0  # the branches exercised below are those of the full run
    torch.set_num_threads(1)
    rep = reproduce(scale=Scale.FULL, seed=0, out=tmp_path, config=_tiny_full())
    ids = {c.id for c in rep.claims}
    assert {"mlp_sdp_acc", "mlp_alpha_acc", "mlp_sdp_minus_alpha", "sweep_vs_alpha", "tight_sound"} <= ids
    for name in full.table1_models:
        assert {f"{name}_clean", f"{name}_sdp_ge_alpha", f"{name}_sdp_ge_lip", f"{name}_sdp_acc",
                f"{name}_sound"} <= ids
        assert name in rep.tables
    assert len(rep.tables["table1"]) == 6
    assert any(r["sdp_full"] == r["sdp_full"] for r in rep.tables["tightness_instances"])  # the SDP was solved
    # soundness holds at any size
    assert all(c.held for c in rep.claims if c.id in ("mlp_sound", "tight_sound") or c.id.endswith("_sound"))
    # clean accuracy is measured on the 200 images whatever the size: Table 2 exactly (the MLP is the real one)
    assert next(c for c in rep.claims if c.id == "mlp_clean").held


@pytest.mark.parametrize(("field", "value"), [("mlp_images", 0), ("mlp_images", 201), ("n_draws", 2.5),
                                              ("mlp_radius", float("nan")), ("n_images", 201),
                                              ("pgd_steps", -1), ("sweep_radii", (1.0, 0.5)),
                                              ("tight_hidden", ()), ("n_images", "3"),
                                              ("table1_models", ("cifar10_convhuge",)), ("table1_batch", 0),
                                              ("device", "tpu"), ("weights_dir", 3)])
def test_config_rejects_bad_fields(field: str, value) -> None:
    from icml25.sdp_crown.reproduce import Config

    with pytest.raises((ValueError, TypeError), match=field):
        Config(**{field: value})


def test_presets_are_valid() -> None:
    from icml25.sdp_crown.reproduce import Config

    assert Config.quick() != Config.full() != Config.paper()
    paper = Config.paper()
    assert paper.n_images == 200 and paper.mlp_iters == paper.table1_iters == 300 and paper.device == "cuda"
    assert {"mnist_convlarge", "cifar10_cnn_b", "cifar10_convlarge"} <= set(paper.table1_models)


def test_plans_follow_the_config() -> None:
    """The dry run names its preset, and --set changes the estimate."""
    from icml25.sdp_crown.reproduce import Config

    for name in ("quick", "full", "paper"):
        plan = getattr(Config, name)().plan()
        assert plan.scale == name and plan.estimated_seconds > 0
    quick = Config.quick()
    assert dataclasses.replace(quick, mlp_images=20).plan().estimated_seconds > quick.plan().estimated_seconds
    assert Config.paper().plan().needs.gpus == 1 and len(Config.paper().plan().needs.weights) == 3


@pytest.mark.long  # over ~10 s: CI's second phase (make test-long)
def test_paper_scale_code_path_measures_the_abstract_claim(tmp_path, monkeypatch) -> None:
    """At paper scale the ConvLarge claim (the abstract's 65k neurons / 2.47M parameters) is measured, not NaN;
    the models are swapped for tiny nets of the same input shapes (the real ConvLarge weights are the user's)."""
    import torch

    from icml25.sdp_crown import models
    from icml25.sdp_crown.reproduce import reproduce

    real = models.load_model
    monkeypatch.setattr(models, "load_model", lambda name, path=None: real(name, path) if name == "mnist_mlp"
                        else _tiny_convnet(models.MODEL_INFO[name][1]))
    torch.set_num_threads(1)
    cfg = dataclasses.replace(_tiny_full(), table1_models=("cifar10_convlarge",), device="cpu", optimize_all=True)
    rep = reproduce(scale=Scale.PAPER, seed=0, out=tmp_path, config=cfg)
    claim = next(c for c in rep.claims if c.id == "convlarge")
    assert claim.headline and claim.scale == Scale.PAPER and claim.measured == claim.measured
    assert "cifar10_convlarge" in rep.tables


def test_convlarge_architecture_matches_the_abstract() -> None:
    """CIFAR ConvLarge: 2.47 million parameters and 65 thousand neurons (65,536 counting the 3,072 inputs)."""
    import torch
    from torch import nn

    from icml25.sdp_crown.models import _BUILDERS

    seq, _ = _BUILDERS["cifar10_convlarge"]()
    assert round(sum(p.numel() for p in seq.parameters()) / 1e6, 2) == 2.47
    h, relu = torch.zeros(1, 3, 32, 32), 0
    for m in seq:
        h = m(h)
        relu += h.numel() if isinstance(m, nn.ReLU) else 0
    assert relu + 3 * 32 * 32 == 65_536 and h.shape == (1, 10)


def test_user_weights_load_from_a_release_pth_and_missing_ones_say_where(tmp_path, monkeypatch) -> None:
    """The three unshipped models load from the release's .pth state dict; without it the error says where to put it."""
    import torch

    from icml25.core.data import DataNotFoundError
    from icml25.sdp_crown.models import _BUILDERS, load_model

    monkeypatch.setenv("ICML25_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DataNotFoundError, match="cifar10_cnn_b.pth"):
        load_model("cifar10_cnn_b")
    seq, index = _BUILDERS["cifar10_cnn_b"]()
    inverse = {v: k for k, v in index.items()}
    state = {f"{inverse[int(k.split('.')[0])]}.{k.split('.')[1]}": v for k, v in seq.state_dict().items()
             if k.split(".")[0] != "0"}  # the release's keys (no Normalize buffers)
    torch.save(state, tmp_path / "cnn_b.pth")
    model = load_model("cifar10_cnn_b", path=tmp_path / "cnn_b.pth")
    assert model(torch.rand(2, 3, 32, 32)).shape == (2, 10)
    assert torch.equal(model[2].weight, seq[2].weight)


def test_bad_inputs_name_the_argument() -> None:
    """Issue 19: NaN, strings and wrong shapes are rejected before any work, naming the argument."""
    import torch

    from icml25.sdp_crown import BoundedNet, compute_bounds, sdp_offset, spec_matrix

    net = BoundedNet([(torch.eye(2), torch.zeros(2))], (2,))
    x = torch.tensor([[1.0, 0.0]])
    with pytest.raises(ValueError, match="x must be finite"):
        compute_bounds(net, torch.tensor([[float("nan"), 0.0]]), 0.5, torch.tensor([0]))
    with pytest.raises(TypeError, match="eps"):
        compute_bounds(net, x, "0.5", torch.tensor([0]))
    with pytest.raises(ValueError, match="lr_alpha"):
        compute_bounds(net, x, 0.5, torch.tensor([0]), lr_alpha=float("nan"))
    with pytest.raises(ValueError, match="n_classes"):
        spec_matrix(torch.tensor([0]), 0)
    c = torch.ones(1, 1, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match="lam must be > 0"):
        sdp_offset(c, c, torch.zeros(1, 2), torch.ones(1), torch.zeros(1, 1))
