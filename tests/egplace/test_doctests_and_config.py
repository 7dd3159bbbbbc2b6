"""Docstring examples run; the reproduction's Config rejects bad fields."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["decoder", "optimizers"])
def test_docstring_examples(name: str) -> None:
    res = doctest.testmod(importlib.import_module(f"icml25.egplace.{name}"), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 0


def test_config_validates_fields() -> None:
    from icml25.egplace.reproduce import Config

    with pytest.raises(ValueError, match="search_evals"):
        Config(search_evals=5, init_round=10)
    with pytest.raises(ValueError, match="p_swap"):
        Config(p_swap=1.5)
    with pytest.raises(TypeError, match="n_seeds"):
        Config(n_seeds=1.5)
