"""Inference scaling laws from a memorisation ansatz: 'A Simple Model of Inference Scaling Laws' (Levi, ICML 2025).

Each problem fails one attempt with probability ``p ~ Beta(alpha, beta)``; ``k`` iid attempts give
``pass@k = A [1 - B(alpha + k, beta) / B(alpha, beta)]`` whose inference loss decays as ``k^(-beta)``.

- Estimators: :func:`pass_at_k`, :func:`coverage_curve`, :func:`bootstrap_ci`, :func:`subsample_counts`.
- The law: :class:`BetaCoverageLaw`, :func:`sample_counts`; fits :func:`fit_counts` (beta-binomial MLE, optional
  zero-inflated ceiling), :func:`fit_curve` (least squares), :func:`fit_correlation`.
- Correlated attempts: :class:`IID`, :class:`RepeatCorrelation`, :class:`PowerCorrelation`.
- Baselines: :class:`ExpPowerLaw`, :class:`NegLogPowerLaw`, :class:`SingleDifficulty`, :class:`BetaCurveLaw`,
  :func:`compare_laws`; scikit-learn-style :class:`BetaCoverageEstimator` (``fit(n, c).predict(ks)``).
- Compute: :class:`AttemptCost`, :func:`coverage_at_compute`, :func:`best_model_for_budget`.
- Real LLMs: :func:`collect_counts` (any :class:`icml25.llm.LanguageModel`).
- Data: :func:`load_llmonkeys_pythia_math`, :func:`load_pythia_checkpoints`, :func:`load_digitized_curve`.
- VAE check (needs ``icml25[torch]``): :class:`DigitsVAE`, :func:`train_vae`, :func:`attempt_errors`.
"""

from __future__ import annotations

from typing import Any

from .baselines import (
    BetaCoverageEstimator,
    BetaCurveLaw,
    ExpPowerLaw,
    NegLogPowerLaw,
    SingleDifficulty,
    compare_laws,
)
from .beta_law import BetaCoverageLaw, sample_counts
from .collection import AttemptCounts, collect_counts
from .compute import AttemptCost, best_model_for_budget, coverage_at_compute
from .correlation import IID, PowerCorrelation, RepeatCorrelation, TrialCorrelation
from .data import load_digitized_curve, load_llmonkeys_pythia_math, load_pythia_checkpoints
from .estimators import bootstrap_ci, coverage_curve, log_spaced_ks, pass_at_k, subsample_counts
from .fitting import CountFit, CurveFit, FitError, betabinom_loglik, fit_correlation, fit_counts, fit_curve

__all__ = [
    "pass_at_k", "coverage_curve", "bootstrap_ci", "subsample_counts", "log_spaced_ks",
    "BetaCoverageLaw", "sample_counts", "fit_counts", "fit_curve", "fit_correlation", "betabinom_loglik",
    "CountFit", "CurveFit", "FitError",
    "TrialCorrelation", "IID", "RepeatCorrelation", "PowerCorrelation",
    "ExpPowerLaw", "NegLogPowerLaw", "SingleDifficulty", "BetaCurveLaw", "BetaCoverageEstimator", "compare_laws",
    "AttemptCost", "coverage_at_compute", "best_model_for_budget",
    "AttemptCounts", "collect_counts",
    "load_llmonkeys_pythia_math", "load_pythia_checkpoints", "load_digitized_curve",
    "DigitsVAE", "train_vae", "attempt_errors",
]

_TORCH_NAMES = {"DigitsVAE", "train_vae", "attempt_errors"}


def __getattr__(name: str) -> Any:
    if name in _TORCH_NAMES:  # the VAE needs torch; import it only when asked
        from icml25.core.optional import require

        require("torch", extra="torch")
        from . import vae

        return getattr(vae, name)
    raise AttributeError(f"module 'icml25.inference_scaling' has no attribute {name!r}")
