"""Online learning in a risk-sensitive constrained MDP with an entropic-risk constraint.

From 'Online Learning in Risk Sensitive constrained MDP' (Ghosh & Moharrami, ICML 2025). The paper is
theoretical and only its abstract, lay summary and reviews were readable: the learner is a reconstruction from
the stated ingredients (OCE representation, budget-augmented state on a grid, optimistic primal-dual with a
truncated dual update); see README.md for what is reconstructed. numpy and scipy only.
"""

from .env import TabularCMDP, env_garnet, env_risky_safe
from .learners import EntropicRiskCMDPLearner, RiskNeutralPrimalDualLearner
from .oracles import LPSolution, evaluate, max_erm_policy, monte_carlo, solve_lp, terminal_budget_distribution
from .planner import AugmentedPlan, plan_augmented, plan_augmented_loop, plan_markov
from .risk import BudgetGrid, erm, oce, utility

__all__ = [
    "TabularCMDP", "env_risky_safe", "env_garnet", "EntropicRiskCMDPLearner", "RiskNeutralPrimalDualLearner",
    "evaluate", "solve_lp", "LPSolution", "max_erm_policy", "monte_carlo", "terminal_budget_distribution",
    "plan_augmented", "plan_augmented_loop", "plan_markov", "AugmentedPlan", "BudgetGrid", "erm", "oce", "utility",
]
