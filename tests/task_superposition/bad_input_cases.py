"""Bad-input registry of ``icml25.task_superposition`` for the fuzz contract (tests/core/test_bad_input.py)."""

from __future__ import annotations

import functools

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, SIZE, TEXT, BadInputCase


@functools.cache
def _tiny():
    import torch

    torch.set_num_threads(1)
    from icml25.task_superposition import synthetic_family, train_icl_model

    return train_icl_model(synthetic_family("F-AB", ["copyA", "copyB"]), size="S", steps=2, show_progress=False)[0]


def _fam():
    from icml25.task_superposition import synthetic_family

    return synthetic_family("F-AB", ["copyA", "copyB"])


def _mock():
    from icml25.task_superposition import MockAnswerLM

    return MockAnswerLM({"12": 0.5, "7": 0.3})


def _tv():
    from icml25.task_superposition import TaskVectorExtractor

    return TaskVectorExtractor(_tiny(), 1).fit([["12=", "34="], ["56=", "78="]])


def _tok():
    from icml25.llm.tokenizers import CharTokenizer

    return CharTokenizer(_fam().alphabet)


_P = np.array([[0.6, 0.3], [0.2, 0.5], [0.4, 0.4]])
_PROMPTS = ["12=", "34="]
_ANSWERS = [["1", "2"], ["3", "4"]]

CASES = [
    BadInputCase("Task", lambda: {"name": "copyA", "fn": lambda x: str(x[0])}, bad={"name": TEXT}),
    BadInputCase("TaskFamily", skip="a container of callables built by official_setting/synthetic_family; its "
                                    "structure is validated in __post_init__"),
    BadInputCase("official_setting", lambda: {"name": "country"}, bad={"name": TEXT}),
    BadInputCase("synthetic_family", lambda: {"name": "F-RET"}, bad={"name": TEXT}),
    BadInputCase("load_countries", skip="reads a file path (default: the shipped table); a missing file raises "
                                        "FileNotFoundError"),
    BadInputCase("load_number_words", skip="reads a file path (default: the shipped table)"),
    BadInputCase("load_words", skip="reads a file path (default: the shipped word list)"),
    BadInputCase("task_counts", lambda: {"proportions": np.array([0.5, 0.25, 0.25]), "m": 10},
                 bad={"proportions": ARRAY, "m": SIZE}),
    BadInputCase("PromptItem", skip="a result container returned by build_prompt"),
    BadInputCase("build_prompt", lambda: {"family": _fam(), "counts": np.array([2, 1]), "rng": 0,
                                          "order": "random"},
                 bad={"counts": ARRAY, "order": TEXT}),
    BadInputCase("MixturePromptBuilder", lambda: {"family": _fam(), "m": 6, "proportions": np.array([0.5, 0.5]),
                                                  "order": "random", "random_state": 1},
                 bad={"m": SIZE, "proportions": ARRAY, "order": TEXT}),
    BadInputCase("MixturePromptBuilder.sample", lambda: {"n": 2},
                 obj=lambda: __import__("icml25.task_superposition", fromlist=["x"]).MixturePromptBuilder(_fam(), 4),
                 bad={"n": SIZE}),
    BadInputCase("answer_probabilities", lambda: {"model": _mock(), "prompts": ["q="], "answers": [["12", "7"]]}),
    BadInputCase("token_lm", skip="takes a model object (HFModel, TinyGPT or TokenLM); other types raise TypeError"),
    BadInputCase("TokenLM", skip="a typing Protocol"),
    BadInputCase("superposition_stats", lambda: {"p": _P, "lam_hat": np.array([0.5, 0.5]), "threshold": 0.1},
                 bad={"p": ARRAY, "lam_hat": ARRAY, "threshold": PROB}),
    BadInputCase("kl_to_mixture", lambda: {"p": _P, "lam_hat": np.array([0.5, 0.5])},
                 bad={"p": ARRAY, "lam_hat": ARRAY}),
    BadInputCase("calibration_error", lambda: {"mean_p": _P, "lam": np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])},
                 bad={"mean_p": ARRAY, "lam": ARRAY}),
    BadInputCase("oracle_mixer", lambda: {"example_tasks": np.array([0, 1, 1]), "K": 2}, bad={"K": SIZE}),
    BadInputCase("top_continuations", lambda: {"model": _mock(), "prompt": "q=", "terminator": "\n",
                                               "num_beams": 3, "max_tokens": 4, "eps": 0.01},
                 bad={"terminator": TEXT, "num_beams": SIZE, "max_tokens": SIZE, "eps": PROB}),
    BadInputCase("topk_membership", lambda: {"model": _mock(), "prompt": "q=", "answer_probs": np.array([0.5, 0.3]),
                                             "K": 2, "num_beams": 3},
                 bad={"answer_probs": ARRAY, "K": SIZE, "num_beams": SIZE}),
    BadInputCase("train_icl_model", lambda: {"family": _fam(), "size": "S", "steps": 1, "lr": 1e-3,
                                             "batch_size": 4, "m_max": 3, "show_progress": False, "init": "gpt2",
                                             "tie_embeddings": True},
                 bad={"size": TEXT, "steps": SIZE, "lr": POSITIVE, "batch_size": SIZE, "m_max": SIZE, "init": TEXT}),
    BadInputCase("single_task_accuracy", lambda: {"model": _tiny(), "family": _fam(), "task": 0, "m": 2, "n": 2},
                 bad={"n": SIZE}),
    BadInputCase("single_task_correct", lambda: {"model": _tiny(), "family": _fam(), "task": 0, "m": 2, "n": 2},
                 bad={"n": SIZE}),
    BadInputCase("wilson_interval", lambda: {"successes": 3, "n": 8, "z": 1.96}, bad={"n": SIZE, "z": POSITIVE}),
    BadInputCase("icl_training_batch", lambda: {"family": _fam(), "tokenizer": _tok(),
                                                "rng": np.random.default_rng(0), "batch_size": 2, "m_min": 1,
                                                "m_max": 3},
                 bad={"batch_size": SIZE, "m_max": SIZE}),
    BadInputCase("TaskVectorExtractor", lambda: {"model": _tiny(), "layer": 1}, bad={"layer": SIZE}),
    BadInputCase("TaskVectorExtractor.fit", lambda: {"prompts_by_task": [["12="], ["34="]]}, obj=_tv),
    BadInputCase("TaskVectorExtractor.combination", lambda: {"weights": np.array([0.25, 0.75])}, obj=_tv,
                 bad={"weights": ARRAY}),
    BadInputCase("TaskVectorExtractor.mixture_coefficient", lambda: {"h": np.ones((2, 32)),
                                                                     "lam": np.array([0.25, 0.75])},
                 obj=_tv, bad={"h": ARRAY, "lam": ARRAY}),
    BadInputCase("TaskVectorExtractor.position", lambda: {"h": np.ones((2, 32))}, obj=_tv, bad={"h": ARRAY}),
    BadInputCase("layer_hidden_states", lambda: {"model": _tiny(), "prompts": _PROMPTS, "layer": 1},
                 bad={"layer": SIZE}),
    BadInputCase("patch_and_score", lambda: {"model": _tiny(), "prompts": _PROMPTS, "answers": _ANSWERS,
                                             "layer": 1, "vector": np.zeros(32)},
                 bad={"layer": SIZE, "vector": ARRAY}),
    BadInputCase("MockAnswerLM", lambda: {"masses": {"a": 0.5}, "terminator": "\n", "vocab_size": 256},
                 bad={"terminator": TEXT, "vocab_size": SIZE}),
]
