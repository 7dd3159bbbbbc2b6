"""Vaccinating an Unknown Graph (VUG, spec §2.4): learn the graph from an SIS trajectory, pick k vertices on the
learned graph, vaccinate them in the true process and measure the (censored) extinction time."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import networkx as nx

from icml25.core.seeding import check_random_state
from icml25.core.validation import check_int

from ._validation import check_budget, check_graph, check_probability
from .sis_model import SISModel
from .sislearn import SISLearn
from .spectral import spectral_radius_after_removal
from .srm_greedy import degree_strategy, random_strategy, srm_greedy, walk_strategy
from .srm_tree import srm_tree
from .srm_treewidth_dp import srm_exact_treewidth

__all__ = ["edge_f1", "STRATEGIES", "vug_experiment"]

Strategy = Callable[[nx.Graph, int], list[Any]]


def edge_f1(learned: nx.Graph, true: nx.Graph) -> dict[str, float]:
    """Precision, recall and F1 of the learned undirected edge set against the true one.

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1`` (0 when undefined), ``false_positives``, ``false_negatives``.
    """
    check_graph(learned, "learned")
    check_graph(true, "true")
    lt = {frozenset(e) for e in learned.edges}
    tt = {frozenset(e) for e in true.edges}
    tp = len(lt & tt)
    prec = tp / len(lt) if lt else 0.0
    rec = tp / len(tt) if tt else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0
    return {"precision": prec, "recall": rec, "f1": f1, "false_positives": float(len(lt - tt)),
            "false_negatives": float(len(tt - lt))}


#: strategy name -> function (graph, k, seed) -> removal list
STRATEGIES: dict[str, Callable[[nx.Graph, int, int], list[Any]]] = {
    "greedy": lambda g, k, s: srm_greedy(g, k),
    "degree": lambda g, k, s: degree_strategy(g, k),
    "walk": lambda g, k, s: walk_strategy(g, k),
    "random": lambda g, k, s: random_strategy(g, k, seed=s),
    "dp": lambda g, k, s: srm_exact_treewidth(g, k),
    "tree": lambda g, k, s: srm_tree(g, k),
}


def _strategy_table(strategies: Any, name: str) -> dict[str, Callable[[nx.Graph, int, int], list[Any]]]:
    """Names in :data:`STRATEGIES`, or a mapping name -> callable(graph, k, seed), as a name -> callable dict."""
    if isinstance(strategies, str):
        raise TypeError(f"{name} must be an iterable of strategy names or a mapping, got the string {strategies!r}")
    if isinstance(strategies, Mapping):
        bad = [k for k, f in strategies.items() if not isinstance(k, str) or not callable(f)]
        if bad:
            raise TypeError(f"{name} must map names to callables (graph, k, seed) -> vertices, got {bad[0]!r}")
        return dict(strategies)
    names = list(strategies)
    unknown = [s for s in names if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"{name} must be among {sorted(STRATEGIES)}, got {unknown[0]!r}")
    return {s: STRATEGIES[s] for s in names}


def vug_experiment(graph: nx.Graph, p_inf: float, p_rec: float, T_learn: int, budgets: Iterable[int],
                   learner: Any = None, strategies: Any = ("greedy", "degree", "walk", "random"),
                   reps: int = 30, cap: int = 5000, seed: Any = 0, true_graph_strategies: Any = ("greedy",),
                   as_frame: bool = False) -> Any:
    """Learn, vaccinate, measure: one VUG experiment as a tidy table.

    1. Simulate SIS on the true ``graph`` from all-infected for ``T_learn`` steps (reseeding a dead epidemic,
       the restart jump excluded) and fit ``learner`` (default: heuristic :class:`SISLearn` with the true
       maximum degree).
    2. For every budget k and strategy, choose R on the learned graph (and, for ``true_graph_strategies``, on
       the true graph as a reference).
    3. Vaccinate R in the true process and simulate ``reps`` replicas from all-infected, censored at ``cap``;
       every strategy uses the same simulation seed (common random numbers).

    Parameters
    ----------
    graph : networkx.Graph
        True contact graph on vertices 0..n−1.
    p_inf, p_rec : float in (0, 1)
        SIS parameters.
    T_learn : int
        Observed transitions.
    budgets : iterable of int
        Vaccination budgets k.
    learner : estimator with ``fit(Y)`` and ``graph_``, optional
    strategies : iterable of str, or mapping of str to callable
        Names in :data:`STRATEGIES` applied to the learned graph, or your own strategies as a mapping
        name -> ``f(graph, k, seed) -> list of vertices``.
    reps, cap : int
        Replicas and censoring time of the extinction-time simulation.
    seed : int
        Seed of the learning trajectory, random strategy and simulations.
    true_graph_strategies : iterable of str, or mapping of str to callable
        Strategies also applied to the true graph (same forms as ``strategies``).
    as_frame : bool
        Return a pandas DataFrame (needs pandas) instead of a list of dicts.

    Returns
    -------
    list of dict or pandas.DataFrame
        One row per (k, strategy, graph used) with ``rho_true`` = ρ(G − R), ``rho_learned`` = ρ(Ĝ − R),
        ``mean_time`` (capped), ``median_time``, ``fraction_censored`` and the learning ``f1``.
    """
    check_graph(graph)
    n = graph.number_of_nodes()
    if set(graph.nodes) != set(range(n)):
        raise ValueError("graph must have vertices 0..n-1 (use networkx.convert_node_labels_to_integers)")
    p_inf = check_probability(p_inf, "p_inf")
    p_rec = check_probability(p_rec, "p_rec")
    T_learn = check_int(T_learn, "T_learn", low=1)
    if isinstance(budgets, (str, bytes)) or not isinstance(budgets, Iterable):
        raise TypeError(f"budgets must be an iterable of integers, got {budgets!r}")
    budgets = [check_budget(k, n, name="budgets") for k in budgets]
    if not budgets:
        raise ValueError("budgets must hold at least one budget k, got an empty iterable")
    reps = check_int(reps, "reps", low=1)
    cap = check_int(cap, "cap", low=1)
    on_learned = _strategy_table(strategies, "strategies")
    on_true = _strategy_table(true_graph_strategies, "true_graph_strategies")
    if learner is not None and not callable(getattr(learner, "fit", None)):
        raise TypeError(f"learner must be an estimator with fit(Y) and graph_, got {type(learner).__name__}")
    if list(graph.nodes) != list(range(n)):  # state columns follow graph.nodes; learned vertices are columns
        ordered = nx.empty_graph(n)
        ordered.add_edges_from(graph.edges)
        graph = ordered
    rng = check_random_state(seed)
    learn_seed, strat_seed, sim_seed = (int(x) for x in rng.integers(0, 2**31 - 1, size=3))
    model = SISModel(graph, p_inf, p_rec, seed=learn_seed)
    Y = model.run_trajectories(T_learn, reps=1, reseed=True)
    if learner is None:
        learner = SISLearn(p_inf=p_inf, max_degree=max(1, max((d for _, d in graph.degree), default=1)))
    learned = learner.fit(Y).graph_
    scores = edge_f1(learned, graph)
    rows = []
    for k in budgets:
        plans = [(s, f, "learned", learned) for s, f in on_learned.items()]
        plans += [(s, f, "true", graph) for s, f in on_true.items()]
        for name, strategy, used, g in plans:
            removal = [int(v) for v in strategy(g, k, strat_seed)]
            sim = SISModel(graph, p_inf, p_rec, seed=sim_seed).vaccinate(removal)
            ext = sim.simulate_many(reps, cap)
            rows.append({"k": k, "strategy": name, "graph": used,
                         "rho_true": spectral_radius_after_removal(graph, removal),
                         "rho_learned": spectral_radius_after_removal(learned, removal),
                         "mean_time": ext.capped_mean, "median_time": ext.median,
                         "fraction_censored": ext.fraction_censored, "f1": scores["f1"],
                         "removed": removal})
    if as_frame:
        import pandas as pd

        return pd.DataFrame(rows)
    return rows
