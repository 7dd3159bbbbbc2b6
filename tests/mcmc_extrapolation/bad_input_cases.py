"""Bad-input registry of ``icml25.mcmc_extrapolation`` for the fuzz contract (tests/core/test_bad_input.py)."""

from __future__ import annotations

import functools

import numpy as np

from icml25.testing import ARRAY, POSITIVE, REAL, SIZE, TEXT, BadInputCase


@functools.cache
def _f():
    from icml25.mcmc_extrapolation import Ehrlich

    return Ehrlich(6, 8, 1, 3, seed=0)


def _x():
    return _f().sample_prior(4, seed=0)


def _mh():
    from icml25.mcmc_extrapolation import MarkovPriorGibbsProposal, MetropolisHastings

    return MetropolisHastings(_f(), MarkovPriorGibbsProposal(_f().transition_matrix, _f().initial_dist), beta=10.0)


def _q():
    from icml25.mcmc_extrapolation import QTheta

    return QTheta(6, 8, n_layer=1, n_head=2, n_embd=8, seed=0)


CHAIN = np.array([0.1, 0.3, 0.2, 0.5])


@functools.cache
def _text_files() -> tuple[str, str]:
    """A one-split Yelp-format CSV folder and an authorship CSV in a temporary folder."""
    import tempfile
    from pathlib import Path

    d = Path(tempfile.mkdtemp(prefix="mcmc_bad_input_"))
    (d / "train.csv").write_text('"4","the food was good"\n"2","slow service"\n')
    (d / "authors.csv").write_text("text,author\nthe food was good,alice\nslow service,bob\n")
    return str(d), str(d / "authors.csv")

_MODEL_SKIP = ("loads a transformers model from a local folder (no tiny model is built here); a missing folder and "
               "bad arguments are tested in test_text_mh.py / test_text_paper_scale.py")

CASES = [
    BadInputCase("Ehrlich", lambda: {"num_states": 6, "dim": 8, "num_motifs": 1, "motif_length": 3, "seed": 0},
                 bad={"num_states": SIZE, "dim": SIZE, "num_motifs": SIZE, "motif_length": SIZE}),
    BadInputCase("Ehrlich.is_feasible", lambda: {"x": _x()}, obj=_f, bad={"x": ARRAY}),
    BadInputCase("Ehrlich.sample_prior", lambda: {"n": 3, "seed": 0}, obj=_f, bad={"n": SIZE}),
    BadInputCase("EnergyModel", lambda: {"terms": [(1.0, _f())]}, skip="takes (weight, function) pairs; a "
                 "non-finite weight or a non-callable raises (tested in test_mcmc_and_episodes)"),
    BadInputCase("MarkovPriorGibbsProposal", lambda: {"transition_matrix": _f().transition_matrix,
                                                      "initial_dist": _f().initial_dist, "n_sites": 2},
                 bad={"transition_matrix": ARRAY, "initial_dist": ARRAY, "n_sites": SIZE}),
    BadInputCase("MaskInfillProposal", lambda: {"infill_fn": lambda x, p, r: (x, np.zeros(len(x)), np.zeros(len(x))),
                                                "n_positions": 1}, bad={"n_positions": SIZE}),
    BadInputCase("MetropolisHastings", lambda: {"energy": _f(), "proposal": _mh().proposal, "beta": 10.0},
                 bad={"beta": REAL}),
    BadInputCase("MetropolisHastings.run", lambda: {"x0": _x(), "steps": 3, "seed": 0}, obj=_mh,
                 bad={"x0": ARRAY, "steps": SIZE}),
    BadInputCase("Chains", skip="a result container returned by MetropolisHastings.run"),
    BadInputCase("select_states", lambda: {"scores": CHAIN, "strategy": "improve", "delta": 0.0, "k_max": 3},
                 bad={"scores": ARRAY, "delta": REAL, "k_max": SIZE}),
    BadInputCase("episodes_from_chains", lambda: {"states": np.zeros((2, 4, 3), dtype=int),
                                                  "scores": np.stack([CHAIN, CHAIN])},
                 bad={"states": ARRAY, "scores": ARRAY}),
    BadInputCase("transitions", skip="takes the episode list built by episodes_from_chains (checked there)"),
    BadInputCase("QTheta", lambda: {"num_states": 6, "length": 8, "n_layer": 1, "n_head": 2, "n_embd": 8},
                 bad={"num_states": SIZE, "length": SIZE, "n_layer": SIZE, "n_head": SIZE, "n_embd": SIZE}),
    BadInputCase("QTheta.fit", lambda: {"prev": _x(), "nxt": _x(), "epochs": 1, "batch_size": 2, "lr": 1e-3},
                 obj=_q, bad={"prev": ARRAY, "nxt": ARRAY, "epochs": SIZE, "batch_size": SIZE, "lr": POSITIVE}),
    BadInputCase("QTheta.transform", lambda: {"x0": _x(), "steps": 1, "n_candidates": 2, "temperature": 1.0,
                                              "guide": _f(), "seed": 0},
                 obj=_q, bad={"x0": ARRAY, "steps": SIZE, "n_candidates": SIZE, "temperature": POSITIVE}),
    BadInputCase("TransformResult", skip="a result container returned by QTheta.transform"),
    BadInputCase("hill_climb", lambda: {"f": _f(), "x0": _x(), "num_states": 6, "budget": 3, "seed": 0},
                 bad={"x0": ARRAY, "num_states": SIZE, "budget": SIZE}),
    BadInputCase("mh_best_at_budget", skip="takes Chains and an evaluation count bounded by the chain (tested)"),
    BadInputCase("MLMInfill", skip=_MODEL_SKIP),
    BadInputCase("SequenceClassifier", skip=_MODEL_SKIP),
    BadInputCase("SentenceSimilarity", skip=_MODEL_SKIP),
    BadInputCase("TextQTheta", skip=_MODEL_SKIP + "; its fine-tuning is tested in test_text_qtheta_and_data.py"),
    BadInputCase("TextTransformResult", skip="a result container returned by TextQTheta.transform"),
    BadInputCase("load_yelp", lambda: {"split": "train", "path": _text_files()[0], "max_words": 5},
                 bad={"split": TEXT, "max_words": SIZE}),
    BadInputCase("load_authorship", lambda: {"path": _text_files()[1], "text_column": "text",
                                             "author_column": "author"},
                 bad={"text_column": TEXT, "author_column": TEXT}),
]
