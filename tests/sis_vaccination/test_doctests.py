"""The Examples blocks of the public docstrings run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["sis_model", "sislearn", "spectral", "srm_greedy", "srm_tree", "srm_treewidth_dp", "mle_learner",
           "vug", "contact_graphs", "nice_tree_decomposition", "srm_brute_force"]
WITH_EXAMPLES = {"sis_model", "sislearn", "spectral", "srm_greedy", "srm_tree", "srm_treewidth_dp"}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(f"icml25.sis_vaccination.{name}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
    if name in WITH_EXAMPLES:
        assert res.attempted > 0, f"{name} lost its docstring examples"
