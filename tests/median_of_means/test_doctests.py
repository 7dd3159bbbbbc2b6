"""The Examples blocks of the public docstrings of median_of_means run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["estimators", "samplers", "kmeans", "regression"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    if name in ("kmeans", "regression"):
        pytest.importorskip("sklearn")
    mod = importlib.import_module(f"icml25.median_of_means.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0
