"""Docstring examples run; the reproduction's Config rejects bad fields."""

from __future__ import annotations

import doctest
import importlib

import pytest

pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["lif", "model", "data", "energy", "estimator"])
def test_docstring_examples(name: str) -> None:
    res = doctest.testmod(importlib.import_module(f"icml25.spikf.{name}"), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 0


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
