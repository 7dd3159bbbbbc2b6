"""Split conformal prediction for multiple-choice answers (spec §2.2 of the CROQ paper).

Conformity scores ``g(x, j)`` (larger = more plausible) are calibrated on held-out questions: with
``k = floor(alpha (n + 1))`` the threshold is the k-th smallest true-option score, and the prediction set keeps
every valid option whose score reaches it. This is MAPIE's ``"lac"`` rule written on conformity scores.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from icml25.core.validation import check_array, check_fitted, check_int, check_probability

__all__ = ["SplitConformal", "conformal_threshold", "option_mask", "min_calibration_size"]


def _check_alpha(alpha: Any) -> float:
    return check_probability(alpha, "alpha", open_low=True, open_high=True)


def min_calibration_size(alpha: float) -> int:
    """Smallest calibration size ``n`` with ``floor(alpha (n + 1)) >= 1`` (a finite threshold).

    Parameters
    ----------
    alpha : float
        Miscoverage level in (0, 1).

    Returns
    -------
    int
        ``ceil(1 / alpha) - 1``.
    """
    a = _check_alpha(alpha)
    return max(1, math.ceil(1.0 / a - 1e-12) - 1)


def conformal_threshold(conf: Any, alpha: float, allow_infinite: bool = False) -> float:
    """Finite-sample split-conformal threshold on conformity scores (Eq. of spec §2.2).

    Parameters
    ----------
    conf : array-like, shape (n,)
        Conformity ``g(x_i, y_i)`` of the true option of each calibration question.
    alpha : float
        Target miscoverage in (0, 1); the sets cover with probability at least ``1 - alpha``.
    allow_infinite : bool
        When the calibration set is too small (``floor(alpha (n + 1)) = 0``) return ``-inf`` (full sets) instead
        of raising.

    Returns
    -------
    float
        ``tau`` = the ``k``-th smallest score, ``k = floor(alpha (n + 1))``.

    Raises
    ------
    ValueError
        For alpha outside (0, 1), NaN or infinite scores, an empty array, or a calibration set smaller than
        :func:`min_calibration_size` (unless ``allow_infinite``).
    """
    a = _check_alpha(alpha)
    c = check_array(conf, "conf", ndim=1)  # finite: an infinite score would make tau infinite (empty/full sets)
    if not isinstance(allow_infinite, (bool, np.bool_)):
        raise TypeError(f"allow_infinite must be a bool, got {allow_infinite!r}")
    n = c.size
    k = int(math.floor(a * (n + 1) + 1e-9))  # k = floor(alpha (n+1)), robust to 0.1 * 1000 = 99.999...
    if k == 0:
        if allow_infinite:
            return -math.inf
        raise ValueError(f"calibration set too small for alpha={a}: n={n} gives floor(alpha (n+1)) = 0; "
                         f"need n >= {min_calibration_size(a)} calibration questions")
    return float(np.partition(c, k - 1)[k - 1])


def option_mask(n_options: Any, m: int | None = None) -> np.ndarray:
    """Boolean mask ``(n, m)`` that is True for the first ``n_options[i]`` slots of row ``i``.

    Parameters
    ----------
    n_options : array-like of int, shape (n,)
        Number of options of each question (>= 2).
    m : int, optional
        Number of slots; defaults to ``max(n_options)``.
    """
    if isinstance(n_options, (str, bytes)):
        raise TypeError(f"n_options must be an array of option counts, got {n_options!r}")
    k = np.asarray(n_options)
    if k.ndim != 1:
        raise ValueError(f"n_options must be a 1-D array of option counts, got shape {k.shape}")
    if k.dtype.kind == "f":
        k = check_array(k, "n_options", ndim=1, dtype=int)
    if not np.issubdtype(k.dtype, np.integer):
        raise TypeError(f"n_options must hold integers, got dtype {k.dtype}")
    if k.size == 0:
        raise ValueError("n_options must not be empty")
    if k.min() < 2:
        raise ValueError(f"every question needs at least 2 options; got n_options min {int(k.min())}")
    m = int(k.max()) if m is None else check_int(m, "m", low=2)
    if k.size and k.max() > m:
        raise ValueError(f"n_options max {int(k.max())} exceeds the number of score columns {m}")
    return np.arange(m)[None, :] < k[:, None]


def _mask_for(scores: np.ndarray, mask: Any) -> np.ndarray:
    if mask is None:
        return np.ones(scores.shape, dtype=bool)
    mk = np.asarray(mask)
    if mk.ndim == 1:
        return option_mask(mk, scores.shape[1])
    if mk.shape != scores.shape:
        raise ValueError(f"mask must have the shape of scores {scores.shape}, got {mk.shape}")
    return mk.astype(bool)


class SplitConformal:
    """Split conformal prediction sets from the 'Prune 'n Predict' (CROQ, ICML 2025) paper, §2.2.

    ``tau = k``-th smallest calibration conformity with ``k = floor(alpha (n + 1))``;
    ``C(x) = {j valid : g(x, j) >= tau}``, so that ``P(y in C(x)) >= 1 - alpha`` under exchangeability.

    Parameters
    ----------
    alpha : float
        Target miscoverage in (0, 1).

    Attributes
    ----------
    tau_ : float
        The calibrated threshold (after :meth:`calibrate`).
    n_cal_ : int
        Number of calibration questions.

    Examples
    --------
    >>> import numpy as np
    >>> cp = SplitConformal(alpha=0.25)
    >>> cp.calibrate(np.array([0.9, 0.2, 0.6, 0.4, 0.8, 0.7, 0.3]))
    0.3
    >>> cp.predict_sets(np.array([[0.5, 0.25, 0.25]])).tolist()
    [[True, False, False]]
    """

    def __init__(self, alpha: float = 0.1) -> None:
        self.alpha = _check_alpha(alpha)

    def calibrate(self, scores_true: Any) -> float:
        """Compute the threshold from the true-option scores ``(n,)`` of the calibration set; return ``tau``.

        Scores must be finite (an infinite score would give an infinite threshold).
        """
        scores_true = check_array(scores_true, "scores_true", ndim=1)
        self.tau_ = conformal_threshold(scores_true, self.alpha)
        self.n_cal_ = int(np.asarray(scores_true).size)
        return self.tau_

    def calibrate_from_scores(self, scores: Any, y: Any, mask: Any = None) -> float:
        """Calibrate from the full score matrix ``(n, m)`` and labels ``y (n,)``; return ``tau``."""
        s = self._check_scores(scores)
        mk = _mask_for(s, mask)
        if np.isnan(s[mk]).any() or np.isinf(s[mk]).any():
            raise ValueError("scores must be finite in valid option slots, found NaN or inf")
        yy = check_array(y, "y", shape=(s.shape[0],), dtype=int)
        valid = (yy >= 0) & (yy < mk.sum(axis=1))
        if not valid.all():
            i = int(np.flatnonzero(~valid)[0])
            raise ValueError(f"label y[{i}]={int(yy[i])} is outside the option range 0..{int(mk[i].sum()) - 1}")
        return self.calibrate(s[np.arange(s.shape[0]), yy])

    @staticmethod
    def _check_scores(scores: Any) -> np.ndarray:
        # NaN/-inf are allowed in masked-out slots; the callers check the valid slots
        return check_array(scores, "scores", ndim=2, finite=False)

    def predict_sets(self, scores: Any, mask: Any = None) -> np.ndarray:
        """Prediction sets as a boolean matrix.

        Parameters
        ----------
        scores : array-like, shape (n, m)
            Conformity of every option slot (NaN allowed only in masked-out slots).
        mask : array-like, optional
            Boolean ``(n, m)`` of valid slots, or option counts ``(n,)``.

        Returns
        -------
        ndarray of bool, shape (n, m)
            ``True`` where the option is in the set.
        """
        check_fitted(self, "tau_")
        s = self._check_scores(scores)
        mk = _mask_for(s, mask)
        if np.isnan(s[mk]).any() or np.isinf(s[mk]).any():
            raise ValueError("scores must be finite in valid option slots, found NaN or inf")
        with np.errstate(invalid="ignore"):
            return (s >= self.tau_) & mk

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Parameters (scikit-learn convention)."""
        return {"alpha": self.alpha}

    def __repr__(self) -> str:
        return f"SplitConformal(alpha={self.alpha})"
