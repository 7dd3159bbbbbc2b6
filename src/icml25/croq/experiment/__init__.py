"""The experiment of the reproduction (spec §6), not part of the public API: ``stages.py`` (Q1 split-CP validity,
Q2/F6 CP-OPT on real LLaMA-13B scores) and ``real_claims.py`` (CROQ on real pretrained LLMs; the headline count
claims, registered as not measured at quick scale) add the claims, tables and figures; ``studies.py`` and ``real_models.py`` compute. Importing this package loads no
torch (the stages import it on first use)."""

from .real_claims import add_unmeasured_headline_claims, real_model_claims
from .stages import run_real_scores, run_split_cp_validity

__all__ = ["add_unmeasured_headline_claims", "real_model_claims", "run_real_scores", "run_split_cp_validity"]
