"""Reproduction of 'To Each Metric Its Decoding' (ICML 2025): spec §6 claims Q1–Q3 (quick) and F1–F3 (full)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icml25.core import Report, Scale, reproduction
from icml25.core.registry import reproduction_stub
from icml25.core.validation import check_int, check_positive, check_real

from ._experiments import (
    METRICS,
    exactness_check,
    expected_gain,
    f1_tree,
    f2_runs,
    imclef_study,
    load_tree,
    synthetic_study,
    timing,
    violations,
)


@dataclass(frozen=True)
class Config:
    n_trees: int = 200  # Q1: random trees (3..max_tree_nodes nodes)
    max_tree_nodes: int = 14  # Q1: largest random tree (all 2^n subsets are enumerated)
    dists_per_tree: int = 2  # Q1: Dirichlet(0.3) leaf distributions per tree
    q2_samples: int = 150  # Q2: synthetic samples per blur level on tieredImageNet-H
    q2_blurs: tuple[float, ...] = (0.0, 5.0)  # Q2: blur levels
    f1_trees: tuple[str, ...] = ("tieredimagenet",)  # F1: trees (tieredimagenet, inat19)
    f1_samples: int = 300  # F1: synthetic samples per blur level and seed
    f1_blurs: tuple[float, ...] = (0.0, 3.0, 5.0)  # F1: blur levels
    f1_seeds: int = 1  # F1: seeds per blur level (samples pooled)
    n_bootstrap: int = 300  # F1: paired bootstrap resamples
    q3_train_rows: int = 3000  # Q3: ImCLEF07A training subset
    f2_train_rows: int = 3000  # F2: ImCLEF07A training rows (10,000 = all)
    f2_sigmas: tuple[float, ...] = (2.0,)  # F2: input-noise levels (train and test)
    f2_seeds: int = 1  # F2: seeds per noise level
    lr_C: float = 0.05  # inverse L2 strength of the softmax regression (scikit-learn scaling)
    noise_copies: int = 2  # noisy copies of each training row (noise augmentation)
    temperature_scaling: bool = True  # fit a temperature on a 10% noisy held-out split
    lr_max_iter: int = 200  # L-BFGS iterations of the softmax regression
    timing_hf_samples: int = 2000  # F3: D5 (hF_2) samples on tieredImageNet-H
    timing_d3_samples: int = 10000  # F3: brute-force D3 samples
    n_workers: int = 1  # processes for the F1 trees and F2 runs (results do not depend on it)

    def __post_init__(self) -> None:
        for name in ("n_trees", "dists_per_tree", "q2_samples", "f1_samples", "f1_seeds", "n_bootstrap",
                     "q3_train_rows", "f2_train_rows", "f2_seeds", "noise_copies", "lr_max_iter",
                     "timing_hf_samples", "timing_d3_samples", "n_workers"):
            check_int(getattr(self, name), name, low=1)
        check_int(self.max_tree_nodes, "max_tree_nodes", low=3, high=18)  # 2^n subsets are enumerated
        check_int(self.q3_train_rows, "q3_train_rows", low=100)
        check_int(self.f2_train_rows, "f2_train_rows", low=100)
        check_positive(self.lr_C, "lr_C")
        if not isinstance(self.temperature_scaling, bool):
            raise TypeError(f"temperature_scaling must be True or False, got {self.temperature_scaling!r}")
        for name in ("q2_blurs", "f1_blurs", "f2_sigmas"):
            vals = getattr(self, name)
            if isinstance(vals, (str, bytes)) or not hasattr(vals, "__len__") or len(vals) == 0:
                raise ValueError(f"{name} must be a non-empty tuple of numbers >= 0, got {vals!r}")
            for v in vals:
                check_real(v, name, low=0.0)
        for name in ("q2_blurs", "f1_blurs"):
            if len(set(getattr(self, name))) < 2:
                raise ValueError(f"{name} needs at least two distinct blur levels (gains are compared across "
                                 f"blur), got {getattr(self, name)!r}")
        if not self.f1_trees or any(t not in ("tieredimagenet", "inat19") for t in self.f1_trees):
            raise ValueError(f"f1_trees must be a non-empty tuple of 'tieredimagenet'/'inat19', got {self.f1_trees!r}")
        if 2.0 not in self.f2_sigmas:
            raise ValueError(f"f2_sigmas must contain 2.0 (the F2 claims are at sigma = 2), got {self.f2_sigmas!r}")

    @classmethod
    def quick(cls) -> Config:
        return cls()

    @classmethod
    def full(cls) -> Config:
        return cls(f1_trees=("tieredimagenet", "inat19"), f1_samples=5000, f1_blurs=(0.0, 1.0, 2.0, 3.0, 4.0, 5.0),
                   f1_seeds=5, n_bootstrap=1000, f2_train_rows=10000, f2_sigmas=(0.0, 1.0, 2.0), f2_seeds=3,
                   n_workers=3)

    @classmethod
    def paper(cls) -> Config:
        """The paper's setting as far as it is known (spec §3: the code's scripts; the numeric tables were not
        readable): both trees, blur levels 0-10, nine posterior sources. The paper decodes the outputs of 9
        torchvision ImageNet models on the real test images, which do not ship: our posteriors stay synthetic."""
        return cls(f1_trees=("tieredimagenet", "inat19"),  # the paper's two hierarchies (spec §3)
                   f1_samples=10000,  # paper's test-set size not read: 10,000 synthetic samples per blur and seed
                   f1_blurs=tuple(float(b) for b in range(11)),  # the paper's 11 blur levels 0..10
                   f1_seeds=9,  # one synthetic posterior seed per model of the paper's 9 ImageNet models
                   n_bootstrap=1000,  # as full
                   f2_train_rows=10000, f2_sigmas=(0.0, 1.0, 2.0), f2_seeds=3,  # ImCLEF07A is ours, not the paper's
                   n_workers=3)

    def plan(self) -> Any:
        """The dry-run plan (nothing is computed)."""
        from ._plan import hier_decoding_plan

        return hier_decoding_plan(self)


def _run_jobs(jobs: list, n_workers: int) -> list:
    """Run ``(function, args)`` jobs, in worker processes when ``n_workers > 1`` (same results either way)."""
    if n_workers <= 1 or len(jobs) <= 1:
        return [f(*a) for f, a in jobs]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=n_workers, mp_context=mp.get_context("spawn")) as ex:
        futures = [ex.submit(f, *a) for f, a in jobs]
        return [fu.result() for fu in futures]


def _figure(gains: dict[str, dict[str, list[float]]], blurs: tuple[float, ...]):
    from icml25.core.plotting import new_figure

    fig, axes = new_figure(ncols=len(gains))
    axes = np.atleast_1d(axes)
    for ax, (tree, per_metric) in zip(axes, gains.items()):
        for m, g in per_metric.items():
            ax.plot(blurs, g, marker="o", label=m)
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xlabel("blur level b (synthetic ambiguity)")
        ax.set_ylabel("expected gain over best heuristic (metric units)")
        ax.set_title(tree)
        ax.legend(fontsize=7)
    return fig


@reproduction(slug="hier_decoding",
              title="To Each Metric Its Decoding: Post-Hoc Optimal Decision Rules of Probabilistic Hierarchical "
                    "Classifiers",
              arxiv="2506.01552", extras=("plot",), config=Config)
def reproduce(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """Spec §6: exactness (Q1), synthetic posteriors (Q2, F1), ImCLEF07A (Q3, F2), timings (F3)."""
    return _run(scale, seed, config, stub=False)


@reproduction_stub(slug="hier_decoding")
def reproduce_stub(scale: Scale, seed: int, out: Path, config: Config) -> Report:
    """The reproduction with every optimal decoder (and pruned D3) replaced by argmax leaf, the naive baseline."""
    return _run(scale, seed, config, stub=True)


#: ECE of the top leaf above which the ImCLEF07A model counts as miscalibrated (our competence bar, not the
#: paper's): the Bayes rule is optimal under the model's probabilities, so its gains mean nothing without it
ECE_MAX = 0.1
NO_PAPER_NUMBERS = ("The paper's numeric tables were not reachable offline (spec §3): no claim has a paper value; "
                    "'reference' holds the spec's own prototype runs where one exists, and every claim states the "
                    "paper's qualitative result it tests. Losses/costs: lower is better.")


def _run(scale: Scale, seed: int, cfg: Config, stub: bool) -> Report:
    report = Report(slug="hier_decoding", title="To Each Metric Its Decoding (Plaud et al., ICML 2025)")
    if stub:
        report.notes.append("STUB: every optimal decoder replaced by argmax leaf (the naive baseline).")
    # ---------------------------------------------------------------- Q1 exactness vs exhaustive search
    ex = exactness_check(cfg.n_trees, cfg.max_tree_nodes, cfg.dists_per_tree, seed, stub=stub)
    report.add_table("q1_exactness", ex["rows"])
    # fails if: any decoder is not the Bayes rule (a heuristic, a wrong Δ_k, an invalid hF candidate pruning —
    # the official q_β constant alone loses 0.015 hF on a 5-node tree)
    report.add_claim("Q1", "D1-D5 reach the exhaustive optimum (all nodes / all 2^|N| subsets) on random trees",
                     None, ex["max_abs_gap"], "<=", 1e-9, kind="paper", scale=Scale.QUICK, unit="|gap|",
                     aggregate="max", headline=True,
                     note=f"paper: exact optimality theorems; {cfg.n_trees} trees, {cfg.dists_per_tree} "
                          f"Dirichlet(0.3) draws each; argmax leaf misses the hF optimum by up to "
                          f"{ex['stub_gap']:.3f}")
    # fails if: the pruning constants are wrong (official bug: max initialised to +inf, root's children skipped)
    # and remove a node that is optimal
    report.add_claim("Q1b", "pruned D3 picks the brute-force node (Wu-Palmer, Zhao, mistake severity, random "
                     "strictly reasonable cost)", None, ex["prune_mismatches"], "<=", 0, kind="paper",
                     scale=Scale.QUICK, unit="mismatches", aggregate="max",
                     note="paper: the pruning rule removes only suboptimal nodes (theorem)")
    # ---------------------------------------------------------------- Q2 synthetic posteriors, tieredImageNet-H
    tiered = load_tree("tieredimagenet")
    q2 = synthetic_study(tiered, cfg.q2_samples, cfg.q2_blurs, [seed], stub=stub)
    b_lo, b_hi = min(cfg.q2_blurs), max(cfg.q2_blurs)
    n_viol = sum(violations(q2[b]) for b in cfg.q2_blurs)
    g = {b: {m: expected_gain(q2[b][m]) for m in METRICS} for b in cfg.q2_blurs}
    # fails if: a decoder is optimal only on average or on small trees (e.g. hF pruning that drops a candidate on
    # the 843-node tree), or expected scores are computed with the wrong node probabilities
    report.add_claim("Q2a", "per sample, the optimal rule's expected score is >= every heuristic H1-H7, every metric",
                     None, n_viol, "<=", 0, kind="mechanism", scale=Scale.QUICK, unit="violations", aggregate="max",
                     note=f"{cfg.q2_samples} samples x {len(cfg.q2_blurs)} blur levels x 8 metrics x 7 heuristics")
    # fails if: hF_2 decoding returns a single node or leaf (no gain over the node heuristics)
    report.add_claim("Q2b", f"mean expected hF_2 gain over the best heuristic at blur {b_hi:g}", None,
                     g[b_hi]["hf_2"], ">=", 0.015, kind="paper", scale=Scale.QUICK, reference_value=0.027,
                     reference_source="spec §6 prototype run",
                     note="paper: optimal decoding beats every heuristic for its metric; threshold from spec §6")
    # fails if: hF_1 subset decoding is replaced by a single-node rule
    report.add_claim("Q2c", f"mean expected hF_1 gain over the best heuristic at blur {b_hi:g}", None,
                     g[b_hi]["hf_1"], ">=", 0.002, kind="paper", scale=Scale.QUICK, reference_value=0.006,
                     reference_source="spec §6 prototype run", note="threshold from spec §6")
    grows = all(0.0 <= g[b_lo][m] < g[b_hi][m] for m in ("hf_1", "hf_2"))
    # fails if: the gain does not grow with ambiguity (e.g. the optimum collapses to argmax, gains 0 at both blurs)
    report.add_claim("Q2d", f"hF gains are >= 0 at blur {b_lo:g} and strictly smaller than at blur {b_hi:g}", None,
                     grows, "is_true", None, kind="paper", scale=Scale.QUICK, aggregate="all",
                     note=f"paper: the margin grows with blur; hF_1 {g[b_lo]['hf_1']:.4f} -> {g[b_hi]['hf_1']:.4f}; "
                          f"hF_2 {g[b_lo]['hf_2']:.4f} -> {g[b_hi]['hf_2']:.4f}")
    report.add_table("q2_expected_gain", [{"blur": b, **{m: g[b][m] for m in METRICS}} for b in cfg.q2_blurs])
    # ---------------------------------------------------------------- Q3 ImCLEF07A, sigma = 2
    q3 = imclef_study(cfg.q3_train_rows, 2.0, seed, cfg.lr_C, cfg.noise_copies, cfg.temperature_scaling,
                      cfg.lr_max_iter, stub=stub)
    report.add_table("q3_imclef_sigma2", q3["table"])
    # fails if: the classifier is not trained with matched noise / not temperature-scaled (over-confident)
    report.add_claim("Q3_cal", "ImCLEF07A, sigma=2: the classifier is calibrated (top-leaf ECE, 15 bins)", None,
                     q3["ece"], "<=", ECE_MAX, kind="check", scale=Scale.QUICK, aggregate="max",
                     note=f"precondition of Q3a/Q3b (our bar, not the paper's); leaf accuracy "
                          f"{q3['leaf_accuracy']:.3f}, temperature {q3['temperature']:.2f}")
    hf2 = q3["hf_2"]
    # fails if: the hF_2 decoder is not better than every heuristic on real (calibrated) probabilities
    report.add_claim("Q3a", "ImCLEF07A, sigma=2: hF_2(optimal) - max_H hF_2(H)", None,
                     hf2["optimal"] - hf2["best_heuristic"], ">=", 0.02, kind="paper", scale=Scale.QUICK,
                     requires=["Q3_cal"], reference_value=0.040, reference_source="spec §6 prototype run (sklearn LR)",
                     note=f"optimal {hf2['optimal']:.3f} vs {hf2['best_name']} {hf2['best_heuristic']:.3f}; "
                          "threshold from spec §6")
    ms = q3["mistake_severity"]
    # fails if: mistake severity is decoded as the argmax leaf instead of the deepest node with p > 1/2
    report.add_claim("Q3b", "ImCLEF07A, sigma=2: mistake severity(optimal) - argmax leaf", None,
                     ms["optimal"] - ms["argmax_leaf"], "<=", -0.2, kind="paper", scale=Scale.QUICK,
                     requires=["Q3_cal"], reference_value=-0.39, reference_source="spec §6 prototype run",
                     note=f"optimal {ms['optimal']:.3f} vs argmax leaf {ms['argmax_leaf']:.3f}; threshold from "
                          "spec §6")
    # ---------------------------------------------------------------- F1 (per tree) and F2 (ImCLEF07A), in parallel
    seeds = [seed + 1000 * s for s in range(cfg.f1_seeds)]
    f2_seeds = [seed + s for s in range(cfg.f2_seeds)]
    reuse_q3 = cfg.f2_train_rows == cfg.q3_train_rows and 2.0 in cfg.f2_sigmas
    jobs = [(f1_tree, (name, cfg.f1_samples, cfg.f1_blurs, seeds, cfg.n_bootstrap, seed + 7 * i, stub))
            for i, name in enumerate(cfg.f1_trees)]
    f2_sigmas = tuple(sg for sg in cfg.f2_sigmas if not (reuse_q3 and sg == 2.0 and cfg.f2_seeds == 1))
    if f2_sigmas:
        jobs.append((f2_runs, (cfg.f2_train_rows, f2_sigmas, f2_seeds, cfg.lr_C, cfg.noise_copies,
                               cfg.temperature_scaling, cfg.lr_max_iter, stub)))
    results = _run_jobs(jobs, cfg.n_workers)
    f1 = results[: len(cfg.f1_trees)]
    report.add_table("f1_synthetic", [r for t in f1 for r in t["rows"]])
    ci_fail, ci_cells = sum(t["ci_fail"] for t in f1), sum(t["ci_cells"] for t in f1)
    not_growing, grow_cells = sum(t["not_growing"] for t in f1), sum(t["grow_cells"] for t in f1)
    # fails if: the optimum is not better than the best non-coinciding heuristic on realised scores (y ~ p)
    report.add_claim("F1a", "synthetic posteriors, b >= 3: paired bootstrap 95% CI of (optimal - best heuristic) "
                     "excludes negative values, every non-tie metric and tree", None,
                     ci_fail, "<=", 0, kind="paper", scale=Scale.FULL, unit="failing cells", aggregate="max",
                     headline=True,
                     note=f"paper: the optimal rule is best for its metric at every blur; {ci_cells} cells; ties "
                          "(reported, not tested): accuracy=argmax leaf, mistake severity and Hamming = threshold 0.5")
    # fails if: the gain does not grow with blur for some (tree, metric)
    report.add_claim("F1b", "the expected gain over the best heuristic grows from the lowest to the highest blur",
                     None, not_growing, "<=", 0, kind="paper", scale=Scale.FULL, unit="metrics not growing",
                     aggregate="max", headline=True, note=f"paper: the margin grows with blur; {grow_cells} (tree, metric) pairs")
    if not stub:
        report.add_figure("gain_vs_blur", _figure({n: t["gains"] for n, t in zip(cfg.f1_trees, f1)}, cfg.f1_blurs))
    runs = (results[-1] if f2_sigmas else []) + ([q3 | {"sigma": 2.0}] if reuse_q3 and cfg.f2_seeds == 1 else [])
    report.add_table("f2_imclef", [row for r in runs for row in r["table"]])
    at2 = [r for r in runs if r["sigma"] == 2.0]

    def mean_of(metric: str, f) -> float:
        return float(np.mean([f(r[metric]) for r in at2]))

    note = f"sigma=2, {len(at2)} seed(s), {cfg.f2_train_rows} training rows; threshold from spec §6"
    ref = "spec §6 prototype run (LR, one seed)"
    # fails if: the full-data classifier is over-confident (then F2a-F2e test the model, not the decoder)
    report.add_claim("F2_cal", "ImCLEF07A sigma=2: the classifier is calibrated (top-leaf ECE, 15 bins, worst seed)",
                     None, max(r["ece"] for r in at2), "<=", ECE_MAX, kind="check", scale=Scale.FULL,
                     aggregate="max", note="precondition of F2a-F2e (our bar, not the paper's)")
    # fails if: hF_2 subset decoding is not better than every single-node heuristic on real data
    report.add_claim("F2a", "ImCLEF07A sigma=2: hF_2 gain over best heuristic", None, mean_of(
        "hf_2", lambda d: d["optimal"] - d["best_heuristic"]), ">=", 0.025, kind="paper", scale=Scale.FULL,
        requires=["F2_cal"], headline=True, reference_value=0.042, reference_source=ref + ": 0.724 vs 0.682", note=note)
    # fails if: the hF_1 decoder is no better than the best heuristic
    report.add_claim("F2b", "ImCLEF07A sigma=2: hF_1 gain over best heuristic", None, mean_of(
        "hf_1", lambda d: d["optimal"] - d["best_heuristic"]), ">=", 0.008, kind="paper", scale=Scale.FULL,
        requires=["F2_cal"], reference_value=0.015, reference_source=ref + ": 0.697 vs 0.682", note=note)
    # fails if: the hF_0.5 decoder loses to a heuristic
    report.add_claim("F2c", "ImCLEF07A sigma=2: hF_0.5 gain over best heuristic", None, mean_of(
        "hf_0.5", lambda d: d["optimal"] - d["best_heuristic"]), ">=", 0.0, kind="paper", scale=Scale.FULL,
        requires=["F2_cal"], reference_value=0.005, reference_source=ref + ": 0.746 vs 0.741", note=note)
    # fails if: mistake severity is decoded as the argmax leaf
    report.add_claim("F2d", "ImCLEF07A sigma=2: mistake-severity reduction vs argmax leaf", None, mean_of(
        "mistake_severity", lambda d: d["argmax_leaf"] - d["optimal"]), ">=", 0.3, kind="paper", scale=Scale.FULL,
        requires=["F2_cal"], reference_value=0.48, reference_source=ref + ": 2.08 vs 2.56", note=note)
    # fails if: the D3 decoder (pruned or brute force) picks a node costlier than a heuristic's by > 0.002
    report.add_claim("F2e", "ImCLEF07A sigma=2: Wu-Palmer and Zhao cost, optimal - best heuristic (non-inferior)",
                     None, max(mean_of("wu_palmer", lambda d: d["optimal"] - d["best_heuristic"]),
                               mean_of("zhao", lambda d: d["optimal"] - d["best_heuristic"])),
                     "<=", 0.002, kind="paper", scale=Scale.FULL, requires=["F2_cal"],
                     note=note + "; the worse of the two")
    # ---------------------------------------------------------------- F3 timing
    t = timing(tiered, cfg.timing_hf_samples, cfg.timing_d3_samples, seed)
    report.add_table("f3_timing", [t])
    if Scale.parse(scale).rank < Scale.FULL.rank:  # wall times are not reproducible: quick runs keep them in the table
        report.notes.append(f"F3 timing (quick run, table f3_timing): D5 hF_2 on {cfg.timing_hf_samples} samples "
                            f"{t['d5_hf2_s']:.2f} s, brute-force D3 on {cfg.timing_d3_samples} samples "
                            f"{t['d3_brute_s']:.2f} s, pruned D3 {t['d3_pruned_s']:.2f} s.")
        report.notes.append(NO_PAPER_NUMBERS)
        return report
    # fails if: D5 loops over k or samples in Python (the spec measured 0.2-0.3 s/sample for a naive loop)
    report.add_claim("F3a", f"D5 (hF_2) decodes {cfg.timing_hf_samples} tieredImageNet-H samples in < 60 s", None,
                     t["d5_hf2_s"], "<", 60.0, kind="paper", scale=Scale.FULL, unit="s", aggregate="max", timing=True,
                     note="paper: subset decoding is tractable; threshold from spec §6; blur 5 (hardest), 2 CPU cores")
    # fails if: brute-force D3 is a per-sample loop instead of one matrix product
    report.add_claim("F3b", f"brute-force D3 (Wu-Palmer) on {cfg.timing_d3_samples} samples in < 10 s", None,
                     t["d3_brute_s"], "<", 10.0, kind="mechanism", scale=Scale.FULL, unit="s", aggregate="max", timing=True,
                     note=f"threshold from spec §6; pruned D3: {t['d3_pruned_s']:.2f} s")
    report.notes.append(NO_PAPER_NUMBERS)
    return report
