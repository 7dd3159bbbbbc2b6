"""The Examples blocks of the public docstrings of label_dp run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["channel", "design", "links", "regression"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    if name == "regression":
        pytest.importorskip("sklearn")
    mod = importlib.import_module(f"icml25.label_dp.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0
