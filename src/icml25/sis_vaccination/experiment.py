"""The experiments of the reproduction (spec §6): each stage adds claims, tables and figures to a Report.

Every stage takes a :class:`Methods`: the paper's methods (:data:`PAPER`) or their naive baselines
(:data:`BASELINE`: the MLE learner and random vaccination), which is the reproduction's stub.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

from icml25.core import Report, Scale
from icml25.core.plotting import new_figure
from icml25.core.progress import progress
from icml25.core.seeding import spawn_seeds
from icml25.core.threads import thread_limits

from ._star_chain import star_hub_vaccinated_extinction_time, star_quasi_stationary_prevalence
from .contact_graphs import flu_contact_graph, random_partial_k_tree, random_tree
from .mle_learner import MLELearner
from .sis_model import SISModel
from .sislearn import SISLearn
from .spectral import spectral_radius, spectral_radius_after_removal
from .srm_brute_force import srm_brute_force
from .srm_greedy import degree_strategy, random_strategy, srm_greedy, walk_strategy
from .srm_tree import srm_tree
from .srm_treewidth_dp import srm_exact_treewidth
from .vug import edge_f1, vug_experiment

Strategy = Callable[[nx.Graph, int, int], list[Any]]


@dataclass(frozen=True)
class Methods:
    """The methods a reproduction run uses: the paper's, or their naive baselines (the stub)."""

    name: str
    learner: Callable[[float, float, int], Any]  # (p_inf, p_rec, max_degree) -> estimator with fit(Y).graph_
    greedy: Strategy  # (graph, k, seed) -> removal list: the paper's greedy SRM (Algorithm 4)
    dp: Strategy  # the exact tree-decomposition DP (§2.3(b))
    tree: Strategy  # the tree algorithm (§2.3(c))


PAPER = Methods("paper", learner=lambda pi, pr, d: SISLearn(pi, d, eps_mu=0.05),
                greedy=lambda g, k, s: srm_greedy(g, k), dp=lambda g, k, s: srm_exact_treewidth(g, k, eps=0.01),
                tree=lambda g, k, s: srm_tree(g, k))
BASELINE = Methods("baseline (MLE learner, random vaccination)", learner=lambda pi, pr, d: MLELearner(pi, pr),
                   greedy=lambda g, k, s: random_strategy(g, k, seed=s),
                   dp=lambda g, k, s: random_strategy(g, k, seed=s), tree=lambda g, k, s: random_strategy(g, k, seed=s))


Stage = Callable[[Report, Any, int, Methods], None]


def run_stages(report: Report, cfg: Any, seed: int, stages: Sequence[tuple[str, Stage]], methods: Methods) -> None:
    """Run ``stages`` in order, stage i with the i-th of 8 seeds spawned from ``seed``, on one thread and with the
    expected learning warnings silenced; record each stage's wall time and the run's methods and versions."""
    seeds = spawn_seeds(seed, 8)
    timings = {}
    with thread_limits(1), warnings.catch_warnings():
        # learning warnings (reseeded epidemics, exact→heuristic fallback) are expected in the sweeps
        warnings.simplefilter("ignore", UserWarning)
        for i, (name, stage) in enumerate(progress(stages, "sis_vaccination")):
            t0 = time.perf_counter()
            stage(report, cfg, seeds[i], methods)
            timings[name] = round(time.perf_counter() - t0, 2)
    report.add_table("stage_wall_time_s", [timings])
    report.config["methods"] = methods.name
    report.config["networkx"] = nx.__version__
    report.config["numpy"] = np.__version__


def check_star(report: Report, cfg, seed: int, methods: Methods = PAPER) -> None:
    """Check 1: star K_{1,9}, p_inf=0.5, p_rec=0.1: prevalence and hub vaccination against the exact chain."""
    g = nx.star_graph(9)
    runs = SISModel(g, 0.5, 0.1, seed=seed).run_trajectories(cfg.star_steps, reps=cfg.star_reps)
    alive = np.concatenate([y[cfg.star_burn_in:][y[cfg.star_burn_in:].any(axis=1)] for y in runs])
    prev = float(alive.mean())  # prevalence conditioned on survival, after burn-in
    exact = star_quasi_stationary_prevalence(9, 0.5, 0.1)
    # fails if: a recovering vertex can be re-infected in the same step (prevalence 0.918) or infections are
    # drawn from the post-recovery state (0.807); the correct chain gives 0.829, the simulator's own error ≈ 0.003
    report.add_claim("Q1_prevalence", "simulator: K_{1,9} prevalence (p_inf=0.5, p_rec=0.1) equals the exact "
                     "quasi-stationary prevalence (±0.01)", None, abs(prev - exact), "<=", 0.01, kind="check",
                     reference_value=round(exact, 4), reference_source="exact quasi-stationary distribution of "
                     "the lumped star chain", aggregate="max",
                     note=f"prevalence {prev:.4f} (conditioned on survival) vs exact {exact:.4f}; the spec's ±0.05 "
                          "was for a noisy reference run")
    ext = SISModel(g, 0.5, 0.1, seed=seed + 1).vaccinate([0]).simulate_many(cfg.hub_reps, 1000)
    exact_t = star_hub_vaccinated_extinction_time(9, 0.5, 0.1)
    rel = abs(ext.capped_mean / exact_t - 1.0)
    # fails if: a vaccinated vertex can still be infected (runs censored at the cap) or recovery is not
    # p_rec per step (mean extinction time off the exact fundamental-matrix value)
    report.add_claim("Q1_hub", "hub of K_{1,9} vaccinated: mean extinction time within 10 % of the exact "
                     "Markov-chain value", None, rel, "<=", 0.10, kind="check", reference_value=round(exact_t, 2),
                     reference_source="exact E[τ] of the lumped star chain", aggregate="max",
                     note=f"{cfg.hub_reps} runs, cap 1000: mean {ext.capped_mean:.1f} vs exact {exact_t:.1f}, "
                          f"max {int(ext.times.max())}, censored {ext.fraction_censored:.2f}")


def check_exact_nu(report: Report, cfg, seed: int, methods: Methods = PAPER) -> None:
    """Check 2: exact inclusion–exclusion ν on path 0–4 plus 5–2, p_inf=0.4, p_rec=0.3, superset V∖{u}."""
    g = nx.path_graph(5)
    g.add_edge(2, 5)
    reps = 100
    model = SISModel(g, 0.4, 0.3, seed=seed).reset(k_random=1)
    Y = model.run_trajectories(cfg.nu_transitions // reps, reps=reps, reseed=True)
    learner = SISLearn(0.4, 3, pruning="exact", superset="all").fit(Y)
    true = nx.to_numpy_array(g, nodelist=range(6), weight=None) > 0
    done = ~np.isnan(learner.nu_)
    nb, non = learner.nu_[done & true], learner.nu_[done & ~true]
    bound = learner.nu_bound
    theory = "identity behind SISLearn's pruning (spec §2.2, reconstructed from the paper)"
    # fails if: ν̂ skips the conditioning on the rest of the superset or mixes transitions across reseeds
    # (a neighbour's ν̂ drops below p_inf(1−p_inf)^{Δ−1}), or conditions on Y_u(t)=1
    report.add_claim("Q2_nu_neighbours", "exact ν̂ ≥ p_inf(1−p_inf)^{Δ−1} − 0.03 for every true neighbour", None,
                     float(nb.min()), ">=", bound - 0.03, kind="mechanism", reference_value=round(bound, 4),
                     reference_source=theory, aggregate="min", note=f"{nb.size} tested ordered pairs")
    # fails if: ν̂ is the unconditioned difference μ̂¹ − μ̂⁰ (non-neighbours correlated with neighbours get
    # |ν̂| ≫ 0.03) or empty cells are not skipped
    report.add_claim("Q2_nu_non_neighbours", "exact |ν̂| ≤ 0.03 for every non-neighbour", None,
                     float(np.abs(non).max()), "<=", 0.03, kind="mechanism", reference_value=0.0,
                     reference_source=theory, aggregate="max", note=f"{non.size} tested ordered pairs")
    # fails if: the decision rule or the symmetrisation of the per-vertex decisions is wrong
    report.add_claim("Q2_recovery", "exact SISLearn recovers the 6-vertex graph from 200k transitions", None,
                     bool(np.array_equal(learner.adjacency_, true)), "is_true", None, kind="mechanism",
                     aggregate="all", note=f"{learner.n_transitions_} transitions in {len(Y)} reseeded segments")


def _learn_once(g: nx.Graph, p_inf: float, p_rec: float, T: int, seed: int, learner) -> dict:
    Y = SISModel(g, p_inf, p_rec, seed=seed).run_trajectories(T, reseed=True)
    return edge_f1(learner.fit(Y).graph_, g)


def check_practical_learning(report: Report, cfg, seed: int, methods: Methods = PAPER) -> None:
    """Check 3: practical SISLearn on the augmented flu graph, p_inf=p_rec=0.3, T=3000, vs the MLE baseline."""
    g = flu_contact_graph()
    delta = max(d for _, d in g.degree)
    rows = []
    for s in spawn_seeds(seed, cfg.learn_seeds):
        h = _learn_once(g, 0.3, 0.3, cfg.learn_T, s, methods.learner(0.3, 0.3, delta))
        m = _learn_once(g, 0.3, 0.3, cfg.learn_T, s, MLELearner(0.3, 0.3))
        rows.append({"seed": s, "sislearn_f1": h["f1"], "sislearn_fp": h["false_positives"], "mle_f1": m["f1"]})
    report.add_table("learning_flu_T3000", rows)
    f1s = [r["sislearn_f1"] for r in rows]
    # fails if: μ̂/ν̂ are mis-counted, the pruning keeps every candidate of the superset (F1 ≈ 0.2, like the MLE
    # baseline) or transitions cross trajectory boundaries
    report.add_claim("Q3_sislearn_f1", "practical SISLearn recovers the flu contact graph (F1 ≥ 0.90 every seed)",
                     None, float(min(f1s)), ">=", 0.90, kind="paper", per_seed=f1s, aggregate="min",
                     reference_value=0.96, reference_source="spec calibration (T=1000: 0.96, T=5000: 0.98)",
                     note=f"min over {len(f1s)} seeds; T={cfg.learn_T}; learner: {methods.name}", headline=True)
    gain = [r["sislearn_f1"] - r["mle_f1"] for r in rows]
    # fails if: SISLearn is no better than the MLE baseline of Barbillon et al. on the same trajectory
    report.add_claim("Q3_vs_mle", "SISLearn beats the MLE baseline (F1 gain > 0 on every seed)", None,
                     float(min(gain)), ">", 0.0, kind="paper", per_seed=gain, aggregate="min",
                     note="min over seeds of F1(SISLearn) − F1(MLE), same trajectories; MLE F1 "
                          + ", ".join(f"{r['mle_f1']:.2f}" for r in rows))


def check_srm(report: Report, cfg, seed: int, methods: Methods = PAPER) -> None:
    """Checks 4-5: DP and tree algorithm vs brute force; greedy quality."""
    dp_gap, greedy_ratio, dp_vs_greedy, rows = [], [], [], []
    for s in spawn_seeds(seed, cfg.srm_instances):
        g = random_partial_k_tree(12, 2, keep=0.8, seed=s)
        for k in (1, 2, 3):
            _, opt = srm_brute_force(g, k)
            dp = spectral_radius_after_removal(g, methods.dp(g, k, s + k))
            gr = spectral_radius_after_removal(g, methods.greedy(g, k, s + k))
            dp_gap.append(dp - opt)
            greedy_ratio.append(gr / opt if opt > 0 else 1.0)
            dp_vs_greedy.append(dp - gr)
            rows.append({"instance": s, "k": k, "opt": opt, "dp": dp, "greedy": gr})
    tree_gap = []
    for s in spawn_seeds(seed + 1, cfg.srm_instances):
        t = random_tree(14, seed=s)
        _, opt = srm_brute_force(t, 2)
        tree_gap.append(spectral_radius_after_removal(t, methods.tree(t, 2, s)) - opt)
    report.add_table("srm_partial_2_trees", rows)
    n_inst = cfg.srm_instances
    # fails if: the DP's join merges removal sets wrongly, forgets drop kept components, or the binary search on
    # λ returns the set of an infeasible λ
    report.add_claim("Q4_dp_exact", "tree-decomposition DP attains the brute-force optimum ρ within ε=0.01",
                     None, float(max(dp_gap)), "<=", 0.01, kind="paper", aggregate="max",
                     note=f"max over {n_inst} partial 2-trees (n=12) × k∈{{1,2,3}}; {methods.name}", headline=True)
    # fails if: the leaf-up rule removes the wrong vertex (e.g. the child instead of v) or the search stops early
    report.add_claim("Q4_tree_exact", "tree algorithm attains the brute-force optimum on random trees (n=14, k=2)",
                     None, float(max(tree_gap)), "<=", 1e-4, kind="paper", aggregate="max",
                     note=f"max gap over {n_inst} trees, binary-search ε = 1e-4")
    # fails if: greedy removes the max-degree vertex or picks by a stale ρ (not recomputed after each removal);
    # random removal averages well above 1.10
    report.add_claim("Q5_greedy_ratio", "greedy ρ(G−R) is within 10 % of the optimum on average", None,
                     float(np.mean(greedy_ratio)), "<=", 1.10, kind="paper", headline=True,
                     note="the paper presents greedy (Algorithm 4) as the near-optimal practical SRM; 10 % is "
                          "the spec's acceptance threshold")
    # fails if: the DP is worse than greedy anywhere (it is exact, so it can only tie or win)
    report.add_claim("F_dp_vs_greedy", "DP attains ρ(G−R) ≤ greedy's ρ(G−R) + ε", None, float(max(dp_vs_greedy)),
                     "<=", 0.01, kind="mechanism", aggregate="max",
                     note="on the partial 2-trees of check 4 (the learned flu graph has width > 3)")


def _curve_graphs() -> dict[str, nx.Graph]:
    karate = nx.empty_graph(34)  # vertices 0..33 in order, without the edge weights of networkx's copy
    karate.add_edges_from(nx.karate_club_graph().edges)
    return {"flu": flu_contact_graph(), "karate": karate,
            "er": nx.gnp_random_graph(50, 0.08, seed=0)}


def learning_curves(report: Report, cfg, seed: int, methods: Methods = PAPER) -> None:
    """F1 vs T for SISLearn (heuristic, exact) and the MLE baseline; p_inf·ρ = 2·p_rec, p_rec = 0.3."""
    rows = []
    for name, g in _curve_graphs().items():
        rho, delta, p_rec = spectral_radius(g), max(d for _, d in g.degree), 0.3
        p_inf = 2 * p_rec / rho
        learners = {"heuristic": methods.learner(p_inf, p_rec, delta), "exact": SISLearn(p_inf, delta, pruning="exact"),
                    "mle": MLELearner(p_inf, p_rec)}  # fit() starts from scratch each time
        for T in cfg.curve_T:
            for s in spawn_seeds(seed, cfg.curve_seeds):
                Y = SISModel(g, p_inf, p_rec, seed=s).run_trajectories(T, reseed=True)
                for lname, learner in learners.items():
                    est = learner.fit(Y)
                    rows.append({"graph": name, "T": T, "seed": s, "learner": lname,
                                 "f1": edge_f1(est.graph_, g)["f1"], "p_inf": round(p_inf, 4)})
    report.add_table("learning_curves", rows)
    fig, ax = new_figure()
    mean = {}
    for (name, lname) in sorted({(r["graph"], r["learner"]) for r in rows}):
        ts = sorted(cfg.curve_T)
        ys = [np.mean([r["f1"] for r in rows if r["graph"] == name and r["learner"] == lname and r["T"] == T])
              for T in ts]
        mean[(name, lname)] = ys
        ax.plot(ts, ys, marker="o", label=f"{lname} / {name}")
    ax.set_xscale("log")
    ax.set_xlabel("observed transitions T")
    ax.set_ylabel("edge F1")
    ax.legend(fontsize=6)
    report.add_figure("learning_curves", fig)
    t_ref = 5000 if 5000 in cfg.curve_T else max(cfg.curve_T)
    at_ref = [mean[(n, "heuristic")][sorted(cfg.curve_T).index(t_ref)] for n in _curve_graphs()]
    # fails if: the practical rule's mean + 2·std threshold or the μ̂ superset is mis-computed (F1 of the MLE
    # baseline is 0.13–0.28 here)
    report.add_claim("F_learning_f1", f"SISLearn-heuristic F1 ≥ 0.9 at T={t_ref} on flu, karate and ER(50,0.08)",
                     None, float(min(at_ref)), ">=", 0.9, scale=Scale.FULL, kind="paper", aggregate="min",
                     note="min over graphs of the mean over seeds (flu, karate, er: "
                          + ", ".join(f"{v:.3f}" for v in at_ref) + ")")
    avg = np.mean([mean[(n, "heuristic")] for n in _curve_graphs()], axis=0)
    # fails if: the sufficient statistics are reset or overwritten between chunks (more data, no gain) or a
    # learner that ignores the data (flat curve with noise)
    report.add_claim("F_learning_monotone", "SISLearn-heuristic F1 is non-decreasing in T on average", None,
                     float(np.min(np.diff(avg))) if len(avg) > 1 else float("nan"), ">=", 0.0, scale=Scale.FULL,
                     kind="paper", aggregate="min", note="smallest step of the mean-over-graphs curve "
                     "(needs ≥ 2 values of T)")


def vaccination_table(report: Report, cfg, seed: int, methods: Methods = PAPER) -> None:
    """Extinction time vs budget: strategies on the learned flu graph, greedy on the true graph."""
    g = flu_contact_graph()
    delta = max(d for _, d in g.degree)
    strategies = {"greedy": methods.greedy, "degree": lambda h, k, s: degree_strategy(h, k),
                  "walk": lambda h, k, s: walk_strategy(h, k), "random": lambda h, k, s: random_strategy(h, k, seed=s)}
    rows = []
    for s in spawn_seeds(seed, cfg.vac_seeds):
        for r in vug_experiment(g, 0.2, 0.3, cfg.vac_T_learn, cfg.vac_budgets, learner=methods.learner(0.2, 0.3, delta),
                                strategies=strategies, true_graph_strategies={"greedy": methods.greedy},
                                reps=cfg.vac_reps, cap=cfg.vac_cap, seed=s):
            r = dict(r, seed=s, removed=" ".join(map(str, r["removed"])))
            rows.append(r)
    report.add_table("vaccination", rows)

    def mean(key, k, strat, used="learned"):
        return float(np.mean([r[key] for r in rows if r["k"] == k and r["strategy"] == strat and r["graph"] == used]))

    fig, ax = new_figure()
    ks = list(cfg.vac_budgets)
    for strat in ("greedy", "degree", "walk", "random"):
        ax.plot(ks, [mean("mean_time", k, strat) for k in ks], marker="o", label=f"{strat} (learned)")
    ax.plot(ks, [mean("mean_time", k, "greedy", "true") for k in ks], marker="s", ls="--", label="greedy (true)")
    ax.set_yscale("log")
    ax.set_xlabel("budget k (vaccinated vertices)")
    ax.set_ylabel(f"capped mean extinction time (steps, cap {cfg.vac_cap})")
    ax.legend(fontsize=7)
    report.add_figure("extinction_vs_budget", fig)
    big = [k for k in ks if k >= 4]
    ratio = max(mean("mean_time", k, "greedy") / mean("mean_time", k, "random") for k in big)
    gap = min(mean("rho_true", k, "random") - mean("rho_true", k, "greedy") for k in big)
    # fails if: vaccination does not remove the vertices from the process, the SRM picks vertices that do not
    # lower ρ (random does not: ratio ≈ 1), or the learned graph is too wrong to steer the choice
    report.add_claim("F_vac_time", "k ≥ 4: greedy-on-learned extinction time ≤ 0.5 × random's", None, ratio,
                     "<=", 0.5, kind="paper", aggregate="max", reference_value=0.14, headline=True,
                     reference_source="spec calibration at k=4 (57 vs 404 steps)",
                     note=f"max over k ∈ {big} of the ratio of capped means; {methods.name}")
    # fails if: the removal set chosen on the learned graph does not lower the true graph's ρ
    report.add_claim("F_vac_rho", "k ≥ 4: greedy-on-learned true ρ(G−R) ≤ random's − 0.5", None, gap, ">=", 0.5,
                     kind="paper", aggregate="min", reference_value=1.03,
                     reference_source="spec calibration at k=6 (2.79 vs 3.82)",
                     note=f"min over k ∈ {big} of ρ_random − ρ_greedy (true graph)")
    kmax = max(ks)
    # fails if: the learned graph misses the edges that matter for the greedy choice
    report.add_claim("F_vac_learned_vs_true", f"k={kmax}: greedy-on-learned time ≤ 1.5 × greedy-on-true", None,
                     mean("mean_time", kmax, "greedy") / mean("mean_time", kmax, "greedy", "true"), "<=", 1.5,
                     scale=Scale.FULL, kind="paper", aggregate="max", requires=["Q3_sislearn_f1"],
                     note="a learned graph with F1 < 0.9 (Q3 failed) makes the comparison meaningless")


def metastability_map(report: Report, cfg, seed: int, methods: Methods = PAPER) -> None:
    """Fraction of extinct runs over a (p_inf, p_rec) grid on the flu graph, all-infected start."""
    g = flu_contact_graph()
    rho = spectral_radius(g)
    grid = np.round(np.arange(0.05, 0.501, 0.05), 2)
    rows = []
    sim_seed = spawn_seeds(seed, 1)[0]
    for pi in grid:
        for pr in grid:
            ext = SISModel(g, float(pi), float(pr), seed=sim_seed).simulate_many(cfg.map_runs, cfg.map_cap)
            rows.append({"p_inf": float(pi), "p_rec": float(pr), "extinct": 1 - ext.fraction_censored,
                         "mean_time": ext.capped_mean})
    report.add_table("metastability_map", rows)
    fast = [r for r in rows if r["p_inf"] * rho < 0.8 * r["p_rec"]]
    slow = [r for r in rows if r["p_inf"] * rho > 1.5 * r["p_rec"]]
    # fails if: the simulator's infection probability grows faster than 1 − (1 − p_inf)^m (sub-critical cells
    # persist) or recovery is skipped for some vertices
    report.add_claim("F_map_fast", "≥ 90 % of cells with p_inf·ρ < 0.8·p_rec go extinct in every run", None,
                     float(np.mean([r["extinct"] == 1.0 for r in fast])), ">=", 0.9, scale=Scale.FULL, kind="paper",
                     note=f"{len(fast)} cells, cap {cfg.map_cap}; rapid-extinction region of Thm 4.1 "
                     "(the paper's figure)", no_stub_reason="tests the SIS model against Thm 4.1, not a method")
    # fails if: infections are under-counted (e.g. one infected neighbour counted at most once), so
    # super-critical epidemics die early
    report.add_claim("F_map_slow", "≥ 90 % of cells with p_inf·ρ > 1.5·p_rec survive to the cap in most runs",
                     None, float(np.mean([r["extinct"] < 0.5 for r in slow])), ">=", 0.9, scale=Scale.FULL,
                     kind="paper", note=f"{len(slow)} cells, cap {cfg.map_cap}; meta-stable region of Thm 4.1",
                     no_stub_reason="tests the SIS model against Thm 4.1, not a method")
    fig, ax = new_figure()
    mat = np.array([[r["mean_time"] for r in rows if r["p_inf"] == pi] for pi in grid])
    im = ax.imshow(np.log10(mat + 1).T, origin="lower", extent=(0.025, 0.525, 0.025, 0.525), aspect="auto")
    xs = np.linspace(0.05, 0.5, 50)
    ax.plot(xs, xs * rho, color="white", label="p_inf·ρ = p_rec")
    ax.set_ylim(0.025, 0.525)
    ax.set_xlabel("p_inf (per-edge infection probability)")
    ax.set_ylabel("p_rec (recovery probability)")
    fig.colorbar(im, ax=ax, label="log10(1 + capped mean extinction time)")
    ax.legend(fontsize=7)
    report.add_figure("metastability_map", fig)
