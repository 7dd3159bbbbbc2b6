"""Speed of the vectorised decoders on the tieredImageNet-H tree (843 nodes, 608 leaves), 10,000 samples.

Compares, in the same run:
- D5 (hF_2 subset rule): vectorised ``hf_beta_subset`` vs a straightforward per-sample loop of the same rule
  (same candidates, Python loop over k and over candidates, as in the official code);
- D3 (Wu-Palmer, soft pruning): vectorised pruned decoder vs a per-sample loop of the same pruning, and vs the
  brute-force ``argmin(P Cᵀ)``.
The per-sample loops run on a subset and are reported per sample. Times are CPU seconds of this process
(``time.process_time``; one BLAS thread), so that the ratios do not depend on other jobs. Run:
``.venv/bin/python benchmarks/hier_decoding/bench_decoding.py``
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from icml25.hier_decoding import WuPalmer, hf_beta_subset, node_cost_argmin, synthetic_posteriors  # noqa: E402
from icml25.hier_decoding.cost_pruning import surviving_candidates  # noqa: E402
from icml25.hier_decoding.data import load_tree  # noqa: E402
from icml25.hier_decoding.hf_subset_decoding import hf_candidate_threshold  # noqa: E402

N, N_LOOP, BLUR, BETA = 10_000, 60, 5.0, 2.0


def loop_hf(P: np.ndarray, h, beta: float) -> np.ndarray:
    """Per-sample D5: for each k, Δ_k over the candidates with a Python loop, then the best top-k."""
    b2 = beta**2
    leaf_b = b2 * (h.depth[: h.n_leaves] + 1.0)
    q = hf_candidate_threshold(h, beta)
    out = np.zeros((len(P), h.n_nodes), dtype=bool)
    for i, p in enumerate(P):
        pn = p @ h.leaf_path_matrix
        cand = [n for n in range(h.n_nodes) if pn[n] >= q[n] * 0.5 or n == h.root]  # a superset of the certified set
        leaves = [h.leaves_below(n) for n in cand]
        best_v, best_set = -1.0, None
        for k in range(1, len(cand) + 1):
            delta = np.array([(1 + b2) * np.sum(p[ls] / (k + leaf_b[ls])) for ls in leaves])
            top = np.argsort(-delta, kind="stable")[:k]
            v = delta[top].sum()
            if v > best_v:
                best_v, best_set = v, [cand[j] for j in top]
        out[i, best_set] = True
    return out


def loop_d3(P: np.ndarray, h, C: np.ndarray, consts) -> np.ndarray:
    """Per-sample pruned D3: Python loop over nodes for rules (a)/(b), then argmin over the survivors."""
    out = np.empty(len(P), dtype=np.int64)
    for i, p in enumerate(P):
        pn = p @ h.leaf_path_matrix
        alive = np.ones(h.n_nodes, dtype=bool)
        for n in range(h.n_nodes):
            par = h.parent[n]
            if par < 0:
                continue
            ref = pn[consts.top_ancestor[n]]
            mass = max(ref - pn[n], 0.0)
            if consts.m_out[n] * mass - consts.M_in[n] * pn[n] > consts.tol:
                alive[n] = False
            if consts.M_out[n] * mass - consts.m_in[n] * pn[n] < -consts.tol:
                alive[par] = False
        cands = h.tie_order[alive[h.tie_order]]
        out[i] = cands[np.argmin(C[cands] @ p)]
    return out


def timed(f, *a, **k):
    """Result and CPU seconds of the call (process time: robust on a machine shared with other jobs)."""
    t0 = time.process_time()
    r = f(*a, **k)
    return r, time.process_time() - t0


def main() -> None:
    h = load_tree("tieredimagenet")
    P, _, _ = synthetic_posteriors(h, N, BLUR, 0)
    print(f"tieredImageNet-H: {h.n_nodes} nodes, {h.n_leaves} leaves; {N} synthetic samples at blur {BLUR}")

    Y, t_vec = timed(hf_beta_subset, P, h, BETA)
    Y_loop, t_loop = timed(loop_hf, P[:N_LOOP], h, BETA)
    assert (Y[:N_LOOP] == Y_loop).all(), "per-sample loop and vectorised D5 disagree"
    r_vec, r_loop = N / t_vec, N_LOOP / t_loop
    print(f"D5 hF_{BETA:g}: vectorised {r_vec:9.0f} samples/s ({t_vec:.2f} s for {N}); per-sample loop "
          f"{r_loop:7.1f} samples/s ({t_loop / N_LOOP * 1e3:.1f} ms/sample) -> ratio {r_vec / r_loop:.0f}x "
          f"(target >= 50x)")
    _, t2000 = timed(hf_beta_subset, P[:2000], h, BETA)
    print(f"F3: D5 on 2,000 samples {t2000:.2f} s (limit 60 s)")

    m = WuPalmer(h)
    C, consts = m.cost_matrix, m.pruning_constants()
    nodes, t_pr = timed(lambda: h.indicator_to_node(m.decode(P)))
    nodes_bf, t_bf = timed(node_cost_argmin, P, h, C, pruning="none")
    nodes_loop, t_lp = timed(loop_d3, P[:N_LOOP * 5], h, C, consts)
    assert (nodes == nodes_bf).all() and (nodes[: N_LOOP * 5] == nodes_loop).all()
    alive = surviving_candidates(h.node_probs(P), h, consts).sum(1)
    r_pr, r_lp = N / t_pr, N_LOOP * 5 / t_lp
    print(f"D3 Wu-Palmer pruned: vectorised {r_pr:9.0f} samples/s ({t_pr:.2f} s); per-sample loop {r_lp:7.1f} "
          f"samples/s -> ratio {r_pr / r_lp:.0f}x; mean surviving candidates {alive.mean():.1f} of {h.n_nodes}")
    print(f"D3 brute force argmin(P C^T): {N / t_bf:9.0f} samples/s ({t_bf:.2f} s; F3 limit 10 s); "
          f"pruned / brute-force speed {t_bf / t_pr:.2f}x")


if __name__ == "__main__":
    main()
