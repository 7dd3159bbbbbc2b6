"""The Examples blocks of the public docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["estimators", "beta_law", "baselines", "collection", "fitting", "correlation", "compute", "datasets"]
WITH_EXAMPLES = {"estimators", "beta_law", "baselines", "collection"}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(f"icml25.inference_scaling.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
    if name in WITH_EXAMPLES:
        assert res.attempted > 0, f"{name} lost its docstring examples"
