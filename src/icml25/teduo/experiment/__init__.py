"""The experiment of the TEDUO reproduction (spec §6), not part of the public API: the stages that
:func:`icml25.teduo.reproduce.reproduce` calls in order. ``stages.py``: steps 1-2 per seed, D_SFT, step 3 with the
from-scratch baselines, the quick, full and paper claims and the figure; ``llm.py``: the real LLM as judge,
abstraction writer and policy (when ``Config.llm`` is set). Importing this package loads no torch."""

from .llm import load_llm, short_name
from .stages import (
    Step3,
    add_figure_and_notes,
    add_full_claims,
    add_headline_claims,
    add_llm_parts,
    add_quick_claims,
    add_step3_table,
    build_sft,
    goal_split,
    run_steps12,
    step3_baselines,
)

__all__ = ["Step3", "goal_split", "run_steps12", "add_quick_claims", "build_sft", "step3_baselines", "add_llm_parts",
           "add_step3_table", "add_full_claims", "add_headline_claims", "add_figure_and_notes", "load_llm",
           "short_name"]
