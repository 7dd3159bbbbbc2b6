"""Value diagnostics against true maze distances (spec §6): BFS over-estimation rate, Spearman rank correlation of
``-V`` with BFS distance, and the Euclidean-binned wall AUC. Pure numpy/scipy; the value enters as a function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_array, check_int, check_positive, check_real, check_same_length

from .maze import MazeLayout

__all__ = ["overestimation_rate", "discounted_distance_bound", "rank_correlation", "binned_auc", "wall_auc",
           "value_diagnostics", "wall_auc_gain_ci", "MAX_STEP"]

#: largest displacement of the point agent in one step (0.2 per axis, so 0.2*sqrt(2) ~ 0.283; spec §6)
MAX_STEP = 0.283


def discounted_distance_bound(bfs: Any, discount: float, *, cell_size: float = 4.0, max_step: float = MAX_STEP
                              ) -> np.ndarray:
    """Lower bound on ``-V*`` for BFS distances ``bfs`` (n,): ``(1 - gamma^n) / (1 - gamma)`` with ``n = max(BFS - 1, 0) * cell_size / max_step``.

    ``BFS - 1`` full cells must be crossed at ``max_step`` per step at best (spec §6).

    Examples
    --------
    >>> discounted_distance_bound(np.array([0, 1, 2]), 0.99, cell_size=1.0, max_step=1.0).round(4).tolist()
    [0.0, 0.0, 1.0]
    """
    bfs = check_array(bfs, "bfs", ndim=1, low=0)
    discount = check_real(discount, "discount", low=0.0, high=1.0, low_open=True, high_open=True)
    cell_size, max_step = check_positive(cell_size, "cell_size"), check_positive(max_step, "max_step")
    n = np.maximum(bfs - 1, 0) * cell_size / max_step
    return (1.0 - discount ** n) / (1.0 - discount)


def overestimation_rate(neg_v: Any, bfs: Any, discount: float, *, cell_size: float = 4.0,
                        max_step: float = MAX_STEP, factor: float = 0.5) -> float:
    """Fraction of pairs whose predicted distance ``-V`` is below ``factor`` x the BFS lower bound (spec §6).

    Parameters
    ----------
    neg_v : (n,) predicted ``-V(s, g)``.
    bfs : (n,) BFS cell distances of the pairs (>= 0).

    Examples
    --------
    >>> overestimation_rate([0.0, 50.0], [10, 10], 0.99, cell_size=1.0, max_step=1.0)
    0.5
    """
    neg_v = check_array(neg_v, "neg_v", ndim=1)
    bfs = check_array(bfs, "bfs", ndim=1, low=0)
    check_same_length(neg_v=neg_v, bfs=bfs)
    factor = check_positive(factor, "factor")
    bound = discounted_distance_bound(bfs, discount, cell_size=cell_size, max_step=max_step)
    return float(np.mean(neg_v < factor * bound))


def rank_correlation(neg_v: Any, bfs: Any) -> float:
    """Spearman correlation between predicted distances ``-V`` and BFS distances (scipy.stats.spearmanr).

    Examples
    --------
    >>> rank_correlation([1.0, 2.0, 5.0], [1, 3, 4])
    1.0
    """
    from scipy.stats import spearmanr

    neg_v = check_array(neg_v, "neg_v", ndim=1, min_size=2)
    bfs = check_array(bfs, "bfs", ndim=1, min_size=2)
    check_same_length(neg_v=neg_v, bfs=bfs)
    if np.ptp(neg_v) == 0 or np.ptp(bfs) == 0:
        return 0.0
    return float(spearmanr(neg_v, bfs).statistic)


def binned_auc(scores: Any, positive: Any, bins: Any) -> float:
    """Mean over bins of the ROC AUC of ``scores`` for ``positive`` vs the rest (Mann-Whitney, ties count 1/2).

    Bins with no positive or no negative are skipped; NaN if none is usable.

    Examples
    --------
    >>> binned_auc([1.0, 2.0, 3.0, 0.5], [False, True, True, False], [0, 0, 1, 1])
    1.0
    """
    from scipy.stats import rankdata

    scores = check_array(scores, "scores", ndim=1)
    positive = np.asarray(positive, dtype=bool)
    bins = check_array(bins, "bins", ndim=1, dtype=int)
    check_same_length(scores=scores, positive=positive, bins=bins)
    aucs = []
    for b in np.unique(bins):
        sel = bins == b
        pos, n_pos = positive[sel], int(positive[sel].sum())
        n_neg = int(sel.sum()) - n_pos
        if n_pos == 0 or n_neg == 0:
            continue
        ranks = rankdata(scores[sel])
        aucs.append((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
    return float(np.mean(aucs)) if aucs else float("nan")


def wall_auc(neg_v: Any, euclid: Any, bfs: Any, *, band: tuple[float, float] = (3.0, 6.0), bin_width: float = 0.5,
             open_max: int = 1, walled_min: int = 4) -> float:
    """Wall test (spec §6): AUC of ``-V`` for walled (BFS >= walled_min) vs open (BFS <= open_max) pairs whose
    Euclidean distance lies in ``band``, computed within Euclidean bins of ``bin_width`` and averaged, so that
    Euclidean distance itself scores about 0.5. 1 = the value sees every wall.

    Examples
    --------
    >>> wall_auc([10.0, 1.0], [4.1, 4.2], [5, 1])
    1.0
    """
    neg_v = check_array(neg_v, "neg_v", ndim=1)
    euclid = check_array(euclid, "euclid", ndim=1, low=0.0)
    bfs = check_array(bfs, "bfs", ndim=1)
    check_same_length(neg_v=neg_v, euclid=euclid, bfs=bfs)
    bin_width = check_positive(bin_width, "bin_width")
    sel = (euclid >= band[0]) & (euclid <= band[1]) & ((bfs <= open_max) | (bfs >= walled_min)) & (bfs >= 0)
    if not np.any(sel):
        return float("nan")
    return binned_auc(neg_v[sel], bfs[sel] >= walled_min, np.floor((euclid[sel] - band[0]) / bin_width).astype(int))


def value_diagnostics(neg_value: Callable[[np.ndarray, np.ndarray], np.ndarray], observations: Any,
                      layout: MazeLayout, *, discount: float = 0.99, n_pairs: int = 2000, n_wall: int = 2000,
                      wall: bool = True, seed: int = 0, keep_pairs: bool = False) -> dict[str, Any]:
    """All diagnostics of spec §6 for a predicted distance ``neg_value(s, g) = -V(s, g)`` ((n, d) -> (n,)).

    Rank and over-estimation use ``n_pairs`` uniformly random pairs of dataset states (mostly cross-trajectory);
    the wall test uses up to ``n_wall`` pairs in the Euclidean band [3, 6] (``wall=False`` skips it: the large
    maze has almost no walled pairs there). Returns ``spearman``, ``overestimation``, ``wall_auc``, ``mean_neg_v``
    and the same three scores for the Euclidean distance (``*_euclid``) as a reference; with ``keep_pairs`` also
    ``wall_pairs_data``: the wall test's ``neg_v``, ``euclid`` and ``bfs`` arrays (for a paired bootstrap over pairs,
    :func:`wall_auc_gain_ci`; the same ``seed`` draws the same pairs for every value function).

    Examples
    --------
    >>> lay = MazeLayout(np.array([[1, 1, 1, 1, 1], [1, 0, 0, 0, 1], [1, 1, 1, 1, 1]]))
    >>> obs = np.random.default_rng(0).uniform([-2, -2], [6, 2], size=(100, 2))
    >>> d = value_diagnostics(lambda s, g: np.linalg.norm(s - g, axis=1), obs, lay, wall=False)
    >>> round(d["spearman"], 2) == round(d["spearman_euclid"], 2)
    True
    """
    obs = check_array(observations, "observations", ndim=2)
    if obs.shape[1] < 2:
        raise ValueError(f"observations must start with the (x, y) position, got shape {obs.shape}")
    n_pairs, n_wall = check_int(n_pairs, "n_pairs", low=2), check_int(n_wall, "n_wall", low=2)
    discount = check_real(discount, "discount", low=0.0, high=1.0, low_open=True, high_open=True)
    if not callable(neg_value):
        raise TypeError(f"neg_value must be a function (s, g) -> -V(s, g), got {type(neg_value).__name__}")
    if not isinstance(layout, MazeLayout):
        raise TypeError(f"layout must be a MazeLayout, got {type(layout).__name__}")
    rng = check_random_state(seed)
    i, j = rng.integers(len(obs), size=n_pairs), rng.integers(len(obs), size=n_pairs)
    s, g = obs[i], obs[j]
    bfs = layout.cell_distance(s[:, :2], g[:, :2])
    ok = bfs >= 0
    nv = np.asarray(neg_value(s[ok], g[ok]), dtype=float)
    eu = np.linalg.norm(s[ok, :2] - g[ok, :2], axis=1)
    out = {"spearman": rank_correlation(nv, bfs[ok]), "overestimation": overestimation_rate(nv, bfs[ok], discount),
           "mean_neg_v": float(nv.mean()), "spearman_euclid": rank_correlation(eu, bfs[ok])}
    if wall:
        ci, cj = rng.integers(len(obs), size=100 * n_wall), rng.integers(len(obs), size=100 * n_wall)
        e = np.linalg.norm(obs[ci, :2] - obs[cj, :2], axis=1)
        keep = np.nonzero((e >= 3.0) & (e <= 6.0))[0][:n_wall]
        ws, wg = obs[ci[keep]], obs[cj[keep]]
        wb = layout.cell_distance(ws[:, :2], wg[:, :2])
        we = e[keep]
        out["wall_auc"] = wall_auc(np.asarray(neg_value(ws, wg), dtype=float), we, wb)
        out["wall_auc_euclid"] = wall_auc(we, we, wb)
        out["wall_pairs"] = float(np.sum((wb <= 1) | (wb >= 4)))
        if keep_pairs:
            out["wall_pairs_data"] = {"neg_v": np.asarray(neg_value(ws, wg), dtype=float), "euclid": we, "bfs": wb}
    return out


def wall_auc_gain_ci(runs: Any, n_boot: int = 500, level: float = 0.95, seed: int = 0, *,
                     resample_runs: bool = True) -> tuple[float, float, float]:
    """Mean over runs of ``wall_auc(a) - wall_auc(b)`` on shared pairs, and its paired percentile-bootstrap interval.

    ``runs``: a list of ``(a, b)`` with ``a``, ``b`` the ``wall_pairs_data`` dicts of two value functions on the
    *same* pairs (same ``euclid`` and ``bfs``; e.g. CGCIVL and GCIVL of one seed, measured with the same diagnostics
    seed). Each bootstrap replicate draws the runs with replacement (``resample_runs``, with more than one run: the
    training randomness between seeds) and, within each drawn run, its pairs with replacement (the same indices for
    ``a`` and ``b``: the finite set of pairs), and recomputes both binned AUCs. With ``resample_runs=False`` the
    interval covers the pairs only. Returns ``(estimate, low, high)``.

    Examples
    --------
    >>> eu, bfs = np.full(8, 4.2), np.array([5, 5, 5, 5, 1, 1, 1, 1])
    >>> a = {"neg_v": np.array([9.0, 8, 7, 6, 1, 2, 3, 4]), "euclid": eu, "bfs": bfs}
    >>> b = {"neg_v": np.array([1.0, 2, 3, 4, 9, 8, 7, 6]), "euclid": eu, "bfs": bfs}
    >>> est, lo, hi = wall_auc_gain_ci([(a, b)], n_boot=50)
    >>> est, lo <= est <= hi
    (1.0, True)
    """
    if not isinstance(runs, (list, tuple)) or not runs:
        raise TypeError("runs must be a non-empty list of (a, b) pairs of wall_pairs_data dicts")
    n_boot = check_int(n_boot, "n_boot", low=1)
    level = check_real(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    prepared = []
    for k, run in enumerate(runs):
        if not isinstance(run, (list, tuple)) or len(run) != 2 or not all(isinstance(d, dict) for d in run):
            raise TypeError(f"runs[{k}] must be a pair (a, b) of wall_pairs_data dicts")
        a, b = run
        eu, bf = check_array(a["euclid"], "euclid", ndim=1), check_array(a["bfs"], "bfs", ndim=1)
        if not (np.array_equal(eu, b["euclid"]) and np.array_equal(bf, b["bfs"])):
            raise ValueError(f"runs[{k}]: a and b must be measured on the same pairs (same euclid and bfs)")
        va, vb = check_array(a["neg_v"], "neg_v", ndim=1), check_array(b["neg_v"], "neg_v", ndim=1)
        check_same_length(neg_v_a=va, neg_v_b=vb, euclid=eu, bfs=bf)
        prepared.append((va, vb, eu, bf))

    def gain(draw: list[tuple[int, np.ndarray | None]]) -> float:
        vals = []
        for k, ix in draw:
            va, vb, eu, bf = prepared[k]
            sl = slice(None) if ix is None else ix
            vals.append(wall_auc(va[sl], eu[sl], bf[sl]) - wall_auc(vb[sl], eu[sl], bf[sl]))
        return float(np.nanmean(vals)) if np.any(np.isfinite(vals)) else float("nan")

    rng = np.random.default_rng(seed)
    n = len(prepared)
    boots = np.empty(n_boot)
    for i in range(n_boot):
        ks = rng.integers(n, size=n) if resample_runs and n > 1 else np.arange(n)
        boots[i] = gain([(int(k), rng.integers(len(prepared[k][0]), size=len(prepared[k][0]))) for k in ks])
    if not np.any(np.isfinite(boots)):  # no bin with both walled and open pairs
        return gain([(k, None) for k in range(n)]), float("nan"), float("nan")
    lo, hi = np.nanquantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return gain([(k, None) for k in range(n)]), float(lo), float(hi)
