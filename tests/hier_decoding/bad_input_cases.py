"""Bad-input registry of hier_decoding for the fuzz contract (tests/core/test_bad_input.py): one valid call of
every public callable and the kinds of its numeric arguments."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase


def _h() -> Any:
    from icml25.hier_decoding import Hierarchy

    return Hierarchy.from_paths(["a/x", "a/y", "b"])  # leaves a/x, a/y, b; nodes: 3 leaves, a, root


def _P() -> np.ndarray:
    return np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8]])


def _node_cost() -> np.ndarray:
    from icml25.hier_decoding import WuPalmer

    return WuPalmer(_h()).cost_matrix.copy()


def _leaf_cost() -> np.ndarray:
    return 1.0 - np.eye(3) + 0.1


def _metric(name: str) -> Any:
    import icml25.hier_decoding as hd

    return getattr(hd, name)(_h())


def _toy_xy() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = np.tile(np.arange(3), 20)
    X = np.eye(3)[y] * 3 + rng.normal(size=(60, 3))
    return X, y


def _fitted_decoder() -> Any:
    from sklearn.linear_model import LogisticRegression

    from icml25.hier_decoding import HierarchicalDecoder

    X, y = _toy_xy()
    return HierarchicalDecoder(LogisticRegression(), _h(), "hf_2").fit(X, y)


def _arff() -> Any:
    from icml25.core.data import resolve_data

    return str(resolve_data("hier_decoding", "ImCLEF07A_Test.arff"))


def _consts() -> Any:
    from icml25.hier_decoding import pruning_constants

    return pruning_constants(_node_cost(), _h(), "strict")


CASES: list[BadInputCase] = [
    BadInputCase("Hierarchy", lambda: {"children": {"r": ["a", "b"], "a": ["x", "y"]}}),
    BadInputCase("Hierarchy.node_probs", lambda: {"leaf_probs": _P()}, {"leaf_probs": ARRAY}, obj=_h),
    BadInputCase("HierarchicalMetric", skip="abstract base class; its concrete metrics have cases"),
    BadInputCase("Accuracy", lambda: {"hierarchy": _h()}),
    BadInputCase("Accuracy.decode", lambda: {"leaf_probs": _P()}, {"leaf_probs": ARRAY},
                 obj=lambda: _metric("Accuracy")),
    BadInputCase("Hamming", lambda: {"hierarchy": _h()}),
    BadInputCase("Hamming.expected_score", lambda: {"leaf_probs": _P(), "y_pred": np.array([0, 3, 2])},
                 {"leaf_probs": ARRAY, "y_pred": ARRAY}, obj=lambda: _metric("Hamming")),
    BadInputCase("HFBeta", lambda: {"hierarchy": _h(), "beta": 2.0}, {"beta": POSITIVE}),
    BadInputCase("HFBeta.score", lambda: {"y_true_leaf": np.array([0, 1, 2]),
                                          "y_pred": np.array([[1, 0, 0, 1, 1], [0, 1, 0, 1, 1], [0, 0, 1, 0, 1]])},
                 {"y_true_leaf": ARRAY, "y_pred": ARRAY}, obj=lambda: _metric("HFBeta")),
    BadInputCase("MistakeSeverity", lambda: {"hierarchy": _h()}),
    BadInputCase("MistakeSeverity.decode", lambda: {"leaf_probs": _P()}, {"leaf_probs": ARRAY},
                 obj=lambda: _metric("MistakeSeverity")),
    BadInputCase("WuPalmer", lambda: {"hierarchy": _h(), "pruning": "auto"}, {"pruning": TEXT}),
    BadInputCase("Zhao", lambda: {"hierarchy": _h(), "pruning": "none"}, {"pruning": TEXT}),
    BadInputCase("Zhao.decode", lambda: {"leaf_probs": _P()}, {"leaf_probs": ARRAY}, obj=lambda: _metric("Zhao")),
    BadInputCase("NodeToLeafCost", lambda: {"hierarchy": _h(), "C": _node_cost(), "pruning": "auto"},
                 {"C": ARRAY, "pruning": TEXT}),
    BadInputCase("LeafToLeafCost", lambda: {"hierarchy": _h(), "C": _leaf_cost()}, {"C": ARRAY}),
    BadInputCase("decode", lambda: {"leaf_probs": _P(), "hierarchy": _h(), "metric": "hf_2"},
                 {"leaf_probs": ARRAY, "metric": TEXT}),
    BadInputCase("decode_logits", lambda: {"logits": np.log(_P()), "hierarchy": _h(), "metric": "zhao",
                                           "temperature": 1.5},
                 {"logits": ARRAY, "metric": TEXT, "temperature": POSITIVE}),
    BadInputCase("get_metric", lambda: {"metric": "hf_0.5", "hierarchy": _h()}, {"metric": TEXT}),
    BadInputCase("exhaustive_decode", lambda: {"leaf_probs": _P(), "metric": _metric("Zhao"), "space": "nodes"},
                 {"leaf_probs": ARRAY, "space": TEXT}),
    BadInputCase("all_subsets", lambda: {"n_nodes": 4}, {"n_nodes": SIZE}),
    BadInputCase("argmax_leaf", lambda: {"leaf_probs": _P(), "h": _h()}, {"leaf_probs": ARRAY}),
    BadInputCase("leaf_cost_argmin", lambda: {"leaf_probs": _P(), "h": _h(), "C": _leaf_cost()},
                 {"leaf_probs": ARRAY, "C": ARRAY}),
    BadInputCase("node_cost_argmin", lambda: {"leaf_probs": _P(), "h": _h(), "C": _node_cost(), "pruning": "strict",
                                              "chunk_elements": 1000},
                 {"leaf_probs": ARRAY, "C": ARRAY, "pruning": TEXT, "chunk_elements": SIZE}),
    BadInputCase("deepest_above_half", lambda: {"leaf_probs": _P(), "h": _h(), "threshold": 0.5},
                 {"leaf_probs": ARRAY, "threshold": PROB}),
    BadInputCase("hf_beta_subset", lambda: {"leaf_probs": _P(), "h": _h(), "beta": 0.5, "chunk_elements": 1000},
                 {"leaf_probs": ARRAY, "beta": POSITIVE, "chunk_elements": SIZE}),
    BadInputCase("hf_candidate_threshold", lambda: {"h": _h(), "beta": 2.0}, {"beta": POSITIVE}),
    BadInputCase("PruningConstants", skip="result container returned by pruning_constants (which has a case)"),
    BadInputCase("pruning_constants", lambda: {"C": _node_cost(), "h": _h(), "kind": "strict"},
                 {"C": ARRAY, "kind": TEXT}),
    BadInputCase("reasonableness", lambda: {"C": _node_cost(), "h": _h()}, {"C": ARRAY}),
    BadInputCase("surviving_candidates", lambda: {"node_probs": np.ascontiguousarray(_h().node_probs(_P())), "h": _h(),
                                                  "consts": _consts()}, {"node_probs": ARRAY}),
    BadInputCase("argmax_leaf_heuristic", lambda: {"leaf_probs": _P(), "hierarchy": _h()}, {"leaf_probs": ARRAY}),
    BadInputCase("top_down_greedy", lambda: {"leaf_probs": _P(), "hierarchy": _h()}, {"leaf_probs": ARRAY}),
    BadInputCase("confidence_threshold", lambda: {"leaf_probs": _P(), "hierarchy": _h(), "tau": 0.4},
                 {"leaf_probs": ARRAY, "tau": PROB}),
    BadInputCase("expected_information", lambda: {"leaf_probs": _P(), "hierarchy": _h(), "lam": 0.5},
                 {"leaf_probs": ARRAY, "lam": REAL}),
    BadInputCase("plurality", lambda: {"leaf_probs": _P(), "hierarchy": _h()}, {"leaf_probs": ARRAY}),
    BadInputCase("hie_self", lambda: {"leaf_probs": _P(), "hierarchy": _h()}, {"leaf_probs": ARRAY}),
    BadInputCase("crm_bm", lambda: {"leaf_probs": _P(), "hierarchy": _h()}, {"leaf_probs": ARRAY}),
    BadInputCase("load_imclef", lambda: {"name": "ImCLEF07A", "split": "test"}, {"name": TEXT, "split": TEXT}),
    BadInputCase("read_hierarchical_arff", lambda: {"path": _arff()}, {"path": TEXT}),
    BadInputCase("random_tree", lambda: {"n_nodes": 8, "random_state": 0, "max_children": 3},
                 {"n_nodes": SIZE, "max_children": SIZE}),
    BadInputCase("synthetic_posteriors", lambda: {"h": _h(), "n_samples": 5, "blur": 2.0, "random_state": 0,
                                                  "gamma0": 4.0, "sigma": 0.5},
                 {"n_samples": SIZE, "blur": REAL, "gamma0": POSITIVE, "sigma": REAL}),
    BadInputCase("weighted_path_cost", lambda: {"h": _h(), "random_state": 0}),
    BadInputCase("HierarchicalDecoder", skip="scikit-learn convention: __init__ only stores parameters; fit "
                                             "validates them (cases HierarchicalDecoder.fit/.predict)"),
    BadInputCase("HierarchicalDecoder.fit", lambda: {"X": _toy_xy()[0], "y": _toy_xy()[1]}, {"X": ARRAY},
                 obj=lambda: __import__("icml25.hier_decoding", fromlist=["x"]).HierarchicalDecoder(
                     __import__("sklearn.linear_model", fromlist=["x"]).LogisticRegression(), _h(), "hf_2")),
    BadInputCase("HierarchicalDecoder.predict", lambda: {"X": _toy_xy()[0][:5]}, {"X": ARRAY}, obj=_fitted_decoder),
]
