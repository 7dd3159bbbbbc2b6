"""The experiment of the De-mark reproduction (spec §6), not part of the public API: ``simulated.py`` computes the
simulated oracle (Q1) and the simulated deployment (Q2, F3-F5), ``real.py`` the real watermarked chat model (R1-R7),
``claims.py`` adds the claims, tables and notes, ``figures.py`` the figures. Importing this package loads no torch
(the real-model stage imports it on first use)."""

from .claims import (
                     add_chooser_bias_curve,
                     add_deployment_tables,
                     add_full_claims,
                     add_paper_claims,
                     add_q1_claims,
                     add_q2_claims,
)
from .figures import add_figures
from .real import real_model_stage
from .simulated import deployment, simulated_recovery

__all__ = ["add_chooser_bias_curve", "add_deployment_tables", "add_figures", "add_full_claims", "add_paper_claims",
           "add_q1_claims", "add_q2_claims", "deployment", "real_model_stage", "simulated_recovery"]
