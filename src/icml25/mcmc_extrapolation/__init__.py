"""Learning extrapolative sequence transformations from Markov chains (Hager et al., ICML 2025).

Phase 1 runs Metropolis–Hastings toward high scores (:class:`MetropolisHastings`); phase 2 keeps selected states of
the chains as episodes (:func:`episodes_from_chains`) and trains an autoregressive model :class:`QTheta` that
transforms a sequence in a few steps. :class:`Ehrlich` functions stand in for the paper's protein task. The paper's
text tasks use pretrained Hugging Face models: :class:`MLMInfill` (mask-and-infill MH proposal), :class:`SequenceClassifier`
and :class:`SentenceSimilarity` (guides and oracles), :class:`TextQTheta` (a causal LM fine-tuned on the episodes),
with the data loaders :func:`load_yelp` and :func:`load_authorship`.
"""

from typing import Any

from .ehrlich import Ehrlich
from .episodes import STRATEGIES, episodes_from_chains, select_states, transitions
from .mcmc import Chains, EnergyModel, MarkovPriorGibbsProposal, MaskInfillProposal, MetropolisHastings
from .search import hill_climb, mh_best_at_budget
from .text_data import load_authorship, load_yelp
from .text_models import MLMInfill, SentenceSimilarity, SequenceClassifier
from .text_qtheta import TextQTheta, TextTransformResult

__all__ = ["Ehrlich", "EnergyModel", "MarkovPriorGibbsProposal", "MaskInfillProposal", "MetropolisHastings",
           "Chains", "select_states", "episodes_from_chains", "transitions", "STRATEGIES", "QTheta",
           "TransformResult", "hill_climb", "mh_best_at_budget", "MLMInfill", "SequenceClassifier",
           "SentenceSimilarity", "TextQTheta", "TextTransformResult", "load_yelp", "load_authorship"]


def __getattr__(name: str) -> Any:  # q_theta needs torch: import it on first use
    if name in ("QTheta", "TransformResult"):
        from . import qtheta

        return getattr(qtheta, name)
    raise AttributeError(f"module 'icml25.mcmc_extrapolation' has no attribute {name!r}")
