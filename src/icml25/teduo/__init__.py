"""TEDUO (Pouplin, Kobalczyk, Sun & van der Schaar, ICML 2025): offline language-conditioned policy learning from
unlabelled, low-fidelity BabyAI data with an LLM as annotator and as the final policy.

Library: BabyAI states and goals (:class:`SymbolicState`, :func:`parse_goal`, :func:`goal_reached`,
:func:`describe_state`), unlabelled data (:class:`OfflineDataset`), the annotators (:class:`RuleBackend` — oracle
templates, not an LLM — and :class:`LLMAnnotator` on any ``icml25.llm`` model), sandboxed LLM-written abstraction
functions (:func:`compile_abstraction`, :class:`Abstractor`), hindsight labelling with a proxy reward model
(:class:`HindsightLabeler`, :class:`ProxyRewardModel`), offline tabular Q-learning per goal (:class:`TabularQ`),
GCBC (:func:`gcbc_table`), D_SFT (:func:`build_sft_dataset`), the step-3 policies (:class:`MLPPolicy`,
:class:`TinyLMPolicy`, :class:`LoRAPolicy`) and closed-loop evaluation (:func:`evaluate`). torch and peft are
imported on first use.
"""

from typing import Any

from .abstraction import (
    AbstractionError,
    AbstractionFn,
    compile_abstraction,
    identity_abstraction,
    template_abstraction_code,
)
from .annotators import LLMAnnotator, RuleBackend, extract_code, parse_action, parse_yes_no
from .babyai import (
    ACTIONS,
    HELD_OUT_PAIRS,
    Goal,
    SymbolicState,
    all_goal_strings,
    describe_state,
    goal_reached,
    parse_goal,
    relative_position,
)
from .data import OfflineDataset, decode_state, encode_state
from .evaluation import GoalTabularAgent, RandomPolicy, draw_episodes, evaluate
from .labeling import Abstractor, GoalMDP, HindsightLabeler, ProxyRewardModel, abstract_features
from .sft import SFTExample, build_sft_dataset, rollout_empirical
from .tabular import TabularPolicy, TabularQ, gcbc_table

__all__ = ["ACTIONS", "HELD_OUT_PAIRS", "Goal", "SymbolicState", "all_goal_strings", "describe_state",
           "goal_reached", "parse_goal", "relative_position", "OfflineDataset", "encode_state", "decode_state",
           "AbstractionError", "AbstractionFn", "compile_abstraction", "identity_abstraction",
           "template_abstraction_code", "RuleBackend", "LLMAnnotator", "parse_action", "parse_yes_no",
           "extract_code", "Abstractor", "GoalMDP", "HindsightLabeler", "ProxyRewardModel", "abstract_features",
           "TabularQ", "TabularPolicy", "gcbc_table", "SFTExample", "build_sft_dataset", "rollout_empirical",
           "RandomPolicy", "GoalTabularAgent", "draw_episodes", "evaluate", "MLPPolicy", "TinyLMPolicy",
           "LoRAPolicy"]

_LAZY = {"MLPPolicy": "policies", "TinyLMPolicy": "policies", "LoRAPolicy": "lm_policy"}


def __getattr__(name: str) -> Any:  # torch/peft policies are imported on first use
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'icml25.teduo' has no attribute {name!r}")
