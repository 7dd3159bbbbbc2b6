"""The Examples blocks of the public docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["combination", "diffusion", "gmm", "gmm_data", "grassmann_stiefel", "manifold_base", "metrics", "pca",
           "simulate", "spd", "pymanopt_adapter"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(f"icml25.manifold_diffusion.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
