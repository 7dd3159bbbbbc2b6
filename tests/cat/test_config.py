"""The reproduction's Config rejects bad fields (docstring examples run in tests/core/test_doctests.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


def test_config_validates_fields() -> None:
    from icml25.cat.reproduce import Config

    with pytest.raises(ValueError, match="protections"):
        Config(protections=("glaze",))
    with pytest.raises(ValueError, match="etas"):
        Config(etas=(0.0,))
    with pytest.raises(TypeError, match="etas"):
        Config(etas=[0.1])
    with pytest.raises(ValueError, match="cat_target"):
        Config(cat_target="unet")
    with pytest.raises(ValueError, match="ddim_steps"):
        Config(ddim_steps=500)
    with pytest.raises(ValueError, match="cat_lr"):
        Config(cat_lr=float("nan"))
    assert set(Config.quick().protections) <= set(Config.full().protections)
    assert Config.quick().etas[0] in Config.full().etas
