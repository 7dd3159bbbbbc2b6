"""The Examples blocks of the public docstrings of risk_cmdp run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["risk", "env", "oracles", "planner"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(f"icml25.risk_cmdp.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0
