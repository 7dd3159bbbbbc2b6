"""The SDP-CROWN experiment (spec §6): the bound computations (``bounds``), the stages with the claims each supports
(``stages``: Appendix B.3, Theorems 4.1 / 5.2, the MNIST MLP, the Figure 3 sweep, tightness; ``table1``: Table 1 /
Table 2 and the abstract's ConvLarge claim). ``reproduce.py`` calls the stages in order."""

from .stages import (
    Clock,
    add_mlp_200_claims,
    add_mlp_claims,
    add_radius_sweep,
    add_theorem_checks,
    add_tightness,
    add_timings,
    add_worked_example,
    run_mnist_mlp,
    start,
)
from .table1 import add_speed_claims, add_table1

__all__ = ["Clock", "add_mlp_200_claims", "add_mlp_claims", "add_radius_sweep", "add_speed_claims", "add_table1",
           "add_theorem_checks", "add_tightness", "add_timings", "add_worked_example", "run_mnist_mlp", "start"]
