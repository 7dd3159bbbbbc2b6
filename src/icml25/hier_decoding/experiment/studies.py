"""The studies of the reproduction (spec §6), computation only: exactness on random trees, synthetic posteriors on
the real trees, ImCLEF07A with a noise-augmented softmax regression, timings. The claims are in ``stages.py``."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from icml25.core.progress import progress
from icml25.core.stats import bootstrap_ci

from .._softmax_regression import fit_softmax_regression, fit_temperature, softmax_logits, softmax_probs
from ..data import load_tree
from ..decision_rules import node_cost_argmin
from ..decoding import exhaustive_decode, get_metric
from ..heuristics import HEURISTICS, argmax_leaf_heuristic
from ..hf_subset_decoding import hf_beta_subset
from ..hierarchy import Hierarchy
from ..imclef import load_imclef
from ..metrics import HFBeta, LeafToLeafCost, MistakeSeverity, NodeToLeafCost, WuPalmer, Zhao
from ..synthetic import random_tree, synthetic_posteriors, weighted_path_cost

METRICS = ("accuracy", "hamming", "hf_0.5", "hf_1", "hf_2", "mistake_severity", "wu_palmer", "zhao")
#: heuristics that coincide with the optimum of a metric (reported as ties, spec §6 F1)
COINCIDING = {"accuracy": "H1 argmax leaf", "mistake_severity": "H3 threshold 0.5", "hamming": "H3 threshold 0.5"}


def _decode(met: Any, P: np.ndarray, stub: bool) -> np.ndarray:
    """The metric's optimal decoder, or (``stub``) the naive baseline that replaces it: argmax leaf."""
    return argmax_leaf_heuristic(P, met.hierarchy) if stub else met.decode(P)


# ----------------------------------------------------------------------------------------------- Q1 exactness
def exactness_check(n_trees: int, max_nodes: int, n_dists: int, seed: int, stub: bool = False) -> dict[str, Any]:
    """Decoders vs exhaustive search on random trees (3..max_nodes nodes), leaf probabilities ~ Dirichlet(0.3).

    ``stub`` replaces every optimal decoder (and the pruned D3) by argmax leaf: the naive baseline of the stub.
    """
    rng = np.random.default_rng(seed)
    worst = 0.0
    rows: dict[str, dict[str, float]] = {}
    prune_mismatch = 0
    stub_gap = 0.0
    for _ in progress(range(n_trees), "Q1 exactness"):
        h = random_tree(int(rng.integers(3, max_nodes + 1)), rng, max_children=int(rng.integers(2, 5)))
        P = rng.dirichlet(0.3 * np.ones(h.n_leaves), size=n_dists)
        C_leaf = rng.uniform(0, 1, (h.n_leaves, h.n_leaves))
        metrics = [get_metric(m, h) for m in METRICS] + [
            NodeToLeafCost(h, weighted_path_cost(h, rng)), LeafToLeafCost(h, C_leaf)]
        for met in metrics:
            space = {"subset": "subsets", "node": "nodes", "leaf": "leaves"}[met.prediction_space]
            if met.name == "accuracy":
                space = "subsets"  # the argmax leaf is optimal even among all node subsets
            _, best = exhaustive_decode(P, met, space)
            got = met.expected_score(P, _decode(met, P, stub), average=False)
            gap = float(np.abs(got - best).max())
            worst = max(worst, gap)
            r = rows.setdefault(met.name, {"metric": met.name, "space": space, "max_abs_gap": 0.0, "cases": 0})
            r["max_abs_gap"] = max(r["max_abs_gap"], gap)
            r["cases"] += len(P)
            if isinstance(met, HFBeta):
                naive = met.expected_score(P, HEURISTICS["H1 argmax leaf"](P, h), average=False)
                stub_gap = max(stub_gap, float((best - naive).max()))
        for met in (MistakeSeverity(h), WuPalmer(h), Zhao(h), NodeToLeafCost(h, weighted_path_cost(h, rng))):
            brute = node_cost_argmin(P, h, met.cost_matrix, pruning="none")
            if stub:
                pruned = auto = np.argmax(P, axis=1)  # leaf ids are node ids (leaves are indexed first)
            else:
                pruned = node_cost_argmin(P, h, met.cost_matrix, pruning="strict")
                auto = node_cost_argmin(P, h, met.cost_matrix, pruning="auto")
            prune_mismatch += int((brute != pruned).sum() + (brute != auto).sum())
    return {"max_abs_gap": worst, "prune_mismatches": prune_mismatch, "stub_gap": stub_gap,
            "rows": list(rows.values())}


# ----------------------------------------------------------------------------------------------- decoders compared
def compare_decoders(P: np.ndarray, h: Hierarchy, metrics: tuple[str, ...] = METRICS, y: np.ndarray | None = None,
                     stub: bool = False) -> dict[str, dict[str, Any]]:
    """Per metric: utilities (score, or −loss) of the optimal decoder (argmax leaf for ``stub``) and of H1–H7,
    expected and realised."""
    heur_ind = {name: f(P, h) for name, f in HEURISTICS.items()}
    heur = {name: h.indicator_to_node(Y) for name, Y in heur_ind.items()}  # node ids: fast score matrices
    out: dict[str, dict[str, Any]] = {}
    for m in metrics:
        met = get_metric(m, h)
        sign = 1.0 if met.greater_is_better else -1.0
        opt = _decode(met, P, stub)
        if met.prediction_space != "subset":
            opt = h.indicator_to_node(opt)
        preds = {"optimal": opt, **heur}
        exp, real = {}, ({} if y is not None else None)
        for k, v in preds.items():
            S = met.score_matrix(v)  # M(ŷ_i, l) for every leaf: expected and realised scores from one matrix
            exp[k] = sign * (P * S).sum(axis=1)
            if real is not None:
                real[k] = sign * S[np.arange(len(y)), y]
        opt_ind = _as_ind(opt, h)
        same = {k: bool((heur_ind[k] == opt_ind).all(axis=1).mean() > 0.999) for k in heur}
        out[m] = {"expected": exp, "realized": real, "coincides": same, "sign": sign}
    return out


def _as_ind(pred: np.ndarray, h: Hierarchy) -> np.ndarray:
    return h.indicator(pred) if pred.ndim == 1 else pred


def best_heuristic(res: dict[str, Any], key: str = "expected", exclude_coinciding: bool = False) -> str:
    """Name of the heuristic with the best mean utility (optionally skipping those equal to the optimum)."""
    cands = [k for k in HEURISTICS if not (exclude_coinciding and res["coincides"][k])]
    if not cands:
        cands = list(HEURISTICS)
    return max(cands, key=lambda k: float(np.mean(res[key][k])))


def synthetic_study(h: Hierarchy, n_samples: int, blurs: tuple[float, ...], seeds: list[int], stub: bool = False
                    ) -> dict[float, dict[str, dict[str, Any]]]:
    """Synthetic posteriors on a real tree (spec §5), decoders compared per blur level (samples of all seeds pooled)."""
    out: dict[float, dict[str, dict[str, Any]]] = {}
    for b in progress(list(blurs), "synthetic blur levels"):
        parts = []
        for s in seeds:
            P, y, _ = synthetic_posteriors(h, n_samples, b, np.random.default_rng([s, int(10 * b)]))
            parts.append(compare_decoders(P, h, METRICS, y, stub=stub))
        merged: dict[str, dict[str, Any]] = {}
        for m in METRICS:
            first = parts[0][m]
            merged[m] = {"sign": first["sign"],
                         "coincides": {k: all(p[m]["coincides"][k] for p in parts) for k in HEURISTICS},
                         "expected": {k: np.concatenate([p[m]["expected"][k] for p in parts]) for k in first["expected"]},
                         "realized": {k: np.concatenate([p[m]["realized"][k] for p in parts]) for k in first["realized"]}}
        out[b] = merged
    return out


def violations(res_by_metric: dict[str, dict[str, Any]], tol: float = 1e-9) -> int:
    """Number of (metric, heuristic, sample) with expected utility of the optimum < heuristic − tol."""
    n = 0
    for res in res_by_metric.values():
        opt = res["expected"]["optimal"]
        for k in HEURISTICS:
            n += int((opt < res["expected"][k] - tol).sum())
    return n


def expected_gain(res: dict[str, Any]) -> float:
    """Mean expected utility of the optimum minus that of the best heuristic."""
    best = best_heuristic(res, "expected")
    return float(np.mean(res["expected"]["optimal"]) - np.mean(res["expected"][best]))


# ----------------------------------------------------------------------------------------------- ImCLEF07A
def top_label_ece(P: np.ndarray, y: np.ndarray, n_bins: int = 15) -> float:
    """Expected calibration error of the top leaf: Σ_bins (n_b/n) |accuracy_b − mean confidence_b| (equal-width bins)."""
    conf = P.max(axis=1)
    correct = (P.argmax(axis=1) == y).astype(np.float64)
    bins = np.minimum((conf * n_bins).astype(np.int64), n_bins - 1)
    ece = 0.0
    for b in np.unique(bins):
        m = bins == b
        ece += m.mean() * abs(correct[m].mean() - conf[m].mean())
    return float(ece)


def imclef_study(n_train: int, sigma: float, seed: int, C: float, noise_copies: int, temperature: bool,
                 max_iter: int, stub: bool = False) -> dict[str, Any]:
    """Softmax regression on ImCLEF07A with train+test input noise σ, decoders compared on the test set."""
    rng = np.random.default_rng([seed, int(100 * sigma)])
    X, y, h = load_imclef("ImCLEF07A", "train")
    Xt, yt, _ = load_imclef("ImCLEF07A", "test", hierarchy=h)
    idx = rng.permutation(len(X))[: min(n_train, len(X))]
    X, y = X[idx], y[idx]
    mu, sd = X.mean(axis=0), X.std(axis=0) + 1e-9
    Xs, Xts = (X - mu) / sd, (Xt - mu) / sd
    n_fit = int(0.9 * len(Xs)) if temperature else len(Xs)
    Xa = np.vstack([Xs[:n_fit] + sigma * rng.standard_normal((n_fit, Xs.shape[1])) for _ in range(noise_copies)])
    ya = np.tile(y[:n_fit], noise_copies)
    t0 = time.perf_counter()
    W = fit_softmax_regression(Xa, ya, h.n_leaves, C=C, max_iter=max_iter)
    fit_s = time.perf_counter() - t0
    T = 1.0
    if temperature:
        Xv = Xs[n_fit:] + sigma * rng.standard_normal(Xs[n_fit:].shape)
        T = fit_temperature(softmax_logits(W, Xv), y[n_fit:])
    P = softmax_probs(softmax_logits(W, Xts + sigma * rng.standard_normal(Xts.shape)), T)
    res = compare_decoders(P, h, METRICS, yt, stub=stub)
    table = []
    summary: dict[str, Any] = {"fit_s": fit_s, "temperature": T, "leaf_accuracy": float((P.argmax(1) == yt).mean()),
                               "ece": top_label_ece(P, yt)}
    for m, r in res.items():
        sign = r["sign"]
        best = best_heuristic(r, "realized")
        opt = sign * float(np.mean(r["realized"]["optimal"]))
        bh = sign * float(np.mean(r["realized"][best]))
        arg = sign * float(np.mean(r["realized"]["H1 argmax leaf"]))
        summary[m] = {"optimal": opt, "best_heuristic": bh, "best_name": best, "argmax_leaf": arg,
                      "optimal_is_argmax": bool(r["coincides"]["H1 argmax leaf"]) if m == "accuracy" else None}
        table.append({"sigma": sigma, "seed": seed, "metric": m, "optimal": opt, "best heuristic": bh,
                      "which": best, "argmax leaf": arg})
    summary["table"] = table
    return summary


# ----------------------------------------------------------------------------------------------- F3 timing
def timing(h: Hierarchy, n_hf: int, n_d3: int, seed: int) -> dict[str, float]:
    """Wall time of D5 (hF_2) on ``n_hf`` samples and brute-force D3 (Wu-Palmer) on ``n_d3`` samples, blur 5."""
    P, _, _ = synthetic_posteriors(h, max(n_hf, n_d3), 5.0, np.random.default_rng(seed))
    t0 = time.perf_counter()
    hf_beta_subset(P[:n_hf], h, beta=2.0)
    t_hf = time.perf_counter() - t0
    C = WuPalmer(h).cost_matrix
    t0 = time.perf_counter()
    node_cost_argmin(P[:n_d3], h, C, pruning="none")
    t_d3 = time.perf_counter() - t0
    t0 = time.perf_counter()
    node_cost_argmin(P[:n_d3], h, C, pruning="auto")
    t_d3p = time.perf_counter() - t0
    return {"d5_hf2_s": t_hf, "d3_brute_s": t_d3, "d3_pruned_s": t_d3p}


# ----------------------------------------------------------------------------------------------- F1 per tree
def f1_tree(tree_name: str, n_samples: int, blurs: tuple[float, ...], seeds: list[int], n_boot: int,
            boot_seed: int, stub: bool = False) -> dict[str, Any]:
    """F1 on one tree: realised-score bootstrap CIs vs the best non-coinciding heuristic, expected gains per blur."""
    tree = load_tree(tree_name)
    rng = np.random.default_rng(boot_seed)
    res = synthetic_study(tree, n_samples, blurs, seeds, stub=stub)
    gains = {m: [expected_gain(res[b][m]) for b in blurs] for m in METRICS}
    rows, ci_fail, ci_cells = [], 0, 0
    for b in blurs:
        for m in METRICS:
            r = res[b][m]
            best = best_heuristic(r, "realized", exclude_coinciding=True)
            diff = r["realized"]["optimal"] - r["realized"][best]
            low = bootstrap_ci(diff, n_boot=n_boot, seed=rng, quantiles=(0.025, 0.975))[1]  # one stream per tree
            tie = m in COINCIDING
            if b >= 3 and not tie:
                ci_cells += 1
                ci_fail += int(low < 0)
            rows.append({"tree": tree_name, "blur": b, "metric": m,
                         "optimal": r["sign"] * float(np.mean(r["realized"]["optimal"])),
                         "best non-tie heuristic": best, "realized gain": float(diff.mean()), "CI95 low": low,
                         "expected gain": gains[m][blurs.index(b)], "tie": tie})
    growing = [m for m in METRICS if m not in COINCIDING]
    not_growing = sum(int(not gains[m][-1] > gains[m][0]) for m in growing)
    return {"rows": rows, "gains": gains, "ci_fail": ci_fail, "ci_cells": ci_cells, "not_growing": not_growing,
            "grow_cells": len(growing)}


def f2_runs(n_train: int, sigmas: tuple[float, ...], seeds: list[int], C: float, noise_copies: int,
            temperature: bool, max_iter: int, stub: bool = False) -> list[dict[str, Any]]:
    """Every (sigma, seed) ImCLEF07A run of F2, in order."""
    return [imclef_study(n_train, sigma, s, C, noise_copies, temperature, max_iter, stub) | {"sigma": sigma}
            for sigma in sigmas for s in seeds]
