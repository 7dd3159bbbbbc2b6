"""Optimal randomized-response design: maximise the trace of the Fisher information over the label-DP polygon
by vertex enumeration (spec §2.3), and the two-stage design for unknown beta."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml25.core.seeding import check_random_state
from icml25.core.validation import (
    check_array,
    check_int,
    check_option,
    check_positive,
    check_probability,
    check_real,
)

from .channel import RRChannel, _slack, check_binary_labels, randomized_response
from .links import LINKS, link_functions

__all__ = ["fisher_information", "fisher_trace", "fisher_trace_many", "feasible_vertices", "optimal_design", "grid_design",
           "TwoStageDesign", "design_criterion"]


def _design_matrix(X: Any) -> np.ndarray:
    """``X`` as a finite 2-D float array (n_samples, n_features), intercept column included by the caller."""
    return check_array(X, "X", ndim=2)


def _beta(beta: Any, d: int) -> np.ndarray:
    return check_array(beta, "beta", shape=(d,))


def _pq(p: Any, q: Any) -> tuple[float, float]:
    return check_probability(p, "p"), check_probability(q, "q")


def _weights(X: np.ndarray, beta: np.ndarray, p: float, q: float, link: str) -> np.ndarray:
    F, f = link_functions(link)(X @ beta)
    s = p + q - 1.0
    G = np.clip((1.0 - q) + s * F, 1e-15, 1 - 1e-15)
    return s * s * f * f / (G * (1.0 - G))


def fisher_information(X: Any, beta: Any, p: float, q: float, link: str = "logit") -> np.ndarray:
    """Average Fisher information per record of the RR model, ``(1/n) sum_i w_i x_i x_i'`` with
    ``w = s^2 f^2 / (G (1-G))``, ``G = (1-q) + s F(x'beta)`` (spec §2.2). Shape ``(d, d)``."""
    X = _design_matrix(X)
    p, q = _pq(p, q)
    link = check_option(link, "link", LINKS)
    w = _weights(X, _beta(beta, X.shape[1]), p, q, link)
    return (X * w[:, None]).T @ X / X.shape[0]


def fisher_trace(X: Any, beta: Any, p: float, q: float, link: str = "logit") -> float:
    """``T(p, q) = mean_i s^2 f_i^2 ||x_i||^2 / (G_i (1 - G_i))``: the design objective of spec §2.3."""
    X = _design_matrix(X)
    p, q = _pq(p, q)
    link = check_option(link, "link", LINKS)
    w = _weights(X, _beta(beta, X.shape[1]), p, q, link)
    return float(np.mean(w * (X * X).sum(1)))


def design_criterion(X: Any, beta: Any, p: float, q: float, link: str = "logit", criterion: str = "trace") -> float:
    """Value to maximise: ``trace`` (tr I), ``D`` (log det I) or ``A`` (-tr I^-1) of :func:`fisher_information`.

    Examples
    --------
    >>> X = np.column_stack([np.ones(100), np.linspace(-1, 1, 100)])
    >>> design_criterion(X, [0.0, 1.0], 0.7, 0.7, criterion="D") < design_criterion(X, [0.0, 1.0], 0.9, 0.9,
    ...                                                                              criterion="D")
    True
    """
    criterion = check_option(criterion, "criterion", ("trace", "D", "A"))
    if criterion == "trace":
        return fisher_trace(X, beta, p, q, link)
    info = fisher_information(X, beta, p, q, link)
    if criterion == "D":
        sign, logdet = np.linalg.slogdet(info)
        return float(logdet) if sign > 0 else -math.inf
    if criterion == "A":
        try:
            return -float(np.trace(np.linalg.inv(info)))
        except np.linalg.LinAlgError:
            return -math.inf
    raise ValueError(f"criterion must be 'trace', 'D' or 'A', got {criterion!r}")


def _check_privacy_args(eps: Any, delta: Any) -> tuple[float, float]:
    """``eps`` a finite real > 0 (numpy scalars included), ``delta`` in [0, 1)."""
    return check_positive(eps, "eps"), check_real(delta, "delta", low=0.0, high=1.0, high_open=True)


def feasible_vertices(eps: float, delta: float = 0.0, informative_only: bool = True) -> list[RRChannel]:
    """Vertices of the (eps, delta)-label-DP polygon in the (p, q) square (spec §2.3).

    Every pair of the 8 lines (the four privacy constraints and the box) is intersected and the feasible points
    are kept. With ``informative_only`` the points with ``s = p + q - 1 <= 0`` (non-informative or mirror
    images of an informative vertex) are dropped.
    """
    eps, delta = _check_privacy_args(eps, delta)
    e = math.exp(eps)
    # a p + b q = c for each boundary line
    lines = [(1.0, e, e + delta), (e, 1.0, 1.0 - delta), (e, 1.0, e + delta), (1.0, e, 1.0 - delta),
             (1.0, 0.0, 0.0), (1.0, 0.0, 1.0), (0.0, 1.0, 0.0), (0.0, 1.0, 1.0)]
    pts: list[tuple[float, float]] = []
    for (a1, b1, c1), (a2, b2, c2) in itertools.combinations(lines, 2):
        det = a1 * b2 - a2 * b1
        if abs(det) < 1e-14:
            continue
        p = (c1 * b2 - c2 * b1) / det
        q = (a1 * c2 - a2 * c1) / det
        if -1e-12 <= p <= 1 + 1e-12 and -1e-12 <= q <= 1 + 1e-12 and np.all(_slack(p, q, eps, delta) >= -1e-12):
            p, q = min(max(p, 0.0), 1.0), min(max(q, 0.0), 1.0)
            if not any(abs(p - u) < 1e-10 and abs(q - v) < 1e-10 for u, v in pts):
                pts.append((p, q))
    if informative_only:
        pts = [(p, q) for p, q in pts if p + q - 1 > 1e-12]
    return [RRChannel(p, q) for p, q in sorted(pts)]


def optimal_design(X: Any, eps: float, delta: float = 0.0, beta: Any = None, link: str = "logit",
                   criterion: str = "trace", grid: int = 201) -> RRChannel:
    """The (eps, delta)-label-DP randomized-response channel maximising the design criterion (spec §2.3).

    For ``criterion="trace"`` the objective is convex in (p, q), so the maximum is at a vertex of the feasible
    polygon: the vertices are enumerated (ties go to the symmetric design). For ``"A"``/``"D"`` the vertices and
    a ``grid x grid`` search over the polygon are compared.

    Parameters
    ----------
    X : array, shape (n, d)
        Public covariates, including an intercept column if the model has one.
    eps, delta : float
        Privacy budget (``eps > 0``, ``0 <= delta < 1``).
    beta : array, shape (d,), optional
        Guess of the coefficients (the design depends on it for ``delta > 0``); None uses zeros, for which the
        symmetric design is optimal.
    link : {"logit", "probit", "cloglog"}

    Returns
    -------
    RRChannel
    """
    X = _design_matrix(X)
    beta = np.zeros(X.shape[1]) if beta is None else _beta(beta, X.shape[1])
    eps, delta = _check_privacy_args(eps, delta)
    link = check_option(link, "link", LINKS)
    criterion = check_option(criterion, "criterion", ("trace", "D", "A"))
    grid = check_int(grid, "grid", low=2)
    cands = feasible_vertices(eps, delta)
    if criterion != "trace":
        cands = cands + grid_design_candidates(eps, delta, grid)
    vals = [design_criterion(X, beta, c.p, c.q, link, criterion) for c in cands]
    best = max(vals)
    tied = [c for c, v in zip(cands, vals) if v >= best - 1e-12 * max(1.0, abs(best))]
    tied.sort(key=lambda c: abs(c.p - c.q))
    return tied[0]


def grid_design_candidates(eps: float, delta: float, grid: int = 201) -> list[RRChannel]:
    """All feasible informative points of a ``grid x grid`` lattice on the unit square."""
    eps, delta = _check_privacy_args(eps, delta)
    grid = check_int(grid, "grid", low=2)
    v = np.linspace(0.0, 1.0, grid)
    P, Q = np.meshgrid(v, v, indexing="ij")
    P, Q = P.ravel(), Q.ravel()
    ok = np.all(_slack(P, Q, eps, delta) >= -1e-12, axis=0) & (P + Q - 1 > 1e-12)
    return [RRChannel(float(p), float(q)) for p, q in zip(P[ok], Q[ok])]


def fisher_trace_many(X: Any, beta: Any, P: Any, Q: Any, link: str = "logit", chunk: int = 256) -> np.ndarray:
    """:func:`fisher_trace` for many channels at once: ``P``, ``Q`` of shape (m,) give shape (m,)."""
    X = _design_matrix(X)
    link = check_option(link, "link", LINKS)
    F, f = link_functions(link)(X @ _beta(beta, X.shape[1]))
    a = f * f * (X * X).sum(1)
    P = check_array(P, "P", ndim=1, low=0.0, high=1.0)
    Q = check_array(Q, "Q", shape=(P.shape[0],), low=0.0, high=1.0)
    chunk = check_int(chunk, "chunk", low=1)
    out = np.empty(P.shape[0])
    for i in range(0, P.shape[0], chunk):
        s = (P[i:i + chunk] + Q[i:i + chunk] - 1.0)[:, None]
        G = np.clip((1.0 - Q[i:i + chunk])[:, None] + s * F[None, :], 1e-15, 1 - 1e-15)
        out[i:i + chunk] = np.mean(s * s * a[None, :] / (G * (1.0 - G)), axis=1)
    return out


def grid_design(X: Any, eps: float, delta: float = 0.0, beta: Any = None, link: str = "logit",
                grid: int = 201) -> RRChannel:
    """Brute-force maximiser of the Fisher trace over a ``grid x grid`` lattice (a check of the vertex rule)."""
    X = _design_matrix(X)
    beta = np.zeros(X.shape[1]) if beta is None else _beta(beta, X.shape[1])
    link = check_option(link, "link", LINKS)
    cands = grid_design_candidates(eps, delta, grid)
    if not cands:
        raise ValueError(f"grid={grid} is too coarse: no informative (eps={eps}, delta={delta})-private channel lies "
                         "on it; use a finer grid")
    vals = fisher_trace_many(X, beta, [c.p for c in cands], [c.q for c in cands], link)
    return cands[int(np.argmax(vals))]


@dataclass
class TwoStageDesign:
    """Two-stage design for unknown beta (spec §2.3(b)).

    Stage 1 privatises a random ``stage1_fraction`` of the records with the symmetric (eps, delta) channel,
    fits beta on them, and stage 2 privatises the rest with the trace-optimal vertex at that estimate. Every
    label passes through exactly one (eps, delta)-label-DP channel and the stage-2 choice depends only on
    privatised labels, so the whole procedure is (eps, delta)-label-DP.

    Attributes (after :meth:`privatise`)
    ----------------------------------
    p_, q_ : ndarray, shape (n,)
        The channel applied to each record.
    stage1_ : ndarray of bool
    channel2_ : RRChannel
    """

    eps: float
    delta: float = 0.0
    link: str = "logit"
    stage1_fraction: float = 0.1

    def __post_init__(self) -> None:
        self.eps, self.delta = _check_privacy_args(self.eps, self.delta)
        self.link = check_option(self.link, "link", LINKS)
        self.stage1_fraction = check_probability(self.stage1_fraction, "stage1_fraction", open_low=True,
                                                 open_high=True)

    def privatise(self, X: Any, y: Any, rng: Any = None, fit_fn: Any = None) -> np.ndarray:
        """Release privatised labels for all records; ``fit_fn(X, y_tilde, p, q) -> beta`` fits stage 1
        (defaults to :class:`~icml25.label_dp.RRBinaryRegression` without intercept on ``X``)."""
        X = _design_matrix(X)
        y = check_binary_labels(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X and y must have the same number of rows; X has {X.shape[0]}, y has {y.shape[0]}")
        rng = check_random_state(rng)
        n = X.shape[0]
        n1 = max(1, int(math.ceil(self.stage1_fraction * n)))
        order = rng.permutation(n)
        stage1 = np.zeros(n, dtype=bool)
        stage1[order[:n1]] = True
        c1 = RRChannel.symmetric(self.eps, self.delta)
        y_tilde = np.empty(n, dtype=int)
        y_tilde[stage1] = randomized_response(y[stage1], c1.p, c1.q, rng)
        if fit_fn is None:
            from .regression import RRBinaryRegression

            def fit_fn(Xs: np.ndarray, ys: np.ndarray, p: Any, q: Any) -> np.ndarray:
                m = RRBinaryRegression(link=self.link, fit_intercept=False, fallback_ridge=1e-3)
                return m.fit(Xs, ys, sample_p=p, sample_q=q).coef_

        beta1 = fit_fn(X[stage1], y_tilde[stage1], c1.p, c1.q)
        c2 = optimal_design(X[~stage1], self.eps, self.delta, beta=beta1, link=self.link)
        y_tilde[~stage1] = randomized_response(y[~stage1], c2.p, c2.q, rng)
        self.stage1_, self.channel1_, self.channel2_, self.beta_stage1_ = stage1, c1, c2, beta1
        self.p_ = np.where(stage1, c1.p, c2.p)
        self.q_ = np.where(stage1, c1.q, c2.q)
        return y_tilde
