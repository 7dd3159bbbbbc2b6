"""The Examples blocks of the public docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

from icml25.core.testing import requires

MODULES = ["conformal", "mcq", "stats", "answerers", "croq", "datasets", "knowledge_task"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(f"icml25.croq.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0


@requires("torch", "sklearn")
@pytest.mark.parametrize("name", ["cp_opt", "mcq_reader"])
def test_docstring_examples_torch(name: str) -> None:
    mod = importlib.import_module(f"icml25.croq.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
