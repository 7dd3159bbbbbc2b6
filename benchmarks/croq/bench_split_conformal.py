"""Calibration + set construction of split CP on 10^6 questions x 15 options: icml25.croq vs MAPIE (same scores).

Run: .venv/bin/python benchmarks/croq/bench_split_conformal.py [n_questions]
"""

from __future__ import annotations

import sys
import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from icml25.croq import SplitConformal


class PrefitScores(ClassifierMixin, BaseEstimator):
    """A prefit 'classifier' whose predict_proba returns its input (the precomputed scores)."""

    def fit(self, X, y):
        self.classes_ = np.arange(np.asarray(X).shape[1])
        return self

    def predict_proba(self, X):
        return np.asarray(X)

    def predict(self, X):
        return np.asarray(X).argmax(axis=1)


def main(n: int = 1_000_000, m: int = 15, alpha: float = 0.1) -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(m, 0.3), size=n)
    y = (p.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    half = n // 2
    t = time.perf_counter()
    cp = SplitConformal(alpha)
    cp.calibrate_from_scores(p[:half], y[:half])
    ours = cp.predict_sets(p[half:])
    t_ours = time.perf_counter() - t
    print(f"icml25.croq SplitConformal: {t_ours:.3f} s  ({n} questions x {m} options, alpha={alpha})")
    try:
        from mapie.classification import SplitConformalClassifier
    except ImportError:
        print("mapie not installed: no peer measurement")
        return
    est = PrefitScores().fit(p[:10], y[:10])
    t = time.perf_counter()
    mp = SplitConformalClassifier(est, confidence_level=1 - alpha, conformity_score="lac", prefit=True)
    mp.conformalize(p[:half], y[:half])
    _, sets = mp.predict_set(p[half:])
    t_mapie = time.perf_counter() - t
    agree = np.array_equal(ours, sets[:, :, 0])
    print(f"MAPIE SplitConformalClassifier(lac, prefit): {t_mapie:.3f} s")
    print(f"ratio MAPIE / ours = {t_mapie / t_ours:.1f}x; identical sets: {agree}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
