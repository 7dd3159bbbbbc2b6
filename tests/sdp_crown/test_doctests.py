"""The Examples blocks of the public docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

from icml25.core.testing import requires

MODULES = ["icml25.sdp_crown", "icml25.sdp_crown.network", "icml25.sdp_crown.propagation", "icml25.sdp_crown.offsets",
           "icml25.sdp_crown.verification", "icml25.sdp_crown.attack", "icml25.sdp_crown.models"]


@requires("torch")
@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
