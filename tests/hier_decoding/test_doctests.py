"""The Examples blocks of the public docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

from icml25.core.testing import requires

MODULES = ["", "decoding", "hierarchy", "metrics", "decision_rules", "heuristics", "hf_subset_decoding",
           "cost_pruning", "synthetic", "imclef"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module("icml25.hier_decoding" + (f".{name}" if name else ""))
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0


@requires("sklearn")
def test_sklearn_decoder_examples() -> None:
    mod = importlib.import_module("icml25.hier_decoding.sklearn_decoder")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0
