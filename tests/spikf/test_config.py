"""The reproduction's Config rejects bad fields (docstring examples run in tests/core/test_doctests.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")




def test_config_validates_fields() -> None:
    from icml25.spikf.reproduce import Config

    with pytest.raises(ValueError, match="patch_num"):
        Config(patch_num=7)
    with pytest.raises(ValueError, match="cells"):
        Config(cells=("ETTh3-96",))
    with pytest.raises(TypeError, match="epochs"):
        Config(epochs=1.5)
    with pytest.raises(ValueError, match="lr"):
        Config(lr=-1.0)
    assert Config.full().cells[0] == Config.quick().cells[0] == "ETTh1-96"
