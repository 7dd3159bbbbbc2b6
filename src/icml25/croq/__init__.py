"""CROQ and CP-OPT from "Prune 'n Predict: Optimizing LLM Decision-making with Conformal Prediction" (ICML 2025).

Split conformal prediction sets over the options of a multiple-choice question (:class:`SplitConformal`), a
learned set-size-minimising score (:class:`CPOptScorer`, :func:`cp_opt_loss`), MCQ builders and question revision
(:class:`MCQ`, :func:`build_mcq`, :func:`revise`), answerers on the shared LLM interface (:class:`LLMAnswerer` for
real pretrained models and servers, :class:`LMAnswerer`, :class:`OpenAICompatibleAnswerer`, the from-scratch
:class:`TinyMCQReader`) and the two-pass method :class:`CROQ`.
"""

import importlib
from typing import Any

from icml25.core.optional import require

from .answerers import (
    Answerer,
    AnswerOutput,
    LMAnswerer,
    OpenAICompatibleAnswerer,
    TopLogprobsAnswerer,
    letter_logits_from_top_logprobs,
)
from .conformal import SplitConformal, conformal_threshold, min_calibration_size, option_mask
from .croq import CROQ, CROQResult, answer_features, revise_and_answer
from .data import build_mcq, load_countries, load_mmlu_redux, load_toolalpaca, load_truthfulqa
from .knowledge_task import KnowledgeTask
from .llm_answerer import DEFAULT_INSTRUCTION, LLMAnswerer, OptionTextAnswerer
from .mcq import DEFAULT_TEMPLATE, LETTERS, MCQ, answer_indices, render_prompt, revise
from .stats import paired_bootstrap_ci, paired_t_test

#: names imported on first use (they need torch, and CP-OPT also scikit-learn); the rest is numpy-only
_LAZY = {"CPOptScorer": ("cp_opt", ("torch", "sklearn")), "ScoreMLP": ("cp_opt", ("torch", "sklearn")),
         "cp_opt_loss": ("cp_opt", ("torch", "sklearn")), "TinyMCQReader": ("mcq_reader", ("torch",))}
_EXTRA = {"torch": "torch", "sklearn": "stats"}


def __getattr__(name: str) -> Any:
    """Import the torch-based parts lazily, so that ``SplitConformal`` & co. need numpy only."""
    if name not in _LAZY:
        raise AttributeError(f"module 'icml25.croq' has no attribute {name!r}")
    module, needs = _LAZY[name]
    for mod in needs:
        require(mod, extra=_EXTRA[mod])
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "SplitConformal", "conformal_threshold", "min_calibration_size", "option_mask",
    "MCQ", "LETTERS", "DEFAULT_TEMPLATE", "render_prompt", "revise", "answer_indices",
    "paired_bootstrap_ci", "paired_t_test",
    "AnswerOutput", "Answerer", "LMAnswerer", "TopLogprobsAnswerer", "OpenAICompatibleAnswerer",
    "letter_logits_from_top_logprobs",
    "CROQ", "CROQResult", "answer_features", "revise_and_answer",
    "LLMAnswerer", "OptionTextAnswerer", "DEFAULT_INSTRUCTION",
    "build_mcq", "load_countries", "load_mmlu_redux", "load_truthfulqa", "load_toolalpaca", "KnowledgeTask",
    "CPOptScorer", "ScoreMLP", "cp_opt_loss", "TinyMCQReader",
]
