"""The reproduction's Config rejects bad fields (docstring examples run in tests/core/test_doctests.py)."""

from __future__ import annotations

import pytest


def test_config_validates_fields() -> None:
    from icml25.egplace.reproduce import Config

    with pytest.raises(ValueError, match="search_evals"):
        Config(search_evals=5, init_round=10)
    with pytest.raises(ValueError, match="p_swap"):
        Config(p_swap=1.5)
    with pytest.raises(TypeError, match="n_seeds"):
        Config(n_seeds=1.5)
