"""rStar-Math (Guan et al., ICML 2025): step-level MCTS over code-augmented reasoning steps, Q-value annotation,
SFT and preference-pair extraction, and a process preference model (PPM), with a synthetic CPU domain.

Search, extraction and the synthetic domain are pure Python; the neural parts (policy, PPM, training) need torch.
"""

from .domain.answer_check import AnswerChecker
from .domain.augment import augment_renamed, rename_entities
from .domain.benchmarks_data import gsm8k_code_steps, load_benchmark, load_gsm8k_annotated
from .domain.bootstrap_solver import ErrorRates, NoisyRuleSolver
from .domain.step_format import STOP_STRINGS, TAGS, Step, StepFormat, extract_boxed, parse_step
from .domain.steparith import Problem, StepArithGenerator, step_is_consistent
from .domain.word_tokenizer import WordTokenizer
from .execution.code_executors import CodeExecutor, ExecResult, SafeArithExecutor, accumulated_code
from .execution.sandbox import DEFAULT_ALLOWED_IMPORTS, SubprocessExecutor
from .models.real_llm import HiddenStateValueHead, LMStepPolicy, run_eval
from .models.trainable import TinyGPTBackend, TrainableBackend
from .pipeline.evaluation import Chain, evaluate, majority_vote, multi_run_mcts, sample_chains, top_k_vote
from .pipeline.extraction import (
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
from .search.beam_search import BeamSearchConfig, StepBeamSearch, finished_solutions
from .search.mcts import MCTS, MCTSConfig
from .search.policies import ConstantScorer, StepPolicy, StepScorer
from .search.sharded_search import sharded_search
from .search.tree import Node, Tree, check_invariants, select_child, uct_score, update, update_recursive

#: public names of the torch-backed modules, imported on first access (``import icml25.rstar_math`` needs only
#: numpy; touching one of these names without torch raises the install hint)
_LAZY = {
    "pretrain_base": "models.base_model", "pretraining_corpus": "models.base_model",
    "PPMModel": "models.process_preference_model", "pair_accuracy": "models.process_preference_model",
    "ppm_pair_loss": "models.process_preference_model", "train_ppm": "models.process_preference_model",
    "make_orm": "models.reward_model_ablations", "make_pqm": "models.reward_model_ablations",
    "orm_targets": "models.reward_model_ablations", "pqm_targets": "models.reward_model_ablations",
    "train_value_head": "models.reward_model_ablations",
    "RoundConfig": "pipeline.self_evolution", "SelfEvolution": "pipeline.self_evolution", "TimeBudgetExceeded": "pipeline.self_evolution",
    "paper_rounds": "pipeline.self_evolution", "repo_rounds": "pipeline.self_evolution",
    "sft_examples": "models.sft", "train_sft": "models.sft",
    "LoRABackend": "models.lora_backend",
    "TinyStepPolicy": "models.tiny_policy", "make_tiny_lm": "models.tiny_policy",
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
