"""The experiment of the reproduction (spec §6), not part of the public API: ``scratch.py`` (TinyGPTs trained here on
single-task F-AB prompts: C2/C3, E2, C5b/C5d), ``stages.py`` (the real pretrained models: S1, A-*, C1, C4 on a real
model, the closing notes and figure), ``real_models.py`` (loading, the two-task grid, the exactness check and the
scale claims C5a/C5c) and ``task_vectors.py`` (the task-vector experiment C4, shared by both parts). Importing this
package loads no torch (the stages import it on first use)."""

from .real_models import real_scale_claims
from .scratch import run_scratch
from .stages import add_notes_and_figure, real_model_claims, run_real_models, run_real_task_vectors

__all__ = ["add_notes_and_figure", "real_model_claims", "real_scale_claims", "run_real_models",
           "run_real_task_vectors", "run_scratch"]
