"""The experiment of the reproduction (spec section 6), not part of the public API: ``studies.py`` (the real-data
fits), ``vae_study.py`` (the VAE check) and ``figures.py`` compute; ``stages.py`` runs each stage of
``reproduce()`` and adds its claims, tables and figures to the report."""

from .stages import (
    add_correlation_claims,
    add_figures_and_notes,
    new_report,
    run_checkpoint_fits,
    run_compute_tradeoff,
    run_digitized_fits,
    run_extrapolation,
    run_pythia_fits,
    run_vae,
)

__all__ = ["add_correlation_claims", "add_figures_and_notes", "new_report", "run_checkpoint_fits",
           "run_compute_tradeoff", "run_digitized_fits", "run_extrapolation", "run_pythia_fits", "run_vae"]
