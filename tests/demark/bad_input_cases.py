"""Bad-input registry of ``icml25.demark`` for the fuzz contract (tests/core/test_bad_input.py)."""

from __future__ import annotations

import functools

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase

_T = dict(pre=(0,), mid=(1,), post=(2,) * 10)


def _template():
    from icml25.demark import ProbeTemplate

    return ProbeTemplate(**_T)


def _served():
    from icml25.demark import InstructionFollowingLM

    return InstructionFollowingLM(_template(), vocab_size=40, seed=1)


def _wm():
    from icml25.demark import KGWWatermark

    return KGWWatermark(40, delta=2.0, h=1, key=5)


def _oracle():
    from icml25.demark import WatermarkedOracle

    return WatermarkedOracle(_served(), _wm())


def _prober():
    from icml25.demark import RandomSelectionProber

    return RandomSelectionProber(_oracle(), _template())


def _sim():
    from icml25.demark import SimulatedProbeOracle

    return SimulatedProbeOracle(300, delta=2.0, h=1, seed=0)


@functools.cache
def _torch_net():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Linear(4, 10))


@functools.cache
def _gpt2():
    import torch
    import transformers

    torch.manual_seed(0)
    return transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=50, n_layer=1, n_embd=16, n_head=2,
                                                                 n_positions=64)).eval()


def _R():
    return np.array([[0.0, 2.0, 2.1], [-2.0, 0.0, 0.1], [-2.1, -0.1, 0.0]])


def _ngram():
    from icml25.demark import NGramLM

    return NGramLM([3, 4, 3, 4, 3, 5], vocab_size=8, order=2)


_TEXT = "to be or not to be , that is the question . whether tis nobler in the mind to suffer"

CASES = [
    BadInputCase("KGWWatermark", lambda: {"vocab_size": 50, "gamma": 0.5, "delta": 2.0, "h": 2, "key": 3,
                                          "prf": "sha256"},
                 bad={"vocab_size": SIZE, "gamma": PROB, "delta": POSITIVE, "h": SIZE, "prf": TEXT}),
    BadInputCase("KGWWatermark.green_mask", lambda: {"context": np.array([1, 2, 3])}, obj=_wm, bad={"context": ARRAY}),
    BadInputCase("KGWWatermark.detect", lambda: {"ids": np.array([1, 2, 3, 4, 5]), "prompt_len": 1}, obj=_wm,
                 bad={"ids": ARRAY, "prompt_len": REAL}),
    BadInputCase("KGWWatermark.apply", lambda: {"logits": np.zeros(40), "contexts": [1, 2]}, obj=_wm,
                 bad={"logits": ARRAY}),
    BadInputCase("Detection", skip="a result container returned by KGWWatermark.detect"),
    BadInputCase("kgw_z_score", lambda: {"n_green": 6, "n_scored": 10, "gamma": 0.5},
                 bad={"n_scored": SIZE, "gamma": PROB}),
    BadInputCase("NextTokenLM", skip="an abstract base class (protocol of served models)"),
    BadInputCase("LocalLM", lambda: {"module": _torch_net(), "vocab_size": 10, "batch_size": 4},
                 bad={"vocab_size": SIZE, "batch_size": SIZE}),
    BadInputCase("HFNextTokenLM", lambda: {"model": _gpt2(), "batch_size": 4, "incremental": 2},
                 bad={"batch_size": SIZE}),
    BadInputCase("LMOracle", lambda: {"lm": _served(), "random_state": 0}, bad={"random_state": REAL}),
    BadInputCase("LMOracle.topk_logprobs", lambda: {"batch": [[1, 2, 3]], "k": 3}, obj=_oracle, bad={"k": SIZE}),
    BadInputCase("LMOracle.sample", lambda: {"batch": [[1, 2, 3]], "n": 3}, obj=_oracle, bad={"n": SIZE}),
    BadInputCase("WatermarkedOracle", lambda: {"lm": _served(), "watermark": _wm(), "random_state": 0},
                 bad={"random_state": REAL}),
    BadInputCase("HFCausalLMOracle", lambda: {"model": _gpt2(), "batch_size": 4}, bad={"batch_size": SIZE}),
    BadInputCase("OpenAICompatibleOracle", lambda: {"base_url": "http://localhost:1/v1", "model": "m",
                                                    "vocab_size": 100},
                 bad={"base_url": TEXT, "model": TEXT, "vocab_size": SIZE}),
    BadInputCase("ProbeTemplate", lambda: dict(_T), bad={"pre": ARRAY, "post": ARRAY}),
    BadInputCase("ProbeTemplate.build", lambda: {"context": np.array([5, 6]), "u": 7, "v": 8}, obj=_template,
                 bad={"context": ARRAY, "u": REAL, "v": REAL}),
    BadInputCase("RandomSelectionProber", lambda: {"oracle": _oracle(), "template": _template(), "mode": "graybox",
                                                   "n_samples": 10, "top_k": 20, "batch_size": 32},
                 bad={"mode": TEXT, "n_samples": SIZE, "top_k": SIZE, "batch_size": SIZE}),
    BadInputCase("RandomSelectionProber.ratio_matrix", lambda: {"context_ids": np.array([5]),
                                                                "candidate_ids": np.array([10, 11, 12])},
                 obj=_prober, bad={"context_ids": ARRAY, "candidate_ids": ARRAY}),
    BadInputCase("token_scores", lambda: {"R": _R(), "alpha1": 0.2, "alpha2": 10.0},
                 bad={"alpha1": REAL, "alpha2": POSITIVE}),
    BadInputCase("DEFAULT_INSTRUCTION", skip="a constant string"),
    BadInputCase("PRF_SCHEMES", skip="a constant tuple of names"),
    BadInputCase("estimate_prefix_length", lambda: {"prober": _sim(), "words": np.arange(20, 120), "h_max": 3,
                                                    "m": 10, "beta": 0.75, "n_contexts": 1, "random_state": 0},
                 bad={"words": ARRAY, "h_max": SIZE, "m": SIZE, "beta": PROB, "n_contexts": SIZE,
                      "random_state": REAL}),
    BadInputCase("estimate_delta", lambda: {"prober": _sim(), "words": np.arange(20, 120), "h_hat": 1, "m": 10,
                                            "n_contexts": 3, "kappa": 0.1, "random_state": 0},
                 bad={"words": ARRAY, "h_hat": SIZE, "m": SIZE, "n_contexts": SIZE, "kappa": PROB,
                      "random_state": REAL}),
    BadInputCase("identify_green_list", lambda: {"prober": _sim(), "context_ids": np.array([3]),
                                                 "candidate_ids": np.array([10, 11, 12, 13]), "delta_hat": 2.0},
                 bad={"context_ids": ARRAY, "candidate_ids": ARRAY, "delta_hat": POSITIVE}),
    BadInputCase("pair_scores", lambda: {"R": _R(), "delta_hat": 2.0}, bad={"delta_hat": POSITIVE}),
    BadInputCase("DeMark", lambda: {"prober": _prober(), "h_hat": 1, "delta_hat": 2.0, "top_k": 5, "eta": 1.0,
                                    "random_state": 0},
                 bad={"h_hat": SIZE, "delta_hat": POSITIVE, "top_k": SIZE, "eta": REAL, "random_state": REAL}),
    BadInputCase("DeMark.remove", lambda: {"prompt_ids": np.array([10, 11]), "max_new_tokens": 2},
                 obj=lambda: __import__("icml25.demark", fromlist=["DeMark"]).DeMark(_prober(), 1, 2.0, top_k=4),
                 bad={"prompt_ids": ARRAY, "max_new_tokens": SIZE}),
    BadInputCase("Spoofer", lambda: {"target_prober": _sim(), "surrogate": _ngram_300(), "h_hat": 1,
                                     "delta_hat": 2.0, "top_k": 5, "random_state": 0},
                 bad={"h_hat": SIZE, "delta_hat": POSITIVE, "top_k": SIZE, "random_state": REAL}),
    BadInputCase("RandomScrubber", lambda: {"oracle": _oracle(), "delta_hat": 2.0, "top_k": 5, "random_state": 0},
                 bad={"delta_hat": POSITIVE, "top_k": SIZE, "random_state": REAL}),
    BadInputCase("StepRecord", skip="a record produced by DeMark.remove"),
    BadInputCase("sample_topk", lambda: {"oracle": _oracle(), "prompts": [[10, 11]], "max_new_tokens": 2,
                                         "top_k": 3, "random_state": 0},
                 bad={"max_new_tokens": SIZE, "top_k": SIZE, "random_state": REAL}),
    BadInputCase("tpr_at_fpr", lambda: {"p_values_wm": np.array([0.001, 0.2]), "p_values_clean": np.array(
        [0.3, 0.5, 0.02]), "fprs": np.array([0.1])},
                 bad={"p_values_wm": ARRAY, "p_values_clean": ARRAY, "fprs": ARRAY}),
    BadInputCase("median_p", lambda: {"p_values": np.array([0.1, 0.2, 0.3])}, bad={"p_values": ARRAY}),
    BadInputCase("topk_kl", lambda: {"p": np.array([0.2, 0.8]), "q": np.array([0.5, 0.5])},
                 bad={"p": ARRAY, "q": ARRAY}),
    BadInputCase("perplexity", lambda: {"lm": _ngram(), "prompts": [[3]], "continuations": [[4, 3]]}),
    BadInputCase("InstructionFollowingLM", lambda: {"template": _template(), "vocab_size": 30, "sigma_b": 0.2,
                                                    "sigma_e": 0.2, "eps_mass": 0.05, "position_bias": 0.0,
                                                    "seed": 0},
                 bad={"vocab_size": SIZE, "sigma_b": REAL, "sigma_e": REAL, "eps_mass": PROB,
                      "position_bias": REAL, "seed": REAL}),
    BadInputCase("InstructionFollowingLM.next_logprobs", lambda: {"batch": [[1, 2, 3]]}, obj=_served),
    BadInputCase("SimulatedProbeOracle", lambda: {"vocab_size": 100, "delta": 2.0, "h": 1, "gamma": 0.5,
                                                  "sigma_b": 0.2, "sigma_e": 0.2, "seed": 0},
                 bad={"vocab_size": SIZE, "delta": POSITIVE, "h": SIZE, "gamma": PROB, "sigma_b": REAL,
                      "sigma_e": REAL, "seed": REAL}),
    BadInputCase("SimulatedProbeOracle.ratio_matrix", lambda: {"context_ids": np.array([3]),
                                                               "candidate_ids": np.array([5, 6, 7])}, obj=_sim,
                 bad={"context_ids": ARRAY, "candidate_ids": ARRAY}),
    BadInputCase("WordTokenizer", lambda: {"text": _TEXT, "vocab_size": 40}, bad={"text": TEXT, "vocab_size": SIZE}),
    BadInputCase("NGramLM", lambda: {"ids": np.array([3, 4, 3, 4, 3, 5]), "vocab_size": 8, "order": 2,
                                     "discount": 0.75},
                 bad={"ids": ARRAY, "vocab_size": SIZE, "order": SIZE, "discount": PROB}),
    BadInputCase("NGramLM.next_logprobs", lambda: {"batch": [[3, 4]]}, obj=_ngram),
]


def _ngram_300():
    from icml25.demark import NGramLM

    return NGramLM(list(range(16, 300)) * 2, vocab_size=300, order=2)
