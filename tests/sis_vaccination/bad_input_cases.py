"""Bad-input registry of sis_vaccination for the fuzz contract (tests/core/test_bad_input.py): one valid call per
public callable and the kinds of the arguments to corrupt."""

from __future__ import annotations

import networkx as nx
import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, SIZE, TEXT, BadInputCase


def _graph() -> nx.Graph:
    g = nx.path_graph(6)
    g.add_edge(2, 5)
    return g


def _states() -> np.ndarray:
    from icml25.sis_vaccination import SISModel

    return SISModel(_graph(), 0.6, 0.2, seed=0).run(200).astype(int)


def _model():  # type: ignore[no-untyped-def]
    from icml25.sis_vaccination import SISModel

    return SISModel(_graph(), 0.4, 0.3, seed=0)


def _sislearn():  # type: ignore[no-untyped-def]
    from icml25.sis_vaccination import SISLearn

    return SISLearn(0.4, 3)


def _mle():  # type: ignore[no-untyped-def]
    from icml25.sis_vaccination import MLELearner

    return MLELearner(0.4, 0.3)


def _tree() -> nx.Graph:
    return nx.balanced_tree(2, 2)


_PARAMS = {"p_inf": PROB, "p_rec": PROB}

CASES = [
    BadInputCase("SISModel", lambda: {"graph": _graph(), "p_inf": 0.4, "p_rec": 0.3, "seed": 0}, _PARAMS),
    BadInputCase("SISModel.run", lambda: {"T": 20}, {"T": SIZE}, obj=_model),
    BadInputCase("SISModel.run_trajectories", lambda: {"T": 20, "reps": 2, "reseed": True},
                 {"T": SIZE, "reps": SIZE}, obj=_model),
    BadInputCase("SISModel.simulate_many", lambda: {"reps": 3, "cap": 50}, {"reps": SIZE, "cap": SIZE}, obj=_model),
    BadInputCase("SISModel.extinction_time", lambda: {"cap": 50}, {"cap": SIZE}, obj=_model),
    BadInputCase("SISModel.step", lambda: {}, obj=_model),
    # vertex lists: an empty list is valid (nobody vaccinated / infected), so they are not fuzzed as ARRAY
    BadInputCase("SISModel.vaccinate", lambda: {"nodes": [1, 2]}, obj=_model),
    BadInputCase("SISModel.reset", lambda: {"k_random": 2}, obj=_model),
    BadInputCase("ExtinctionTimes", skip="result container built by SISModel.simulate_many, not user input"),
    BadInputCase("SISLearn", lambda: {"p_inf": 0.4, "max_degree": 3, "eps_mu": 0.05, "z": 2.0},
                 {"p_inf": PROB, "max_degree": SIZE, "z": POSITIVE}),
    BadInputCase("SISLearn.fit", lambda: {"Y": _states()}, {"Y": ARRAY}, obj=_sislearn),
    BadInputCase("SISLearn.partial_fit", lambda: {"Y": _states()}, {"Y": ARRAY}, obj=_sislearn),
    BadInputCase("MLELearner", lambda: {"p_inf": 0.4, "p_rec": 0.3, "threshold": 0.5},
                 {"p_inf": PROB, "p_rec": PROB, "threshold": PROB}),
    BadInputCase("MLELearner.fit", lambda: {"Y": _states()}, {"Y": ARRAY}, obj=_mle),
    BadInputCase("spectral_radius", lambda: {"graph": nx.to_numpy_array(_graph())}, {"graph": ARRAY}),
    BadInputCase("spectral_radius_after_removal", lambda: {"graph": _graph(), "removed": [2]}),
    BadInputCase("srm_greedy", lambda: {"graph": _graph(), "k": 2}),
    BadInputCase("srm_greedy_naive", lambda: {"graph": _graph(), "k": 2}),
    BadInputCase("srm_exact_treewidth", lambda: {"graph": _graph(), "k": 2, "eps": 0.01, "max_states": 1000},
                 {"eps": POSITIVE, "max_states": SIZE}),
    BadInputCase("srm_tree", lambda: {"graph": _tree(), "k": 2, "eps": 1e-4}, {"eps": POSITIVE}),
    BadInputCase("srm_brute_force", lambda: {"graph": _graph(), "k": 2, "max_subsets": 1000},
                 {"max_subsets": SIZE}),
    BadInputCase("degree_strategy", lambda: {"graph": _graph(), "k": 2}),
    BadInputCase("walk_strategy", lambda: {"graph": _graph(), "k": 2, "length": 8}, {"length": SIZE}),
    BadInputCase("random_strategy", lambda: {"graph": _graph(), "k": 2, "seed": 0}),
    BadInputCase("nice_tree_decomposition", lambda: {"graph": _graph(), "heuristic": "min_degree"},
                 {"heuristic": TEXT}),
    BadInputCase("NiceTreeDecomposition", skip="result container built by nice_tree_decomposition"),
    BadInputCase("vug_experiment", lambda: {"graph": _graph(), "p_inf": 0.4, "p_rec": 0.3, "T_learn": 300,
                                            "budgets": [1, 2], "reps": 3, "cap": 50, "seed": 0},
                 {"p_inf": PROB, "p_rec": PROB, "T_learn": SIZE, "budgets": ARRAY, "reps": SIZE, "cap": SIZE}),
    BadInputCase("edge_f1", lambda: {"learned": nx.path_graph(6), "true": _graph()}),
    BadInputCase("load_outbreak_tree", lambda: {"name": "chn.2009.flu.1.00"}, {"name": TEXT}),
    BadInputCase("outbreak_tree_names", lambda: {}),
    BadInputCase("augment_to_spectral_radius", lambda: {"graph": nx.path_graph(8), "target": 2.2, "seed": 0,
                                                        "max_tries": 10_000},
                 {"target": POSITIVE, "max_tries": SIZE}),
    BadInputCase("flu_contact_graph", lambda: {"target_rho": 3.5, "seed": 0}, {"target_rho": POSITIVE}),
    BadInputCase("random_tree", lambda: {"n": 10, "seed": 0}, {"n": SIZE}),
    BadInputCase("random_partial_k_tree", lambda: {"n": 10, "k": 2, "keep": 0.8, "seed": 0},
                 {"n": SIZE, "k": SIZE, "keep": PROB}),
]
