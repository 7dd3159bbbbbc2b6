"""scikit-learn meta-estimator, ImCLEF loader, the softmax regression of the reproduction, decode_logits."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.hier_decoding import HierarchicalDecoder, Hierarchy, decode, decode_logits, load_imclef
from icml25.hier_decoding._softmax_regression import fit_softmax_regression, softmax_logits


def _toy(n: int = 300, seed: int = 0):
    h = Hierarchy.from_paths(["a/x", "a/y", "b/z", "b/w"])
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)
    centers = np.array([[2, 2], [2, 1], [-2, -2], [-1, -2]], dtype=float)
    X = centers[y] + rng.normal(size=(n, 2))
    return h, X, y


def test_decoder_fit_predict_score() -> None:
    from sklearn.linear_model import LogisticRegression

    h, X, y = _toy()
    dec = HierarchicalDecoder(LogisticRegression(), h, "mistake_severity").fit(X, y)
    Y = dec.predict(X)
    assert Y.shape == (len(X), h.n_nodes)
    np.testing.assert_array_equal(Y, decode(dec.predict_proba(X), h, "mistake_severity"))
    assert dec.score(X, y) == pytest.approx(-dec.metric_.score(y, Y))  # losses are negated
    nodes = dec.predict_nodes(X)
    assert nodes.shape == (len(X),)
    sets = HierarchicalDecoder(LogisticRegression(), h, "hf_2").fit(X, y).predict_nodes(X[:5])
    assert isinstance(sets, list) and all(h.root in s for s in sets)


def test_decoder_in_pipeline_and_grid_search() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    h, X, y = _toy()
    pipe = make_pipeline(StandardScaler(), HierarchicalDecoder(LogisticRegression(), h, "hf_1"))
    gs = GridSearchCV(pipe, {"hierarchicaldecoder__estimator__C": [0.01, 1.0]}, cv=3).fit(X, y)
    assert gs.best_score_ > 0.7
    assert gs.predict(X).shape == (len(X), h.n_nodes)


def test_decoder_names_as_labels_and_errors() -> None:
    from sklearn.linear_model import LogisticRegression

    h, X, y = _toy()
    names = np.array([h.names[i] for i in y])
    dec = HierarchicalDecoder(LogisticRegression(), h, "accuracy").fit(X, names)
    assert dec.score(X, names) > 0.6
    with pytest.raises(TypeError, match="predict_proba"):
        HierarchicalDecoder(object(), h).fit(X, y)
    with pytest.raises(ValueError, match="unknown metric"):
        HierarchicalDecoder(LogisticRegression(), h, "nope").fit(X, y)


def test_imclef_loader_facts() -> None:
    X, y, h = load_imclef("ImCLEF07A", "train")
    assert X.shape == (10000, 80) and (h.n_nodes, h.n_leaves) == (97, 63)
    assert len(h.children[h.root]) == 8 and set(h.depth[: h.n_leaves]) == {3}
    assert len(np.unique(y)) == 63 and X.min() >= 0 and X.max() <= 7
    Xt, yt, _ = load_imclef("ImCLEF07A", "test", hierarchy=h)
    assert Xt.shape == (1006, 80) and yt.max() < 63


def test_arff_reader_dedupes_header(tmp_path) -> None:
    text = ("@RELATION t\n@ATTRIBUTE f1 NUMERIC\n@ATTRIBUTE class hierarchical 1,1/2,1/2/0,1,1/2,1/2/5,3\n"
            "@DATA\n0.5,1@1/2@1/2/0\n1.5,1@1/2@1/2/5\n2.0,3\n")
    p = tmp_path / "t.arff"
    p.write_text(text)
    X, y, h = load_imclef("custom", "train", path=p)
    assert h.n_leaves == 3 and h.n_nodes == 6
    assert [h.names[i] for i in y] == ["1/2/0", "1/2/5", "3"]
    with pytest.raises(ValueError, match="split"):
        load_imclef(split="valid")


def test_softmax_regression_learns() -> None:
    h, X, y = _toy(400)
    W = fit_softmax_regression(X[:300], y[:300], 4, C=1.0)
    acc = (softmax_logits(W, X[300:]).argmax(1) == y[300:]).mean()
    assert acc > 0.6  # 4 classes, chance 0.25


def test_decode_logits_numpy_and_torch() -> None:
    torch = pytest.importorskip("torch")
    h = Hierarchy.from_paths(["a/x", "a/y", "b"])
    z = np.array([[2.0, 2.0, -1.0]])  # p(x) = p(y) = 0.49: only the parent has p > 1/2
    Y = decode_logits(z, h, "mistake_severity")
    assert h.names[h.indicator_to_node(Y)[0]] == "a"
    Yt = decode_logits(torch.tensor(z), h, "mistake_severity")
    assert isinstance(Yt, torch.Tensor) and Yt.dtype == torch.bool
    np.testing.assert_array_equal(Yt.numpy(), Y)
    with pytest.raises(ValueError, match="temperature"):
        decode_logits(z, h, "hf_1", temperature=0)


def test_default_decoder_is_the_flat_classifier() -> None:
    # fails if: the default (flat) hierarchy misorders the leaves against the wrapped classifier's classes, so that
    # the Bayes-optimal accuracy decoding is not the classifier's own argmax
    from sklearn.linear_model import LogisticRegression

    _, X, y = _toy()
    names = np.array(["w", "x", "y", "z"])[y]
    dec = HierarchicalDecoder(metric="accuracy").fit(X, names)
    assert dec.hierarchy_.names[:4] == ["w", "x", "y", "z"] and dec.hierarchy_.n_nodes == 5
    ref = LogisticRegression().fit(X, names)
    got = [dec.hierarchy_.names[n] for n in dec.hierarchy_.indicator_to_node(dec.predict(X))]
    np.testing.assert_array_equal(got, ref.predict(X))
    assert dec.score(X, names) == pytest.approx(ref.score(X, names))
