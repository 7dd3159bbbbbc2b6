"""The reproduction's code paths: the full config's branches at tiny sizes, config validation, the stub."""

from __future__ import annotations

import dataclasses

import pytest

from icml25.core import Scale
from icml25.core.testing import requires

pytestmark = requires("torch", "cvxpy", "scipy", "sklearn")


def _tiny_full():
    from icml25.sdp_crown.reproduce import Config

    # every branch the default full config takes (ConvSmall, full-SDP oracle, the ≥ 100-image claims), at tiny sizes
    return dataclasses.replace(Config.full(), n_draws=5, n_points=50, mlp_images=3, mlp_iters=1, pgd_steps=2,
                               pgd_restarts=0, sweep_images=1, sweep_iters=1, sweep_radii=(0.5, 1.0),
                               conv_images=2, conv_iters=1, tight_images=1, tight_iters=1, tight_hidden=(4, 4),
                               tight_sdp=1)


def test_full_config_code_path_runs_at_tiny_size(tmp_path) -> None:
    """Regression for issue 20: the default full run crashed in the ConvSmall branch the quick run never takes."""
    import torch

    from icml25.sdp_crown.reproduce import Config, reproduce

    full = Config.full()
    assert full.conv_images > 0 and full.tight_sdp > 0  # the branches exercised below are those of the full run
    torch.set_num_threads(1)
    rep = reproduce(scale=Scale.FULL, seed=0, out=tmp_path, config=_tiny_full())
    ids = {c.id for c in rep.claims}
    assert {"mlp_sdp_acc", "mlp_alpha_acc", "mlp_sdp_minus_alpha", "conv_sdp", "conv_alpha", "conv_sound",
            "sweep_vs_alpha", "tight_sound"} <= ids
    assert "mnist_convsmall" in rep.tables
    assert any(r["sdp_full"] == r["sdp_full"] for r in rep.tables["tightness_instances"])  # the SDP was solved
    # soundness holds at any size
    assert all(c.held for c in rep.claims if c.id in ("mlp_sound", "conv_sound", "tight_sound"))


@pytest.mark.parametrize(("field", "value"), [("mlp_images", 0), ("mlp_images", 201), ("n_draws", 2.5),
                                              ("mlp_radius", float("nan")), ("conv_radius", -1.0),
                                              ("pgd_steps", -1), ("sweep_radii", (1.0, 0.5)),
                                              ("tight_hidden", ()), ("conv_images", "3")])
def test_config_rejects_bad_fields(field: str, value) -> None:
    from icml25.sdp_crown.reproduce import Config

    with pytest.raises((ValueError, TypeError), match=field):
        Config(**{field: value})


def test_presets_are_valid() -> None:
    from icml25.sdp_crown.reproduce import Config

    assert Config.quick() != Config.full()
