"""rStar-Math (Guan et al., ICML 2025): step-level MCTS over code-augmented reasoning steps, Q-value annotation,
SFT and preference-pair extraction, and a process preference model (PPM), with a synthetic CPU domain.

Search, extraction and the synthetic domain are pure Python; the neural parts (policy, PPM, training) need torch.
"""

from .answer_check import AnswerChecker
from .augment import augment_renamed, rename_entities
from .beam_search import BeamSearchConfig, StepBeamSearch, finished_solutions
from .benchmarks_data import gsm8k_code_steps, load_benchmark, load_gsm8k_annotated
from .bootstrap_solver import ErrorRates, NoisyRuleSolver
from .evaluation import Chain, evaluate, majority_vote, multi_run_mcts, sample_chains, top_k_vote
from .executors import CodeExecutor, ExecResult, SafeArithExecutor, accumulated_code
from .extraction import (
                         PairRecord,
                         SFTRecord,
                         code_tokens,
                         edit_distance,
                         extract_pairs,
                         extract_sft,
                         filter_pairs,
                         final_answer_pairs,
                         rejection_sampled_sft,
                         to_trl,
)
from .mcts import MCTS, MCTSConfig
from .policies import ConstantScorer, StepPolicy, StepScorer
from .real_llm import HiddenStateValueHead, LMStepPolicy, run_eval
from .sandbox import DEFAULT_ALLOWED_IMPORTS, SubprocessExecutor
from .sharded_search import sharded_search
from .step_format import STOP_STRINGS, TAGS, Step, StepFormat, extract_boxed, parse_step
from .steparith import Problem, StepArithGenerator, step_is_consistent
from .trainable import TinyGPTBackend, TrainableBackend
from .tree import Node, Tree, check_invariants, select_child, uct_score, update, update_recursive
from .word_tokenizer import WordTokenizer

#: public names of the torch-backed modules, imported on first access (``import icml25.rstar_math`` needs only
#: numpy; touching one of these names without torch raises the install hint)
_LAZY = {
    "pretrain_base": "base_model", "pretraining_corpus": "base_model",
    "PPMModel": "process_preference_model", "pair_accuracy": "process_preference_model",
    "ppm_pair_loss": "process_preference_model", "train_ppm": "process_preference_model",
    "make_orm": "reward_model_ablations", "make_pqm": "reward_model_ablations",
    "orm_targets": "reward_model_ablations", "pqm_targets": "reward_model_ablations",
    "train_value_head": "reward_model_ablations",
    "RoundConfig": "self_evolution", "SelfEvolution": "self_evolution", "TimeBudgetExceeded": "self_evolution",
    "paper_rounds": "self_evolution", "repo_rounds": "self_evolution",
    "sft_examples": "sft", "train_sft": "sft",
    "LoRABackend": "lora_backend",
    "TinyStepPolicy": "tiny_policy", "make_tiny_lm": "tiny_policy",
}


def __getattr__(name: str):
    """Import a torch-backed public name on first access (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    from icml25.core.optional import require

    require("torch", extra="torch")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AnswerChecker", "augment_renamed", "rename_entities", "code_tokens", "ErrorRates", "NoisyRuleSolver", "Chain", "evaluate", "majority_vote", "sample_chains",
    "top_k_vote", "multi_run_mcts",
    "BeamSearchConfig", "StepBeamSearch", "finished_solutions",
    "CodeExecutor", "ExecResult", "SafeArithExecutor", "accumulated_code", "PairRecord", "SFTRecord",
    "edit_distance", "extract_pairs", "extract_sft", "filter_pairs", "final_answer_pairs", "rejection_sampled_sft",
    "to_trl", "MCTS",
    "MCTSConfig", "ConstantScorer", "SubprocessExecutor", "DEFAULT_ALLOWED_IMPORTS", "HiddenStateValueHead", "LMStepPolicy",
    "run_eval", "sharded_search", "load_benchmark",
    "load_gsm8k_annotated", "gsm8k_code_steps", "StepPolicy", "StepScorer", "STOP_STRINGS", "TAGS", "Step", "StepFormat",
    "extract_boxed", "parse_step", "Problem", "StepArithGenerator", "step_is_consistent", "Node", "Tree",
    "check_invariants", "select_child", "uct_score", "update", "update_recursive", "WordTokenizer",
    "pretrain_base", "pretraining_corpus", "PPMModel", "pair_accuracy", "ppm_pair_loss", "train_ppm",
    "sft_examples", "train_sft", "make_orm", "make_pqm", "orm_targets", "pqm_targets", "train_value_head",
    "RoundConfig", "SelfEvolution", "TimeBudgetExceeded", "paper_rounds", "repo_rounds", "TinyStepPolicy", "make_tiny_lm",
    "TrainableBackend", "TinyGPTBackend", "LoRABackend",
]
