"""Issue 19 findings for hier_decoding: metric names with a bad β, predict before fit, bad costs and sizes."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.hier_decoding import (
    Hierarchy,
    all_subsets,
    decode_logits,
    get_metric,
    node_cost_argmin,
    random_tree,
    synthetic_posteriors,
)


@pytest.fixture
def h() -> Hierarchy:
    return Hierarchy.from_paths(["a/x", "a/y", "b"])


@pytest.mark.parametrize("name, beta", [("hf_2", 2.0), ("hf-2", 2.0), ("HF 0.5", 0.5), ("hf_beta=3", 3.0),
                                        ("hf", 1.0), ("hf_1e-1", 0.1)])
def test_hf_names_parse(h: Hierarchy, name: str, beta: float) -> None:
    assert get_metric(name, h).beta == beta


@pytest.mark.parametrize("name", ["hf_-2", "hf--2", "hf_0", "hf_nan", "hf_inf", "hf_2_", "hfx"])
def test_bad_hf_names_are_errors(h: Hierarchy, name: str) -> None:
    # "hf_-2" used to become hF_2 silently (the "-" was turned into a separator)
    with pytest.raises(ValueError, match="metric"):
        get_metric(name, h)


def test_predict_before_fit_raises_not_fitted() -> None:
    from sklearn.exceptions import NotFittedError
    from sklearn.linear_model import LogisticRegression

    from icml25.hier_decoding import HierarchicalDecoder

    dec = HierarchicalDecoder(LogisticRegression(), Hierarchy.from_paths(["a/x", "a/y", "b"]), "hf_2")
    X = np.zeros((2, 3))
    for method in (dec.predict, dec.predict_proba, dec.predict_nodes):
        with pytest.raises(NotFittedError, match="fit"):
            method(X)
    with pytest.raises(NotFittedError):
        dec.score(X, np.array([0, 1]))


def test_decoder_rejects_nan_features() -> None:
    from sklearn.linear_model import LogisticRegression

    from icml25.hier_decoding import HierarchicalDecoder

    X = np.random.default_rng(0).normal(size=(30, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="X must be finite"):
        HierarchicalDecoder(LogisticRegression(), Hierarchy.from_paths(["a/x", "a/y", "b"])).fit(X, np.arange(30) % 3)


def test_bad_arrays_and_sizes(h: Hierarchy) -> None:
    C = np.ones((h.n_nodes, h.n_leaves))
    C[0, 0] = np.inf
    with pytest.raises(ValueError, match="C must be finite"):
        node_cost_argmin([[0.2, 0.3, 0.5]], h, C)
    with pytest.raises(ValueError, match="logits must be finite"):
        decode_logits([[0.0, np.nan, 1.0]], h, "hf_1")
    with pytest.raises(TypeError, match="n_nodes"):
        all_subsets(2.5)
    with pytest.raises(ValueError, match="max_children"):
        random_tree(5, 0, max_children=0)
    with pytest.raises(ValueError, match="blur"):
        synthetic_posteriors(h, 4, float("nan"), 0)


def test_config_validates_fields() -> None:
    from icml25.hier_decoding.reproduce import Config

    with pytest.raises(ValueError, match="n_trees"):
        Config(n_trees=0)
    with pytest.raises(ValueError, match="q2_blurs"):
        Config(q2_blurs=(5.0,))
    with pytest.raises(ValueError, match="f2_sigmas"):
        Config(f2_sigmas=(1.0,))
    with pytest.raises(ValueError, match="max_tree_nodes"):
        Config(max_tree_nodes=40)
    with pytest.raises(TypeError, match="lr_C"):
        Config(lr_C="big")
