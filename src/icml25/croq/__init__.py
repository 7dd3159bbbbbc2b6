"""CROQ and CP-OPT from "Prune 'n Predict: Optimizing LLM Decision-making with Conformal Prediction" (ICML 2025).

Split conformal prediction sets over the options of a multiple-choice question (:class:`SplitConformal`), a
learned set-size-minimising score (:class:`CPOptScorer`, :func:`cp_opt_loss`), MCQ builders and question revision
(:class:`MCQ`, :func:`build_mcq`, :func:`revise`), answerers on the shared LLM interface (:class:`LMAnswerer`,
:class:`OpenAICompatibleAnswerer`, the from-scratch :class:`TinyMCQReader`) and the two-pass method :class:`CROQ`.
"""

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
from .datasets import build_mcq, load_mmlu_redux, load_toolalpaca, load_truthfulqa
from .knowledge_task import KnowledgeTask
from .mcq import DEFAULT_TEMPLATE, LETTERS, MCQ, answer_indices, render_prompt, revise
from .stats import paired_bootstrap_ci, paired_t_test

require("torch", extra="torch")
require("sklearn", extra="stats")

from .cp_opt import CPOptScorer, ScoreMLP, cp_opt_loss  # noqa: E402
from .mcq_reader import TinyMCQReader  # noqa: E402

__all__ = [
    "SplitConformal", "conformal_threshold", "min_calibration_size", "option_mask",
    "MCQ", "LETTERS", "DEFAULT_TEMPLATE", "render_prompt", "revise", "answer_indices",
    "paired_bootstrap_ci", "paired_t_test",
    "AnswerOutput", "Answerer", "LMAnswerer", "TopLogprobsAnswerer", "OpenAICompatibleAnswerer",
    "letter_logits_from_top_logprobs",
    "CROQ", "CROQResult", "answer_features", "revise_and_answer",
    "build_mcq", "load_mmlu_redux", "load_truthfulqa", "load_toolalpaca", "KnowledgeTask",
    "CPOptScorer", "ScoreMLP", "cp_opt_loss", "TinyMCQReader",
]
