"""The experiment of the reproduction (spec §6), not part of the public API: ``studies.py`` computes (exactness on
random trees, synthetic posteriors, ImCLEF07A, timings), ``stages.py`` runs each stage of ``reproduce()`` and adds
its claims, tables and figures to the report."""

from ..data import load_tree
from .stages import (
    add_f1_claims,
    add_f2_claims,
    new_report,
    run_exactness,
    run_f1_f2,
    run_imclef,
    run_synthetic,
    run_timing,
)

__all__ = ["add_f1_claims", "add_f2_claims", "load_tree", "new_report", "run_exactness", "run_f1_f2", "run_imclef",
           "run_synthetic", "run_timing"]
