"""Independent references for tiny networks: the exact minimum margin and a full-network SDP relaxation.

Neither reuses the bound-propagation code: big-M constants come from plain interval arithmetic here.

- :func:`exact_min` — ``min cᵀf(x)`` over ``‖x − x̂‖₂ ≤ ρ`` exactly: a mixed-integer program with the big-M
  ReLU encoding and the quadratic ball constraint (SCIP via ``pyscipopt``), or, without SCIP, enumeration of
  the activation patterns of the unstable neurons, each a convex second-order-cone program (cvxpy).
- :func:`lp_all` — the LP-All baseline of Table 1: the triangle relaxation of every ReLU with LP-tightened
  pre-activation bounds (one convex program per unstable neuron and side) and the ℓ2 ball as a second-order cone.
- :func:`sdp_full` — the Raghunathan-style SDP over ``P = [[1, vᵀ], [v, V]] ⪰ 0``, ``v = (x, a⁽¹⁾, …)``
  (spec §2.5, the BM-Full column of Table 1), solved with Clarabel; a lower bound on :func:`exact_min`.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .network import BoundedNet

__all__ = ["interval_bounds", "exact_min", "sdp_full", "lp_all"]


def interval_bounds(net: BoundedNet, x: np.ndarray, eps: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pre-activation bounds of every ReLU layer: exact for layer 1, interval arithmetic after (sound, loose)."""
    W = [w.numpy() for w in net.weights]
    b = [v.numpy() for v in net.biases]
    z = W[0] @ x + b[0]
    r = eps * np.linalg.norm(W[0], axis=1) * (1 + 1e-9)
    out = [(z - r, z + r)]
    for k in range(1, len(W) - 1):
        lo, up = np.maximum(out[-1][0], 0), np.maximum(out[-1][1], 0)
        mid, rad = (lo + up) / 2, (up - lo) / 2
        zc = W[k] @ mid + b[k]
        zr = np.abs(W[k]) @ rad
        out.append((zc - zr - 1e-9, zc + zr + 1e-9))
    return out


def _prepare(net: BoundedNet, x: Any, eps: float, c: Any) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(net, BoundedNet):
        raise TypeError(f"net must be a BoundedNet, got {type(net).__name__}")
    x = np.asarray(net.flatten_input(x)[0].numpy(), dtype=np.float64)
    c = np.asarray(c, dtype=np.float64).reshape(-1)
    if c.shape != (net.n_classes,):
        raise ValueError(f"c must have {net.n_classes} entries, got {c.shape}")
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    return x, c


def exact_min(net: BoundedNet, x: Any, eps: float, c: Any, solver: str = "auto", max_unstable: int = 16,
              time_limit: float = 120.0) -> float:
    """Exact ``min_{‖x' − x‖₂ ≤ eps} cᵀ f(x')`` for a tiny network.

    Parameters
    ----------
    net : BoundedNet
    x : array-like, one input
    eps : float
    c : array-like [q]
        Output specification (e.g. ``e_y − e_j``).
    solver : {'auto', 'scip', 'enumerate'}
        'auto' uses SCIP when ``pyscipopt`` is installed, else enumeration.
    max_unstable : int
        Enumeration refuses networks with more unstable neurons than this.

    Returns
    -------
    float
    """
    x, c = _prepare(net, x, eps, c)
    if solver == "auto":
        from icml25.core.optional import has

        solver = "scip" if has("pyscipopt") else "enumerate"
    if solver == "scip":
        return _exact_scip(net, x, eps, c, time_limit)
    if solver == "enumerate":
        return _exact_enumerate(net, x, eps, c, max_unstable)
    raise ValueError(f"solver must be 'auto', 'scip' or 'enumerate', got {solver!r}")


def _exact_scip(net: BoundedNet, x: np.ndarray, eps: float, c: np.ndarray, time_limit: float) -> float:
    import pyscipopt

    W = [w.numpy() for w in net.weights]
    b = [v.numpy() for v in net.biases]
    bnds = interval_bounds(net, x, eps)
    m = pyscipopt.Model()
    m.hideOutput()
    m.setParam("limits/time", time_limit)
    m.setParam("limits/gap", 0.0)
    m.setParam("limits/absgap", 1e-9)
    xs = [m.addVar(lb=x[i] - eps, ub=x[i] + eps) for i in range(len(x))]
    m.addCons(pyscipopt.quicksum((xs[i] - x[i]) * (xs[i] - x[i]) for i in range(len(x))) <= eps * eps)
    prev = xs
    for k in range(len(W) - 1):
        lo, up = bnds[k]
        acts = []
        for i in range(W[k].shape[0]):
            z = pyscipopt.quicksum(W[k][i, j] * prev[j] for j in range(len(prev)) if W[k][i, j] != 0) + b[k][i]
            if lo[i] >= 0:
                a = m.addVar(lb=0, ub=up[i])
                m.addCons(a == z)
            elif up[i] <= 0:
                a = m.addVar(lb=0, ub=0)
            else:
                a = m.addVar(lb=0, ub=up[i])
                d = m.addVar(vtype="B")
                m.addCons(a >= z)
                m.addCons(a <= z - lo[i] * (1 - d))
                m.addCons(a <= up[i] * d)
            acts.append(a)
        prev = acts
    wl = c @ W[-1]
    obj = pyscipopt.quicksum(wl[j] * prev[j] for j in range(len(prev))) + float(c @ b[-1])
    t = m.addVar(lb=-1e9, ub=1e9)
    m.addCons(t == obj)
    m.setObjective(t, "minimize")
    m.optimize()
    if m.getStatus() != "optimal":
        raise RuntimeError(f"SCIP did not prove optimality (status {m.getStatus()})")
    # the dual bound is a proven lower bound of the true minimum (the primal value may sit above it by the gap)
    return float(m.getDualbound())


def _exact_enumerate(net: BoundedNet, x: np.ndarray, eps: float, c: np.ndarray, max_unstable: int) -> float:
    import cvxpy as cp

    W = [w.numpy() for w in net.weights]
    b = [v.numpy() for v in net.biases]
    bnds = interval_bounds(net, x, eps)
    unstable = [(k, i) for k, (lo, up) in enumerate(bnds) for i in range(len(lo)) if lo[i] < 0 < up[i]]
    if len(unstable) > max_unstable:
        raise ValueError(f"{len(unstable)} unstable neurons exceed max_unstable={max_unstable} for enumeration")
    best = np.inf
    for pattern in itertools.product((0.0, 1.0), repeat=len(unstable)):
        on = [(bnds[k][0] >= 0).astype(float) for k in range(len(bnds))]
        for (k, i), s in zip(unstable, pattern):
            on[k][i] = s
        xv = cp.Variable(len(x))
        cons = [cp.norm(xv - x, 2) <= eps]
        a = xv
        for k in range(len(W) - 1):
            z = W[k] @ a + b[k]
            cons += [cp.multiply(2 * on[k] - 1, z) >= 0]  # z ≥ 0 on active, ≤ 0 on inactive neurons
            a = cp.multiply(on[k], z)
        prob = cp.Problem(cp.Minimize(c @ (W[-1] @ a + b[-1])), cons)
        prob.solve(solver="CLARABEL")
        if prob.status in ("optimal", "optimal_inaccurate") and prob.value < best:
            best = float(prob.value)
    return best


def sdp_full(net: BoundedNet, x: Any, eps: float, c: Any, triangle: bool = True) -> float:
    """Full-network SDP lower bound of ``cᵀf`` over the ball (spec §2.5; Raghunathan et al. 2018 style).

    Moment matrix ``P = [[1, vᵀ], [v, V]] ⪰ 0`` over ``v = (x, a⁽¹⁾, …, a⁽ᴺ⁻¹⁾)`` with ``a ≥ 0``, ``a ≥ Wa_prev + b``,
    ``diag(V_aa) = diag(W V_{prev,a}) + b ⊙ a`` (ReLU complementarity), ``tr V_xx − 2x̂ᵀx + ‖x̂‖² ≤ ρ²`` and,
    with ``triangle``, the triangle cuts from interval bounds. Solved by Clarabel.

    Returns
    -------
    float
        A valid lower bound (up to solver tolerance) on :func:`exact_min`.
    """
    import cvxpy as cp

    x, c = _prepare(net, x, eps, c)
    W = [w.numpy() for w in net.weights]
    b = [v.numpy() for v in net.biases]
    sizes = [len(x)] + [w.shape[0] for w in W[:-1]]
    offs = np.concatenate([[1], 1 + np.cumsum(sizes)])
    D = int(offs[-1])
    P = cp.Variable((D, D), symmetric=True)
    idx = [slice(int(offs[k]), int(offs[k + 1])) for k in range(len(sizes))]
    v = P[0, :]
    cons = [P >> 0, P[0, 0] == 1]
    xv = v[idx[0]]
    cons.append(cp.trace(P[idx[0], idx[0]]) - 2 * x @ xv + x @ x <= eps * eps)
    bnds = interval_bounds(net, x, eps) if triangle else None
    for k in range(len(W) - 1):
        a, prev = v[idx[k + 1]], v[idx[k]]
        z = W[k] @ prev + b[k]
        cons += [a >= 0, a >= z]
        cross = P[idx[k + 1], idx[k]]
        cons.append(cp.diag(P[idx[k + 1], idx[k + 1]]) == cp.sum(cp.multiply(W[k], cross), axis=1)
                    + cp.multiply(b[k], a))
        if bnds is not None:
            lo, up = bnds[k]
            un = (lo < 0) & (up > 0)
            slope = np.where(un, up / np.where(un, up - lo, 1.0), (lo >= 0).astype(float))
            icpt = np.where(un, -up * lo / np.where(un, up - lo, 1.0), 0.0)
            cons.append(a <= cp.multiply(slope, z) + icpt + 1e-9)
    last = v[idx[-1]]
    prob = cp.Problem(cp.Minimize(c @ (W[-1] @ last + b[-1])), cons)
    prob.solve(solver="CLARABEL")
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"SDP solver returned status {prob.status}")
    return float(prob.value)


def lp_all(net: BoundedNet, x: Any, eps: float, C: Any) -> np.ndarray:
    """LP-All (Table 1 baseline): lower bounds of ``C f`` over the ball from the triangle relaxation of every ReLU.

    Pre-activation bounds are tightened layer by layer by the same relaxation (minimise and maximise every neuron
    that interval arithmetic leaves unstable; stable neurons stay stable under any tighter bound); the ball is the
    second-order cone ``‖x − x̂‖₂ ≤ ρ``. Solved with cvxpy/Clarabel; small nets only (2·n convex programs/layer).

    Parameters
    ----------
    net : BoundedNet
    x : array-like, one input
    eps : float
        ℓ2 radius.
    C : array-like [m, q]
        Specification rows.

    Returns
    -------
    ndarray [m]
        Lower bounds (valid up to solver tolerance).
    """
    import cvxpy as cp

    x, _ = _prepare(net, x, eps, np.zeros(net.n_classes))
    C = np.atleast_2d(np.asarray(C, dtype=np.float64))
    if C.shape[1] != net.n_classes:
        raise ValueError(f"C must have {net.n_classes} columns, got shape {C.shape}")
    W = [w.cpu().numpy() for w in net.weights]
    b = [v.cpu().numpy() for v in net.biases]
    bnds = interval_bounds(net, x, eps)

    def relaxed(k: int) -> tuple[Any, list]:
        """The relaxed network up to the input of affine layer k: (z⁽ᵏ⁾ expression, constraints)."""
        xv = cp.Variable(len(x))
        cons = [cp.norm(xv - x, 2) <= eps]
        a = xv
        for j in range(k):
            z = W[j] @ a + b[j]
            lo, up = bnds[j]
            aj = cp.Variable(len(lo))
            un = (lo < 0) & (up > 0)
            slope = np.where(un, up / np.where(un, up - lo, 1.0), (lo >= 0).astype(float))
            icpt = np.where(un, -up * lo / np.where(un, up - lo, 1.0), 0.0)
            # triangle: a ≥ 0, a ≥ z (active or unstable), a ≤ slope·z + intercept (a = z active, a = 0 inactive)
            cons += [aj >= 0, aj >= cp.multiply(((lo >= 0) | un).astype(float), z), aj <= cp.multiply(slope, z) + icpt]
            a = aj
        return W[k] @ a + b[k], cons

    for k in range(1, len(W) - 1):  # tighten the bounds of ReLU layer k (layer 0 is exact already)
        z, cons = relaxed(k)
        obj = cp.Parameter(W[k].shape[0])
        prob = cp.Problem(cp.Minimize(obj @ z), cons)
        lo, up = bnds[k][0].copy(), bnds[k][1].copy()
        for i in np.nonzero((lo < 0) & (up > 0))[0]:
            for sign in (1.0, -1.0):
                e = np.zeros(W[k].shape[0])
                e[i] = sign
                obj.value = e
                prob.solve(solver="CLARABEL")
                if prob.status in ("optimal", "optimal_inaccurate"):
                    if sign > 0:
                        lo[i] = max(lo[i], prob.value - 1e-7)
                    else:
                        up[i] = min(up[i], -prob.value + 1e-7)
        bnds[k] = (lo, up)
    z, cons = relaxed(len(W) - 1)
    obj = cp.Parameter(net.n_classes)
    prob = cp.Problem(cp.Minimize(obj @ z), cons)
    out = []
    for row in C:
        obj.value = row
        prob.solve(solver="CLARABEL")
        if prob.status not in ("optimal", "optimal_inaccurate"):
            raise RuntimeError(f"LP-All solver returned status {prob.status}")
        out.append(float(prob.value))
    return np.array(out)
