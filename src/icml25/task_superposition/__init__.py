"""Task superposition (Xiong et al., "Everything Everywhere All at Once: LLMs can In-Context Learn Multiple Tasks
in Superposition", ICML 2025).

Library: task families (:func:`official_setting` with the paper's four settings from the official tables,
:func:`synthetic_family` for the CPU study), mixture prompts with the official count rounding
(:func:`task_counts`, :class:`MixturePromptBuilder`), exact answer probabilities by teacher forcing on every
``icml25.llm`` backend (:func:`answer_probabilities`), the superposition statistics (:func:`superposition_stats`,
:func:`kl_to_mixture`, :func:`topk_membership` by beam enumeration), training from scratch on single-task prompts
(:func:`train_icl_model`) and task vectors (:class:`TaskVectorExtractor`, :func:`patch_and_score`). torch is
imported on first use.
"""

from typing import Any

from .metrics import calibration_error, kl_to_mixture, oracle_mixer, superposition_stats, wilson_interval
from .prompts import MixturePromptBuilder, PromptItem, build_prompt, task_counts
from .tasks import (
    OFFICIAL_SETTINGS,
    SYNTHETIC_FAMILIES,
    Task,
    TaskFamily,
    load_countries,
    load_number_words,
    load_words,
    official_setting,
    synthetic_family,
)

__all__ = ["Task", "TaskFamily", "official_setting", "synthetic_family", "OFFICIAL_SETTINGS", "SYNTHETIC_FAMILIES",
           "load_countries", "load_number_words", "load_words", "task_counts", "PromptItem", "build_prompt",
           "MixturePromptBuilder", "answer_probabilities", "token_lm", "TokenLM", "superposition_stats",
           "kl_to_mixture", "calibration_error", "oracle_mixer", "wilson_interval", "top_continuations", "topk_membership",
           "train_icl_model", "single_task_accuracy", "single_task_correct", "icl_training_batch", "MODEL_SIZES", "TaskVectorExtractor",
           "layer_hidden_states", "patch_and_score", "MockAnswerLM"]

_LAZY = {"answer_probabilities": "scoring", "token_lm": "scoring", "TokenLM": "scoring",
         "top_continuations": "enumeration", "topk_membership": "enumeration", "train_icl_model": "training",
         "single_task_accuracy": "training", "single_task_correct": "training",
         "icl_training_batch": "training", "MODEL_SIZES": "training",
         "TaskVectorExtractor": "task_vectors", "layer_hidden_states": "task_vectors",
         "patch_and_score": "task_vectors", "MockAnswerLM": "testing_models"}


def __getattr__(name: str) -> Any:  # torch-using modules are imported on first use
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'icml25.task_superposition' has no attribute {name!r}")
