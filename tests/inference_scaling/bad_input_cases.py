"""Bad-input registry of inference_scaling for the fuzz contract (tests/core/test_bad_input.py): one valid call per
public callable and the kinds of the arguments to corrupt."""

from __future__ import annotations

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase


def _counts() -> tuple[np.ndarray, np.ndarray]:
    from icml25.inference_scaling import sample_counts

    return sample_counts(5.0, 0.4, 1.0, 60, 200, random_state=0)


def _nc() -> dict:
    n, c = _counts()
    return {"n": n, "c": c}


def _curve() -> tuple[np.ndarray, np.ndarray]:
    from icml25.inference_scaling import BetaCoverageLaw

    ks = np.array([1.0, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])
    return ks, BetaCoverageLaw(4.0, 0.35, 0.9).pass_at_k(ks)


def _kc() -> dict:
    ks, y = _curve()
    return {"ks": ks, "coverage": y}


def _law():  # type: ignore[no-untyped-def]
    from icml25.inference_scaling import BetaCoverageLaw

    return BetaCoverageLaw(4.0, 0.35, 0.9)


def _fitted(cls_name: str, **params):  # type: ignore[no-untyped-def]
    def make():  # type: ignore[no-untyped-def]
        import icml25.inference_scaling as m

        ks, y = _curve()
        return getattr(m, cls_name)(**params).fit(ks, y)
    return make


def _estimator():  # type: ignore[no-untyped-def]
    from icml25.inference_scaling import BetaCoverageEstimator

    n, c = _counts()
    return BetaCoverageEstimator().fit(n, c)


def _cost():  # type: ignore[no-untyped-def]
    from icml25.inference_scaling import AttemptCost

    return AttemptCost(1e9, 256)


def _vae():  # type: ignore[no-untyped-def]
    from icml25.inference_scaling import DigitsVAE

    return DigitsVAE(n_features=64, latent=4, hidden=16)


def _digits() -> np.ndarray:
    return np.random.default_rng(0).uniform(size=(20, 64)).astype(np.float32)


def _generate(prompts, n):  # type: ignore[no-untyped-def]
    return [[f"{p} {i}" for i in range(n)] for p in prompts]


_COUNTS = {"n": ARRAY, "c": ARRAY}
_CURVE = {"ks": ARRAY, "coverage": ARRAY}

CASES = [
    # estimators
    BadInputCase("pass_at_k", lambda: {**_nc(), "k": 10}, {**_COUNTS, "k": SIZE}),
    BadInputCase("coverage_curve", lambda: {**_nc(), "ks": np.array([1, 10, 100])}, {**_COUNTS, "ks": ARRAY}),
    BadInputCase("bootstrap_ci", lambda: {**_nc(), "ks": np.array([1, 10]), "n_boot": 50, "level": 0.9,
                                          "random_state": 0},
                 {**_COUNTS, "ks": ARRAY, "n_boot": SIZE, "level": PROB}),
    BadInputCase("subsample_counts", lambda: {**_nc(), "n_sub": 50, "random_state": 0},
                 {**_COUNTS, "n_sub": SIZE}),
    BadInputCase("log_spaced_ks", lambda: {"k_max": 1000, "num": 20, "k_min": 1},
                 {"k_max": SIZE, "num": SIZE, "k_min": SIZE}),
    # the law
    BadInputCase("BetaCoverageLaw", lambda: {"alpha": 4.0, "beta": 0.35, "A": 0.9},
                 {"alpha": POSITIVE, "beta": POSITIVE, "A": PROB}),
    BadInputCase("BetaCoverageLaw.pass_at_k", lambda: {"k": np.array([1.0, 10, 100])}, {"k": REAL}, obj=_law),
    BadInputCase("BetaCoverageLaw.inference_loss", lambda: {"k": np.array([1.0, 10])}, {"k": REAL}, obj=_law),
    BadInputCase("BetaCoverageLaw.log_inference_loss", lambda: {"k": np.array([1.0, 10])}, {"k": REAL}, obj=_law),
    BadInputCase("BetaCoverageLaw.neg_log_coverage", lambda: {"k": np.array([1.0, 10])}, {"k": REAL}, obj=_law),
    BadInputCase("BetaCoverageLaw.asymptotic_loss", lambda: {"k": np.array([100.0, 1000])}, {"k": REAL}, obj=_law),
    BadInputCase("BetaCoverageLaw.k_for_loss", lambda: {"eps": 0.1}, {"eps": PROB}, obj=_law),
    BadInputCase("BetaCoverageLaw.k_for_coverage", lambda: {"target": 0.5}, {"target": PROB}, obj=_law),
    BadInputCase("BetaCoverageLaw.sample", lambda: {"n_problems": 10, "n_attempts": 20, "random_state": 0},
                 {"n_problems": SIZE, "n_attempts": SIZE}, obj=_law),
    BadInputCase("BetaCoverageLaw.fit_counts", lambda: _nc(), _COUNTS, obj=_law),
    BadInputCase("BetaCoverageLaw.fit_curve", lambda: _kc(), _CURVE, obj=_law),
    BadInputCase("BetaCoverageLaw.get_params", lambda: {}, obj=_law),
    BadInputCase("sample_counts", lambda: {"alpha": 4.0, "beta": 0.35, "A": 0.9, "n_problems": 10, "n_attempts": 20,
                                           "random_state": 0},
                 {"alpha": POSITIVE, "beta": POSITIVE, "A": PROB, "n_problems": SIZE, "n_attempts": SIZE}),
    BadInputCase("fit_counts", lambda: _nc(), _COUNTS),
    BadInputCase("fit_curve", lambda: _kc(), _CURVE),
    BadInputCase("fit_correlation", lambda: {"law": _law(), **_kc(), "family": __import__(
        "icml25.inference_scaling", fromlist=["PowerCorrelation"]).PowerCorrelation()}, _CURVE),
    BadInputCase("betabinom_loglik", lambda: {"alpha": 4.0, "beta": 0.35, **_nc(), "A": 0.9},
                 {"alpha": POSITIVE, "beta": POSITIVE, **_COUNTS, "A": PROB}),
    BadInputCase("CountFit", skip="result container returned by fit_counts"),
    BadInputCase("CurveFit", skip="result container returned by fit_curve"),
    # correlated attempts
    BadInputCase("IID", lambda: {}),
    BadInputCase("IID.log_p_all_fail", lambda: {"p": np.array([0.2, 0.9]), "k": np.array([1.0, 8.0])},
                 {"p": PROB, "k": REAL}, obj=lambda: __import__("icml25.inference_scaling", fromlist=["IID"]).IID()),
    BadInputCase("RepeatCorrelation", lambda: {"rho": 0.3}, {"rho": PROB}),
    BadInputCase("RepeatCorrelation.log_p_all_fail", lambda: {"p": np.array([0.2, 0.9]), "k": np.array([1.0, 8.0])},
                 {"p": PROB, "k": REAL},
                 obj=lambda: __import__("icml25.inference_scaling", fromlist=["x"]).RepeatCorrelation(0.3)),
    BadInputCase("PowerCorrelation", lambda: {"gamma": 0.7}, {"gamma": PROB}),
    BadInputCase("PowerCorrelation.log_p_all_fail", lambda: {"p": np.array([0.2, 0.9]), "k": np.array([1.0, 8.0])},
                 {"p": PROB, "k": REAL},
                 obj=lambda: __import__("icml25.inference_scaling", fromlist=["x"]).PowerCorrelation(0.7)),
    # baselines
    BadInputCase("ExpPowerLaw", lambda: {}),
    BadInputCase("ExpPowerLaw.fit", lambda: _kc(), _CURVE, obj=lambda: __import__(
        "icml25.inference_scaling", fromlist=["x"]).ExpPowerLaw()),
    BadInputCase("ExpPowerLaw.predict", lambda: {"ks": np.array([1.0, 10])}, {"ks": ARRAY},
                 obj=_fitted("ExpPowerLaw")),
    BadInputCase("NegLogPowerLaw", lambda: {}),
    BadInputCase("NegLogPowerLaw.fit", lambda: _kc(), _CURVE, obj=lambda: __import__(
        "icml25.inference_scaling", fromlist=["x"]).NegLogPowerLaw()),
    BadInputCase("NegLogPowerLaw.predict", lambda: {"ks": np.array([1.0, 10])}, {"ks": ARRAY},
                 obj=_fitted("NegLogPowerLaw")),
    BadInputCase("SingleDifficulty", lambda: {}),
    BadInputCase("SingleDifficulty.fit", lambda: _kc(), _CURVE, obj=lambda: __import__(
        "icml25.inference_scaling", fromlist=["x"]).SingleDifficulty()),
    BadInputCase("SingleDifficulty.fit_counts", lambda: _nc(), _COUNTS, obj=lambda: __import__(
        "icml25.inference_scaling", fromlist=["x"]).SingleDifficulty()),
    BadInputCase("SingleDifficulty.predict", lambda: {"ks": np.array([1.0, 10])}, {"ks": ARRAY},
                 obj=_fitted("SingleDifficulty")),
    BadInputCase("BetaCurveLaw", lambda: {"fit_A": True}),
    BadInputCase("BetaCurveLaw.fit", lambda: _kc(), _CURVE, obj=lambda: __import__(
        "icml25.inference_scaling", fromlist=["x"]).BetaCurveLaw()),
    BadInputCase("BetaCurveLaw.predict", lambda: {"ks": np.array([1.0, 10])}, {"ks": ARRAY},
                 obj=_fitted("BetaCurveLaw")),
    BadInputCase("BetaCoverageEstimator", lambda: {"fit_A": False}),
    BadInputCase("BetaCoverageEstimator.fit", lambda: _nc(), _COUNTS, obj=lambda: __import__(
        "icml25.inference_scaling", fromlist=["x"]).BetaCoverageEstimator()),
    BadInputCase("BetaCoverageEstimator.predict", lambda: {"ks": np.array([1.0, 10])}, {"ks": ARRAY},
                 obj=_estimator),
    BadInputCase("compare_laws", lambda: {**_nc(), "ks": np.array([1, 10, 100]), "holdout_k": 50},
                 {**_COUNTS, "ks": ARRAY, "holdout_k": SIZE}),
    # compute
    BadInputCase("AttemptCost", lambda: {"n_params": 1e9, "gen_tokens": 256.0, "prompt_tokens": 0.0},
                 {"n_params": POSITIVE, "gen_tokens": POSITIVE}),
    BadInputCase("AttemptCost.attempts", lambda: {"flops": np.array([1e12, 1e13])}, {"flops": REAL}, obj=_cost),
    BadInputCase("coverage_at_compute", lambda: {"law": _law(), "cost": _cost(), "flops": np.array([1e12, 1e14])},
                 {"flops": REAL}),
    BadInputCase("best_model_for_budget", lambda: {"models": {"a": (_law(), _cost())},
                                                   "flops_grid": np.array([1e12, 1e14])}, {"flops_grid": ARRAY}),
    # real LLMs
    BadInputCase("AttemptCounts", skip="result container returned by collect_counts"),
    BadInputCase("collect_counts", lambda: {"problems": ["a", "b"], "generate_fn": _generate,
                                            "verify_fn": lambda prob, text: text.endswith("1"), "n_attempts": 4,
                                            "batch_size": 2, "prompts_per_call": 2, "temperature": 1.0,
                                            "top_p": 1.0, "max_tokens": 8},
                 {"n_attempts": SIZE, "batch_size": SIZE, "prompts_per_call": SIZE, "top_p": PROB,
                  "max_tokens": SIZE}),
    # data
    BadInputCase("load_llmonkeys_pythia_math", lambda: {}),
    BadInputCase("load_pythia_checkpoints", lambda: {"benchmark": "MATH"}, {"benchmark": TEXT}),
    BadInputCase("load_digitized_curve", lambda: {"name": "Pythia-2.8B"}, {"name": TEXT}),
    # VAE (torch)
    BadInputCase("DigitsVAE", lambda: {"n_features": 64, "latent": 4, "hidden": 16},
                 {"n_features": SIZE, "latent": SIZE, "hidden": SIZE}),
    BadInputCase("train_vae", lambda: {"X": _digits(), "latent": 4, "hidden": 16, "epochs": 1, "batch_size": 8,
                                       "lr": 1e-3, "seed": 0},
                 {"X": ARRAY, "latent": SIZE, "hidden": SIZE, "epochs": SIZE, "batch_size": SIZE, "lr": POSITIVE}),
    BadInputCase("attempt_errors", lambda: {"vae": _vae(), "X": _digits(), "temperature": 1.0, "n_attempts": 3,
                                            "rho": 0.3, "n_batches": 2, "seed": 0},
                 {"X": ARRAY, "temperature": POSITIVE, "n_attempts": SIZE, "rho": PROB, "n_batches": SIZE}),
]
