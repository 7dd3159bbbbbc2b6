"""One language-model interface for every LLM-based paper, with backends loaded lazily.

``from icml25.llm import TinyGPT, HFModel, OpenAIServer`` imports the backend (and torch/transformers/httpx) only
when the name is first used.
"""

from __future__ import annotations

from typing import Any

from .base import Generation, LanguageModel, Tokenizer, truncate_at_stop, validate_prompts

__all__ = ["Generation", "LanguageModel", "Tokenizer", "truncate_at_stop", "TinyGPT", "TinyGPTConfig",
           "CharTokenizer", "ByteTokenizer", "WordTokenizer", "HFModel", "OpenAIServer", "load_model", "load_configured_model",
           "validate_prompts",
           "TinyGPTModule", "OpenAIServerError", "load_tokenizer", "save_random_gpt2", "pretrained_path",
           "load_encoder", "known_models", "sample_shared_prefix", "prefix_hidden_states", "train_loop",
           "LengthBuckets", "expand", "NextTokenLogprobs", "finetune", "FineTuned", "attach_lora", "lora_parameters",
           "answer_batch", "answer_loss", "AnswerBatch", "load_transformers", "model_folder", "ModelFolderError"]

_LAZY = {
    "TinyGPT": ("icml25.llm.tiny", "TinyGPT"),
    "TinyGPTConfig": ("icml25.llm.tiny", "TinyGPTConfig"),
    "CharTokenizer": ("icml25.llm.tokenizers", "CharTokenizer"),
    "ByteTokenizer": ("icml25.llm.tokenizers", "ByteTokenizer"),
    "WordTokenizer": ("icml25.llm.tokenizers", "WordTokenizer"),
    "HFModel": ("icml25.llm.hf", "HFModel"),
    "save_random_gpt2": ("icml25.llm.hf", "save_random_gpt2"),
    "OpenAIServer": ("icml25.llm.openai_server", "OpenAIServer"),
    "load_model": ("icml25.llm.loading", "load_model"),
    "load_configured_model": ("icml25.llm.loading", "load_configured_model"),
    "TinyGPTModule": ("icml25.llm.tiny_module", "TinyGPTModule"),
    "OpenAIServerError": ("icml25.llm.openai_server", "OpenAIServerError"),
    "load_tokenizer": ("icml25.llm.tokenizers", "load_tokenizer"),
    "pretrained_path": ("icml25.llm.pretrained", "pretrained_path"),
    "load_encoder": ("icml25.llm.pretrained", "load_encoder"),
    "known_models": ("icml25.llm.pretrained", "known_models"),
    "sample_shared_prefix": ("icml25.llm.shared_prefix", "sample_shared_prefix"),
    "prefix_hidden_states": ("icml25.llm.shared_prefix", "prefix_hidden_states"),
    "expand": ("icml25.llm.shared_prefix", "expand"),
    "NextTokenLogprobs": ("icml25.llm.token_scoring", "NextTokenLogprobs"),
    "train_loop": ("icml25.llm.training", "train_loop"),
    "LengthBuckets": ("icml25.llm.training", "LengthBuckets"),
    **{name: ("icml25.llm.transformers_models", name) for name in ("load_transformers", "model_folder",
                                                                       "ModelFolderError")},
    **{name: ("icml25.llm.lora", name) for name in ("finetune", "FineTuned", "attach_lora", "lora_parameters",
                                                         "answer_batch", "answer_loss", "AnswerBatch")},
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        mod, attr = _LAZY[name]
        return getattr(importlib.import_module(mod), attr)
    raise AttributeError(f"module 'icml25.llm' has no attribute {name!r}")
