"""Bad-input registry of rstar_math for the fuzz contract (tests/core/test_bad_input.py): one valid call per public
callable and the kinds of the arguments to corrupt. Models are tiny (d=16, 1 layer) so that the whole registry runs
in seconds."""

from __future__ import annotations

import functools
import tempfile

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase


@functools.lru_cache(maxsize=1)
def _problems():  # type: ignore[no-untyped-def]
    from icml25.rstar_math import StepArithGenerator

    return StepArithGenerator(levels=(1, 2), seed=0).sample(3)


def _problem():  # type: ignore[no-untyped-def]
    return _problems()[0]


def _solver():  # type: ignore[no-untyped-def]
    from icml25.rstar_math import NoisyRuleSolver

    return NoisyRuleSolver(_problems(), seed=0)


def _executor():  # type: ignore[no-untyped-def]
    from icml25.rstar_math import SafeArithExecutor

    return SafeArithExecutor(allow_float=False)


@functools.lru_cache(maxsize=1)
def _trees():  # type: ignore[no-untyped-def]
    from icml25.rstar_math import MCTS, MCTSConfig

    cfg = MCTSConfig(n_candidates=3, rollouts=6, max_depth=8, errors_threshold=2, seed=0)
    return MCTS(_solver(), _executor(), config=cfg).search(_problems())


@functools.lru_cache(maxsize=1)
def _pairs():  # type: ignore[no-untyped-def]
    from icml25.rstar_math import extract_pairs

    return extract_pairs(list(_trees()), min_margin=0.0, min_edit=0)


def _tree_with_children():  # type: ignore[no-untyped-def]
    from icml25.rstar_math import Node, Tree

    t = Tree("q", "1")
    for v in (0.5, -0.5):
        child = Node(text=" x", parent=t.root, depth=1)
        t.root.children.append(child)
        child.N, child.W = 1, v
    t.root.N = 2
    return t


def _beam_search():  # type: ignore[no-untyped-def]
    from icml25.rstar_math import BeamSearchConfig, ConstantScorer, StepBeamSearch

    return StepBeamSearch(_solver(), _executor(), ConstantScorer(0.0),
                          BeamSearchConfig(beam_width=2, n_candidates=2, max_depth=8, seed=0))


def _lm():  # type: ignore[no-untyped-def]
    from icml25.rstar_math import make_tiny_lm

    return make_tiny_lm(n_layer=1, n_head=2, n_embd=16, block_size=64, seed=0)


@functools.lru_cache(maxsize=1)
def _hf_lm():  # type: ignore[no-untyped-def]
    from icml25.llm import HFModel, save_random_gpt2

    d = save_random_gpt2(tempfile.mkdtemp(prefix="rstar-bad-input-"), ["Ann = 3 + 4 <end_of_step>"] * 4, n_layer=1,
                         n_embd=16, n_head=2, n_positions=64)
    return HFModel(d)


def _ppm():  # type: ignore[no-untyped-def]
    from icml25.rstar_math import PPMModel

    return PPMModel.from_policy(_lm())


def _round_kwargs():  # type: ignore[no-untyped-def]
    from icml25.rstar_math import MCTSConfig

    return {"mcts": MCTSConfig(n_candidates=2, rollouts=2), "sft_steps": 1, "ppm_steps": 1, "batch_size": 2,
            "ppm_batch_pairs": 2, "lr": 1e-3, "ppm_loss": "paper"}


def _torch(x):  # type: ignore[no-untyped-def]
    import torch

    return torch.tensor(x, dtype=torch.float32)


_TRAIN = {"steps": SIZE, "batch_size": SIZE, "lr": POSITIVE}

CASES = [
    BadInputCase("AnswerChecker", lambda: {"rel_tol": 1e-6, "use_math_verify": False}, {"rel_tol": POSITIVE}),
    BadInputCase("ErrorRates", lambda: {"wrong_operand": 0.15, "wrong_operation": 0.1, "distractor": 0.1,
                                        "premature_print": 0.05, "undefined_name": 0.03, "level_scale": 0.15,
                                        "inline_bases": 0.5},
                 {"wrong_operand": PROB, "wrong_operation": PROB, "distractor": PROB, "premature_print": PROB,
                  "undefined_name": PROB, "level_scale": REAL, "inline_bases": PROB}),
    BadInputCase("NoisyRuleSolver.sample_steps",
                 lambda: {"prompts": [_solver().fmt.prompt(_problem().question)], "n": 2, "temperature": 1.0,
                          "max_tokens": 32, "seed": 0},
                 {"n": SIZE, "temperature": REAL, "max_tokens": SIZE}, obj=_solver),
    BadInputCase("Chain", skip="a plain record of one sampled chain (built by sample_chains); nothing to compute"),
    BadInputCase("evaluate", lambda: {"problems": _problems()[:2], "policy": _solver(), "executor": _executor(),
                                      "methods": ("greedy", "maj"), "ns": (2,), "max_depth": 8, "seed": 0},
                 {"ns": ARRAY, "max_depth": SIZE}),
    BadInputCase("majority_vote", lambda: {"answers": ["3", "3", None, "4"]}, {"answers": TEXT}),
    BadInputCase("top_k_vote", lambda: {"candidates": [(0.5, "3"), (0.2, "4")], "top_k": 2},
                 {"candidates": TEXT, "top_k": SIZE}),
    BadInputCase("multi_run_mcts", lambda: {"problems": _problems()[:2], "policy": _solver(), "executor": _executor(),
                                            "scorer": __import__("icml25.rstar_math", fromlist=["x"])
                                            .ConstantScorer(0.0), "runs": 2, "rollouts": 1, "top_k": 1},
                 {"runs": SIZE, "rollouts": SIZE, "top_k": SIZE}),
    BadInputCase("sample_chains", lambda: {"policy": _solver(), "executor": _executor(), "problems": _problems(),
                                           "k": 2, "temperature": 1.0, "max_depth": 8, "errors_threshold": 2,
                                           "max_tokens": 32},
                 {"k": SIZE, "temperature": REAL, "max_depth": SIZE, "errors_threshold": SIZE, "max_tokens": SIZE}),
    BadInputCase("ExecResult", skip="a plain record of one execution's stdout/error (built by executors)"),
    BadInputCase("SafeArithExecutor", lambda: {"allow_float": False, "max_abs": 1e9, "max_exponent": 8},
                 {"max_abs": POSITIVE, "max_exponent": SIZE}),
    BadInputCase("accumulated_code", lambda: {"path_codes": [("a = 1", False, False), ("print(a)", True, False)]}),
    BadInputCase("PairRecord", lambda: {"prompt": "p", "pos": " a", "neg": " b", "pos_count": 2, "neg_count": 2,
                                        "margin": 0.5},
                 {"pos_count": SIZE, "neg_count": SIZE, "margin": REAL}),
    BadInputCase("SFTRecord", lambda: {"query": "q", "response": " r", "avg_q": 0.5, "min_q": 0.2},
                 {"avg_q": REAL, "min_q": REAL}),
    BadInputCase("edit_distance", lambda: {"a": "kitten", "b": "sitting", "cap": 10}, {"cap": SIZE}),
    BadInputCase("code_tokens", lambda: {"step": " # Bob has 3 more than Ann \n Bob = Ann + 3 <end_of_step>"}),
    BadInputCase("rename_entities", lambda: {"texts": ["Ann has 3 pens .", " Ann = 3"], "rng": np.random.default_rng(0)}),
    BadInputCase("augment_renamed", lambda: {"examples": [("Ann has 3 pens .", " Ann = 3")], "copies": 2, "seed": 0}),
    BadInputCase("extract_pairs", lambda: {"trees": list(_trees()), "min_margin": 0.5, "min_edit": 20,
                                           "edit_unit": "code_token"}, {"min_margin": REAL, "edit_unit": TEXT}),
    BadInputCase("extract_sft", lambda: {"trees": list(_trees()), "top_k": 2}, {"top_k": SIZE}),
    BadInputCase("rejection_sampled_sft", lambda: {"policy": _solver(), "executor": _executor(),
                                                   "problems": _problems(), "n_target": 3, "samples": 2,
                                                   "per_problem": 1, "max_depth": 8, "seed": 0},
                 {"n_target": SIZE, "samples": SIZE, "per_problem": SIZE, "max_depth": SIZE}),
    BadInputCase("filter_pairs", lambda: {"pairs": list(_pairs()), "min_margin": 0.5, "min_edit": 20,
                                          "edit_unit": "char"}, {"min_margin": REAL, "edit_unit": TEXT}),
    BadInputCase("final_answer_pairs", lambda: {"tree": _trees()[0]}),
    BadInputCase("to_trl", lambda: {"pairs": list(_pairs())}),
    BadInputCase("MCTS.search", lambda: {"problems": _problems()[:1], "rollouts": 2}, {"rollouts": SIZE},
                 obj=lambda: __import__("icml25.rstar_math", fromlist=["MCTS"]).MCTS(_solver(), _executor())),
    BadInputCase("MCTSConfig", lambda: {"c_puct": 2.0, "n_candidates": 4, "rollouts": 8, "max_depth": 16,
                                        "temperature": 1.0, "errors_threshold": 1, "max_tokens": 64},
                 {"c_puct": REAL, "n_candidates": SIZE, "rollouts": SIZE, "max_depth": SIZE, "temperature": REAL,
                  "errors_threshold": SIZE, "max_tokens": SIZE}),
    BadInputCase("ConstantScorer", lambda: {"value": 0.5}, {"value": REAL}),
    BadInputCase("BeamSearchConfig", lambda: {"beam_width": 4, "n_candidates": 4, "max_depth": 16,
                                             "temperature": 1.0, "errors_threshold": 1, "max_tokens": 64, "seed": 0},
                 {"beam_width": SIZE, "n_candidates": SIZE, "max_depth": SIZE, "temperature": REAL,
                  "errors_threshold": SIZE, "max_tokens": SIZE}),
    BadInputCase("StepBeamSearch.search", lambda: {"problems": _problems()[:2]}, obj=_beam_search),
    BadInputCase("finished_solutions", lambda: {"tree": _beam_search().search(_problems()[:1])[0]}),
    BadInputCase("SubprocessExecutor", skip="sandbox.py is being rewritten under issue 33 (branch h33), which owns "
                 "its input checks"),
    BadInputCase("HiddenStateValueHead", lambda: {"lm": _lm(), "head": {"weight": np.ones((1, 16)), "bias":
                                                                        np.zeros(1)}, "scale": 5.0},
                 {"scale": POSITIVE}),
    BadInputCase("LMStepPolicy.sample_steps", lambda: {"prompts": ["Ann has 3 apples ."], "n": 2,
                                                       "temperature": 1.0, "max_tokens": 4, "seed": 0},
                 {"n": SIZE, "temperature": REAL, "max_tokens": SIZE},
                 obj=lambda: __import__("icml25.rstar_math", fromlist=["LMStepPolicy"]).LMStepPolicy(_lm())),
    BadInputCase("run_eval", skip="needs a model whose tokenizer covers benchmark text (hf:/openai:; rStar's "
                 "word-tokenizer policies load through load_model('tiny:') but know only StepArith words); its "
                 "argument checks run before loading and are tested in "
                 "test_real_llm.py::test_run_eval_rejects_bad_arguments"),
    BadInputCase("sharded_search", lambda: {"problems": _problems()[:2], "make_search": _make_search,
                                            "n_shards": 2, "backend": "serial", "rollouts": 2},
                 {"n_shards": SIZE, "backend": TEXT, "rollouts": SIZE}),
    BadInputCase("load_benchmark", lambda: {"name": "gsm8k"}, {"name": TEXT}),
    BadInputCase("load_gsm8k_annotated", lambda: {}),
    BadInputCase("gsm8k_code_steps", lambda: {"solution": "Ann has <<2+3=5>>5 apples.\n#### 5"},
                 {"solution": TEXT}),
    BadInputCase("Step", lambda: {"kind": "code", "code": "a = 1"}, {"kind": TEXT}),
    BadInputCase("StepFormat", lambda: {"prompt_template": "Q: {question}\nA:"}, {"prompt_template": TEXT}),
    BadInputCase("extract_boxed", lambda: {"text": "so \\boxed{ 5 }"}),
    BadInputCase("parse_step", lambda: {"text": " # c \n a = 1 <end_of_step>"}),
    BadInputCase("Problem", lambda: {"question": _problem().question, "answer": _problem().answer,
                                     "level": _problem().level, "defs": list(_problem().defs),
                                     "final": _problem().final, "values": dict(_problem().values)},
                 {"question": TEXT, "answer": TEXT, "level": SIZE}),
    BadInputCase("StepArithGenerator", lambda: {"levels": (1, 2, 3), "seed": 0}, {"levels": ARRAY}),
    BadInputCase("step_is_consistent", lambda: {"problem": _problem(), "partial": "",
                                                "step": _problem().canonical_steps()[0]}),
    BadInputCase("Node", lambda: {"text": " a", "N": 2, "W": 1.0, "depth": 1}, {"N": REAL, "W": REAL}),
    BadInputCase("Tree", lambda: {"question": "How many ?", "gold": "3"}, {"question": TEXT}),
    BadInputCase("check_invariants", lambda: {"tree": _trees()[0]}),
    BadInputCase("select_child", lambda: {"node": _tree_with_children().root, "c": 2.0, "unvisited_bonus": "zero"},
                 {"c": REAL, "unvisited_bonus": TEXT}),
    BadInputCase("uct_score", lambda: {"node": _tree_with_children().root.children[0], "c": 2.0,
                                       "unvisited_bonus": "zero"}, {"c": REAL, "unvisited_bonus": TEXT}),
    BadInputCase("update", lambda: {"node": _tree_with_children().root.children[0], "value": 0.5},
                 {"value": REAL}),
    BadInputCase("update_recursive", lambda: {"node": _tree_with_children().root.children[0], "value": 0.5},
                 {"value": REAL}),
    BadInputCase("WordTokenizer.encode", lambda: {"text": "Ann has 3 apples ."},
                 obj=lambda: __import__("icml25.rstar_math", fromlist=["WordTokenizer"]).WordTokenizer()),
    BadInputCase("pretrain_base", lambda: {"lm": _lm(), "problems": _problems(), "steps": 1, "batch_size": 2,
                                           "lr": 1e-3, "warmup": 0}, _TRAIN),
    BadInputCase("pretraining_corpus", lambda: {"problems": _problems()}),
    BadInputCase("PPMModel", lambda: {"trunk": _lm().module, "tokenizer": _lm().tokenizer, "block_size": 64,
                                      "dropout": 0.1, "score_transform": "tanh5"},
                 {"block_size": SIZE, "dropout": PROB, "score_transform": TEXT}),
    BadInputCase("pair_accuracy", lambda: {"ppm": _ppm(), "pairs": list(_pairs())[:4]}),
    BadInputCase("ppm_pair_loss", lambda: {"h_pos": _torch([1.0, 0.5]), "h_neg": _torch([0.0, 0.2]),
                                           "weighting": "paper"},
                 {"h_pos": ARRAY, "h_neg": ARRAY, "weighting": TEXT}),
    BadInputCase("train_ppm", lambda: {"ppm": _ppm(), "pairs": list(_pairs())[:4], "steps": 1, "batch_size": 2,
                                       "lr": 1e-3, "warmup": 0, "grad_clip": 1.0, "loss": "paper"},
                 {**_TRAIN, "grad_clip": POSITIVE, "loss": TEXT}),
    BadInputCase("sft_examples", lambda: {"records": __import__("icml25.rstar_math", fromlist=["extract_sft"])
                                          .extract_sft(list(_trees()))}),
    BadInputCase("train_sft", lambda: {"lm": _lm(), "examples": [("Ann has 3 apples .", " # c \n a = 3 "
                                                                   "<end_of_step>")], "steps": 1, "batch_size": 2,
                                       "lr": 1e-3, "warmup": 0, "grad_clip": 1.0},
                 {**_TRAIN, "grad_clip": POSITIVE}),
    BadInputCase("make_orm", lambda: {"lm": _lm()}),
    BadInputCase("make_pqm", lambda: {"lm": _lm()}),
    BadInputCase("orm_targets", lambda: {"trees": list(_trees())}),
    BadInputCase("pqm_targets", lambda: {"trees": list(_trees()), "min_visits": 2}, {"min_visits": SIZE}),
    BadInputCase("train_value_head", lambda: {"model": _ppm(), "data": [("p", " s", 0.5), ("p", " t", -0.5)],
                                              "kind": "pqm", "steps": 1, "batch_size": 2, "lr": 1e-3, "warmup": 0},
                 {**_TRAIN, "kind": TEXT}),
    BadInputCase("RoundConfig", _round_kwargs, {"sft_steps": SIZE, "ppm_steps": SIZE, "batch_size": SIZE,
                                                "ppm_batch_pairs": SIZE, "lr": POSITIVE, "ppm_loss": TEXT}),
    BadInputCase("SelfEvolution", lambda: {"problems": _problems(), "bootstrap_policy": _solver(),
                                           "rounds": [__import__("icml25.rstar_math", fromlist=["RoundConfig"])
                                                      .RoundConfig(**_round_kwargs())],
                                           "workdir": tempfile.mkdtemp(prefix="rstar-bad-input-"),
                                           "base_lm": _lm(), "executor": _executor(), "time_budget_s": 60.0,
                                           "max_tokens": 32, "search_workers": 1, "search_backend": "process"},
                 {"time_budget_s": POSITIVE, "max_tokens": SIZE, "search_workers": SIZE, "search_backend": TEXT}),
    BadInputCase("paper_rounds", lambda: {"sft_steps": 10, "lr": 1e-3}, {"sft_steps": SIZE, "lr": POSITIVE}),
    BadInputCase("repo_rounds", lambda: {"sft_steps": 10, "lr": 1e-3}, {"sft_steps": SIZE, "lr": POSITIVE}),
    BadInputCase("TinyStepPolicy", lambda: {"lm": _lm(), "top_p": 0.9}, {"top_p": PROB}),
    BadInputCase("TinyGPTBackend", lambda: {"base_lm": _lm(), "ppm_dropout": 0.1, "score_transform": "tanh5"},
                 {"ppm_dropout": PROB, "score_transform": TEXT}),
    BadInputCase("TinyGPTBackend.train_policy", lambda: {"policy": _lm(), "examples": [("q", " Ann = 3 <end_of_step>")],
                                                         "steps": 1, "batch_size": 1, "lr": 1e-3},
                 _TRAIN, obj=lambda: __import__("icml25.rstar_math", fromlist=["TinyGPTBackend"]).TinyGPTBackend(_lm())),
    BadInputCase("LoRABackend", lambda: {"lm": _hf_lm(), "r": 2, "alpha": 4.0, "lora_dropout": 0.0, "max_length": 64,
                                         "warmup": 1, "weight_decay": 0.0, "grad_clip": 1.0, "ppm_dropout": 0.1,
                                         "score_scale": 5.0, "seed": 0},
                 {"r": SIZE, "alpha": POSITIVE, "lora_dropout": PROB, "max_length": SIZE, "weight_decay": REAL,
                  "grad_clip": POSITIVE, "ppm_dropout": PROB, "score_scale": POSITIVE}),
    BadInputCase("make_tiny_lm", lambda: {"n_layer": 1, "n_head": 2, "n_embd": 16, "block_size": 64,
                                          "dropout": 0.0},
                 {"n_layer": SIZE, "n_head": SIZE, "n_embd": SIZE, "block_size": SIZE, "dropout": PROB}),
]


def _make_search():  # type: ignore[no-untyped-def]
    from icml25.rstar_math import MCTS, MCTSConfig

    return MCTS(_solver(), _executor(), config=MCTSConfig(n_candidates=2, rollouts=2, seed=0))
