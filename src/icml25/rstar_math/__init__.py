"""rStar-Math (Guan et al., ICML 2025): step-level MCTS over code-augmented reasoning steps, Q-value annotation,
SFT and preference-pair extraction, and a process preference model (PPM), with a synthetic CPU domain.

Search, extraction and the synthetic domain are pure Python; the neural parts (policy, PPM, training) need torch.
"""

from icml25.core.optional import require

from .answer_check import AnswerChecker
from .benchmarks_data import gsm8k_code_steps, load_benchmark, load_gsm8k_annotated
from .bootstrap_solver import ErrorRates, NoisyRuleSolver
from .evaluation import Chain, evaluate, majority_vote, sample_chains
from .executors import CodeExecutor, ExecResult, SafeArithExecutor, accumulated_code
from .extraction import (
                         PairRecord,
                         SFTRecord,
                         edit_distance,
                         extract_pairs,
                         extract_sft,
                         filter_pairs,
                         final_answer_pairs,
                         to_trl,
)
from .mcts import MCTS, MCTSConfig
from .policies import ConstantScorer, StepPolicy, StepScorer
from .real_llm import HiddenStateValueHead, LMStepPolicy, run_eval
from .sandbox import DEFAULT_ALLOWED_IMPORTS, SubprocessExecutor
from .sharded_search import sharded_search
from .step_format import STOP_STRINGS, TAGS, Step, StepFormat, extract_boxed, parse_step
from .steparith import Problem, StepArithGenerator, step_is_consistent
from .tree import Node, Tree, check_invariants, select_child, uct_score, update, update_recursive
from .word_tokenizer import WordTokenizer

require("torch", extra="torch")

from .base_model import pretrain_base, pretraining_corpus  # noqa: E402
from .process_preference_model import PPMModel, pair_accuracy, ppm_pair_loss, train_ppm  # noqa: E402
from .reward_model_ablations import make_orm, make_pqm, orm_targets, pqm_targets, train_value_head  # noqa: E402
from .self_evolution import RoundConfig, SelfEvolution, TimeBudgetExceeded, paper_rounds, repo_rounds  # noqa: E402
from .sft import sft_examples, train_sft  # noqa: E402
from .tiny_policy import TinyStepPolicy, load_tiny_lm, make_tiny_lm, save_tiny_lm  # noqa: E402

__all__ = [
    "AnswerChecker", "ErrorRates", "NoisyRuleSolver", "Chain", "evaluate", "majority_vote", "sample_chains",
    "CodeExecutor", "ExecResult", "SafeArithExecutor", "accumulated_code", "PairRecord", "SFTRecord",
    "edit_distance", "extract_pairs", "extract_sft", "filter_pairs", "final_answer_pairs", "to_trl", "MCTS",
    "MCTSConfig", "ConstantScorer", "SubprocessExecutor", "DEFAULT_ALLOWED_IMPORTS", "HiddenStateValueHead", "LMStepPolicy",
    "run_eval", "sharded_search", "load_benchmark",
    "load_gsm8k_annotated", "gsm8k_code_steps", "StepPolicy", "StepScorer", "STOP_STRINGS", "TAGS", "Step", "StepFormat",
    "extract_boxed", "parse_step", "Problem", "StepArithGenerator", "step_is_consistent", "Node", "Tree",
    "check_invariants", "select_child", "uct_score", "update", "update_recursive", "WordTokenizer",
    "pretrain_base", "pretraining_corpus", "PPMModel", "pair_accuracy", "ppm_pair_loss", "train_ppm",
    "sft_examples", "train_sft", "make_orm", "make_pqm", "orm_targets", "pqm_targets", "train_value_head",
    "RoundConfig", "SelfEvolution", "TimeBudgetExceeded", "paper_rounds", "repo_rounds", "TinyStepPolicy", "load_tiny_lm", "make_tiny_lm", "save_tiny_lm",
]
