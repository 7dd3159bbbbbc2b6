"""Bad-input registry of :mod:`icml25.croq` for the fuzz contract (tests/core/test_bad_input.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase


def _qs(n: int = 30, start: int = 0) -> list:
    from icml25.croq import MCQ

    return [MCQ(f"q{i}", ("a", "b", "c", "d"), i % 4) for i in range(start, start + n)]


class _Ranker:
    """Prefers later options; a hidden state of 2 features."""

    def answer(self, qs: Any) -> Any:
        from icml25.croq import AnswerOutput

        z = np.full((len(qs), max(q.n_options for q in qs)), -np.inf)
        for i, q in enumerate(qs):
            z[i, :q.n_options] = np.arange(q.n_options, dtype=float) + 0.1 * (i % 3)
        return AnswerOutput(z, np.ones((len(qs), 2)) * np.arange(len(qs))[:, None])


_HF: list[Any] = []


def _hf_lm() -> Any:
    """A tiny random GPT-2 behind HFModel (OptionTextAnswerer needs a local transformers backend), built once."""
    if not _HF:
        import tempfile

        from icml25.llm import HFModel, save_random_gpt2

        corpus = ["Question: which city ? Options: A. Paris B. Rome C. Oslo D. Bern Answer: Paris"] * 4
        _HF.append(HFModel(save_random_gpt2(tempfile.mkdtemp(prefix="icml25-croq-gpt2-"), corpus, n_layer=1,
                                            n_embd=16)))
    return _HF[0]


class _LM:
    """A fake LanguageModel: letter tokens are their own ids."""

    class tokenizer:  # noqa: N801
        @staticmethod
        def encode(text: str) -> list[int]:
            return [ord(c) for c in text]

    def next_token_logits(self, prompts: list[str]) -> np.ndarray:
        return np.tile(np.arange(128, dtype=float), (len(prompts), 1))


def _croq() -> Any:
    from icml25.croq import CROQ

    return CROQ(_Ranker(), alpha=0.2).fit(None, _qs(40, 100))


def _cp() -> Any:
    from icml25.croq import SplitConformal

    cp = SplitConformal(0.2)
    cp.calibrate(np.linspace(0.0, 1.0, 30))
    return cp


def _scores() -> np.ndarray:
    return np.random.default_rng(0).dirichlet(np.ones(4), size=30)


def _features() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {"X": rng.normal(size=(40, 3)), "y": rng.integers(0, 3, size=40), "n_options": np.full(40, 3)}


def _fitted_scorer() -> Any:
    from icml25.croq import CPOptScorer

    f = _features()
    return CPOptScorer(hidden_dims=(4,), epochs=2).fit(f["X"], f["y"], n_options=f["n_options"])


def _cp_opt_loss_args() -> dict[str, Any]:
    import torch

    return {"scores": torch.full((5, 3), 1 / 3), "tau": torch.tensor(0.3), "y": torch.tensor([0, 1, 2, 0, 1]),
            "mask": torch.ones(5, 3, dtype=torch.bool), "alpha": 0.1, "beta": 10.0, "lam": 10.0, "lam_ce": 1.0}


def _task() -> Any:
    from icml25.croq import KnowledgeTask

    return KnowledgeTask(seed=0)


CASES = [
    BadInputCase("SplitConformal", lambda: {"alpha": 0.1}, {"alpha": PROB}),
    BadInputCase("SplitConformal.calibrate", lambda: {"scores_true": np.linspace(0, 1, 30)},
                 {"scores_true": ARRAY}, obj=lambda: __import__("icml25.croq", fromlist=["x"]).SplitConformal(0.2)),
    BadInputCase("SplitConformal.calibrate_from_scores", lambda: {"scores": _scores(), "y": np.arange(30) % 4},
                 {"scores": ARRAY, "y": ARRAY}, obj=lambda: __import__("icml25.croq", fromlist=["x"]).SplitConformal(0.2)),
    BadInputCase("SplitConformal.predict_sets", lambda: {"scores": _scores()}, {"scores": ARRAY}, obj=_cp),
    BadInputCase("conformal_threshold", lambda: {"conf": np.linspace(0, 1, 30), "alpha": 0.1},
                 {"conf": ARRAY, "alpha": PROB}),
    BadInputCase("min_calibration_size", lambda: {"alpha": 0.1}, {"alpha": PROB}),
    BadInputCase("option_mask", lambda: {"n_options": np.array([2, 4, 3]), "m": 4}, {"n_options": ARRAY, "m": SIZE}),
    BadInputCase("MCQ", lambda: {"question": "q", "options": ("a", "b"), "answer": 1}, {"question": TEXT}),
    BadInputCase("render_prompt", lambda: {"mcq": _qs(1)[0], "template": "{question}\n{options}\nAnswer:"},
                 {"template": TEXT}),
    BadInputCase("revise", lambda: {"mcq": _qs(1)[0], "keep": np.array([0, 2])}, {"keep": ARRAY}),
    BadInputCase("answer_indices", lambda: {"mcqs": _qs(3)}),
    BadInputCase("paired_bootstrap_ci", lambda: {"a": np.array([0.0, 1, 1, 0]), "b": np.array([1.0, 1, 1, 0]),
                                                 "n_boot": 50, "level": 0.9},
                 {"a": ARRAY, "b": ARRAY, "n_boot": SIZE, "level": PROB}),
    BadInputCase("paired_t_test", lambda: {"a": np.array([0.0, 1, 1, 0]), "b": np.array([1.0, 1, 0, 1])},
                 {"a": ARRAY, "b": ARRAY}),
    BadInputCase("AnswerOutput", lambda: {"letter_logits": np.array([[0.0, 1.0], [2.0, -np.inf]]),
                                          "hidden": np.ones((2, 3))}, {"hidden": ARRAY}),
    BadInputCase("AnswerOutput.probabilities", lambda: {},
                 obj=lambda: __import__("icml25.croq", fromlist=["x"]).AnswerOutput(np.array([[0.0, 1.0]]))),
    BadInputCase("LMAnswerer", lambda: {"lm": _LM(), "batch_size": 8}, {"batch_size": SIZE}),
    BadInputCase("LMAnswerer.answer", lambda: {"mcqs": _qs(3)},
                 obj=lambda: __import__("icml25.croq", fromlist=["x"]).LMAnswerer(_LM())),
    BadInputCase("LLMAnswerer", lambda: {"lm": _LM(), "letter_variants": ("",), "batch_size": 8, "top_k": 5,
                                         "instruction": "Answer."},
                 {"batch_size": SIZE, "top_k": SIZE}),
    BadInputCase("LLMAnswerer.answer", lambda: {"mcqs": _qs(3)},
                 obj=lambda: __import__("icml25.croq", fromlist=["x"]).LLMAnswerer(_LM(), letter_variants=("",))),
    BadInputCase("LLMAnswerer.prompt", lambda: {"mcq": _qs(1)[0]},
                 obj=lambda: __import__("icml25.croq", fromlist=["x"]).LLMAnswerer(_LM(), letter_variants=("",))),
    BadInputCase("LLMAnswerer.letter_mass", lambda: {"mcqs": _qs(3)},
                 obj=lambda: __import__("icml25.croq", fromlist=["x"]).LLMAnswerer(_LM(), letter_variants=("",))),
    BadInputCase("OptionTextAnswerer", lambda: {"lm": _hf_lm(), "option_prefix": " ", "batch_size": 8, "top_k": 5},
                 {"batch_size": SIZE, "top_k": SIZE}),
    BadInputCase("TopLogprobsAnswerer", lambda: {"top_logprobs_fn": lambda ps: [{"A": -0.1, "B": -2.0}] * len(ps),
                                                 "floor": -20.0}, {"floor": REAL}),
    BadInputCase("OpenAICompatibleAnswerer", lambda: {"base_url": "http://localhost:8000/v1", "model": "m",
                                                      "top_logprobs": 5, "timeout": 10.0},
                 {"base_url": TEXT, "model": TEXT, "top_logprobs": SIZE, "timeout": POSITIVE}),
    BadInputCase("letter_logits_from_top_logprobs", lambda: {"top": {"A": -0.1, " B": -2.0}, "n_options": 4,
                                                             "floor": -30.0},
                 {"n_options": SIZE, "floor": REAL}),
    BadInputCase("CROQ", lambda: {"answerer": _Ranker(), "scorer": "logits", "alpha": 0.1}, {"alpha": PROB}),
    BadInputCase("CROQ.calibrate", lambda: {"cal": _qs(40, 100), "alpha": 0.2}, {"alpha": PROB}, obj=_croq),
    BadInputCase("CROQ.evaluate", lambda: {"test": _qs(20), "n_boot": 20}, {"n_boot": SIZE}, obj=_croq),
    BadInputCase("CROQ.alpha_sweep", lambda: {"alphas": [0.1, 0.2], "cal": _qs(40, 100), "test": _qs(20)},
                 {"alphas": ARRAY}, obj=_croq),
    BadInputCase("CROQResult", skip="a plain record of per-question outcomes returned by CROQ.predict; users never "
                 "build one"),
    BadInputCase("answer_features", lambda: {"out": _Ranker().answer(_qs(3))}),
    BadInputCase("revise_and_answer", lambda: {"answerer": _Ranker(), "mcqs": _qs(3),
                                               "sets": np.array([[True, True, False, False]] * 3),
                                               "first_answer": np.array([3, 3, 3]), "scores": np.ones((3, 4))},
                 {"first_answer": ARRAY, "scores": ARRAY}),
    BadInputCase("build_mcq", lambda: {"dataset": "truthfulqa", "n_options": 4, "seed": 0},
                 {"dataset": TEXT, "n_options": SIZE}),
    BadInputCase("load_mmlu_redux", lambda: {"subjects": ["anatomy"]}),
    BadInputCase("load_truthfulqa", lambda: {}),
    BadInputCase("load_toolalpaca", lambda: {}),
    BadInputCase("load_countries", lambda: {}),
    BadInputCase("KnowledgeTask", lambda: {"n_entities": 10, "n_relations": 2, "n_values": 20, "cluster_size": 5},
                 {"n_entities": SIZE, "n_relations": SIZE, "n_values": SIZE, "cluster_size": SIZE}),
    BadInputCase("KnowledgeTask.sample", lambda: {"n": 5, "n_options": 4, "rng": np.random.default_rng(0)},
                 {"n": SIZE, "n_options": SIZE}, obj=_task),
    BadInputCase("CPOptScorer", lambda: {"beta": 10.0, "lam": 10.0, "alpha": 0.1, "epochs": 2, "lr": 1e-3},
                 skip="scikit-learn estimator: the constructor only stores parameters; fit validates them "
                      "(tests/croq/test_cp_opt.py::test_hyper_parameters_are_validated_in_fit)"),
    # y is left to scikit-learn's target checks: its estimator checks require a (n, 1) y to be accepted with a
    # DataConversionWarning (check_supervised_y_2d); out-of-range and NaN labels are covered in tests/croq
    BadInputCase("CPOptScorer.fit", _features, {"X": ARRAY, "n_options": ARRAY},
                 obj=lambda: __import__("icml25.croq", fromlist=["x"]).CPOptScorer(epochs=2)),
    BadInputCase("CPOptScorer.option_scores", lambda: {"X": _features()["X"], "n_options": np.full(40, 3)},
                 {"X": ARRAY, "n_options": ARRAY}, obj=_fitted_scorer),
    BadInputCase("ScoreMLP", lambda: {"in_dim": 3, "n_slots": 4, "hidden_dims": (8,)},
                 {"in_dim": SIZE, "n_slots": SIZE}),
    BadInputCase("cp_opt_loss", _cp_opt_loss_args, {"scores": ARRAY, "tau": REAL, "alpha": PROB, "beta": POSITIVE,
                                                    "lam": REAL, "lam_ce": REAL}),
    BadInputCase("TinyMCQReader", lambda: {"task": _task(), "n_layer": 1, "n_head": 2, "n_embd": 16, "seed": 0},
                 {"n_layer": SIZE, "n_head": SIZE, "n_embd": SIZE}),
]
