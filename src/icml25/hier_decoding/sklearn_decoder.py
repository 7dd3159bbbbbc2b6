"""``HierarchicalDecoder``: a scikit-learn meta-estimator that decodes any ``predict_proba`` optimally."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone

from icml25.core.validation import check_fitted, precheck_sklearn_X

from .decoding import get_metric
from .hierarchy import Hierarchy
from .metrics import HierarchicalMetric

__all__ = ["HierarchicalDecoder"]


def _check_X(X: Any) -> Any:
    """Reject a scalar/string ``X`` and, for numeric array-likes, NaN/inf and non-2-d shapes (in scikit-learn's
    wording); returns ``X`` as given (so that DataFrames, sparse matrices or text reach the wrapped estimator)."""
    if hasattr(X, "toarray") or hasattr(X, "iloc"):  # sparse matrix / DataFrame: the estimator checks it
        return X
    return precheck_sklearn_X(X)


class HierarchicalDecoder(MetaEstimatorMixin, BaseEstimator):
    """Bayes-optimal post-hoc decoding of a probabilistic leaf classifier, from the 'To Each Metric Its
    Decoding' (ICML 2025) paper.

    ``fit`` fits the wrapped classifier on leaf labels; ``predict`` returns ``argmax_ŷ Σ_l p(l|x) M(ŷ, l)`` for the
    chosen metric ``M`` (spec §2.3) computed from ``estimator.predict_proba``.

    Parameters
    ----------
    estimator : scikit-learn classifier with ``predict_proba``, default ``LogisticRegression()``
        Trained on leaf indices (or names) of ``hierarchy``.
    hierarchy : Hierarchy or None
        None: a flat hierarchy (a root above one leaf per class seen in ``fit``), where every metric reduces to
        its flat counterpart; pass the real taxonomy to decode hierarchically.
    metric : str or HierarchicalMetric
        Target metric (see ``METRIC_NAMES``), default ``"hf_1"``.

    Attributes
    ----------
    estimator_ : the fitted clone of ``estimator``
    hierarchy_ : Hierarchy
        ``hierarchy``, or the flat one built in ``fit``.
    metric_ : HierarchicalMetric
    classes_ : ndarray
        Leaf indices seen during ``fit`` (the columns of the wrapped ``predict_proba``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> h = Hierarchy.from_paths(["a/x", "a/y", "b/z", "b/w"])
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 4, 200); X = rng.normal(size=(200, 2)) + np.eye(4)[y][:, :2] * 3
    >>> dec = HierarchicalDecoder(LogisticRegression(), h, "mistake_severity").fit(X, y)
    >>> dec.predict(X[:3]).shape
    (3, 7)

    In a ``Pipeline`` and ``GridSearchCV`` (``score`` is the target metric, losses negated):

    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> pipe = make_pipeline(StandardScaler(), HierarchicalDecoder(LogisticRegression(), h, "mistake_severity"))
    >>> search = GridSearchCV(pipe, {"hierarchicaldecoder__estimator__C": [0.1, 1.0]}, cv=3).fit(X, y)
    >>> search.predict(X[:3]).shape
    (3, 7)

    Without a hierarchy the decoder builds a flat one from the labels seen in ``fit``:

    >>> HierarchicalDecoder().fit(X, np.array(["cat", "dog", "fish", "owl"])[y]).hierarchy_.n_leaves
    4
    """

    def __init__(self, estimator: Any = None, hierarchy: Hierarchy | None = None,
                 metric: str | HierarchicalMetric = "hf_1"):
        self.estimator = estimator
        self.hierarchy = hierarchy
        self.metric = metric

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        """Supervised (``y`` required); input tags (sparse, NaN) are those of the wrapped classifier."""
        from sklearn.linear_model import LogisticRegression
        from sklearn.utils import get_tags

        tags = super().__sklearn_tags__()
        inner = get_tags(LogisticRegression() if self.estimator is None else self.estimator)
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.allow_nan = inner.input_tags.allow_nan
        tags.target_tags.required = True
        return tags

    def _check_setup(self, y: Any) -> Any:
        """Validate the parameters; returns the estimator to clone and sets ``hierarchy_`` and ``metric_``."""
        if self.hierarchy is not None and not isinstance(self.hierarchy, Hierarchy):
            raise TypeError(f"hierarchy must be a Hierarchy or None, got {type(self.hierarchy).__name__}")
        estimator = self.estimator
        if estimator is None:
            from sklearn.linear_model import LogisticRegression

            estimator = LogisticRegression()
        if not hasattr(estimator, "predict_proba"):
            raise TypeError(f"estimator must implement predict_proba, got {type(estimator).__name__}")
        if self.hierarchy is None:
            from sklearn.utils.multiclass import check_classification_targets
            from sklearn.utils.validation import column_or_1d

            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
            leaves = np.unique(y).tolist()
            self.hierarchy_ = Hierarchy({"<root>": leaves}, leaf_order=leaves)
        else:
            self.hierarchy_ = self.hierarchy
        self.metric_ = get_metric(self.metric, self.hierarchy_)
        return estimator

    def fit(self, X: Any, y: Any, **fit_params: Any) -> HierarchicalDecoder:
        """Fit the wrapped classifier on ``X`` and leaf labels ``y`` (names or leaf indices)."""
        if y is None:
            raise ValueError("HierarchicalDecoder requires y to be passed, but the target y is None")
        X = _check_X(X)
        estimator = self._check_setup(y)
        y_idx = self.hierarchy_.leaf_indices(y)
        self.estimator_ = clone(estimator).fit(X, y_idx, **fit_params)
        self.classes_ = np.asarray(self.estimator_.classes_)
        return self

    @property
    def n_features_in_(self) -> int:
        """Number of features seen by the wrapped estimator in ``fit``."""
        check_fitted(self, "estimator_")
        return self.estimator_.n_features_in_

    def predict_proba(self, X: Any) -> np.ndarray:
        """Leaf probabilities (n_samples, n_leaves); leaves unseen in ``fit`` get probability 0."""
        check_fitted(self, ["estimator_", "metric_"])
        proba = np.asarray(self.estimator_.predict_proba(_check_X(X)), dtype=np.float64)
        P = np.zeros((proba.shape[0], self.hierarchy_.n_leaves))
        P[:, self.classes_.astype(np.int64)] = proba
        return P / P.sum(axis=1, keepdims=True)

    def predict(self, X: Any) -> np.ndarray:
        """Optimal node-indicator matrix (n_samples, n_nodes) for the target metric.

        Raises scikit-learn's ``NotFittedError`` before ``fit``.
        """
        check_fitted(self, ["estimator_", "metric_"])
        return self.metric_.decode(self.predict_proba(X))

    def predict_nodes(self, X: Any) -> Any:
        """Node indices (n_samples,) for single-node metrics, or a list of node-index arrays for set metrics."""
        check_fitted(self, ["estimator_", "metric_"])
        return self.metric_.decode_nodes(self.predict_proba(X))

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Mean target metric on ``(X, y)``; losses and costs are negated so that greater is better."""
        check_fitted(self, ["estimator_", "metric_"])
        y_idx = self.hierarchy_.leaf_indices(y)
        vals = self.metric_.score(y_idx, self.predict(X), average=False)
        value = float(np.average(vals, weights=sample_weight))
        return value if self.metric_.greater_is_better else -value
