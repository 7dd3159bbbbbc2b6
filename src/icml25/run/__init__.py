"""Orchestration: the ``icml25`` command line, the runner of (paper, seed) tasks and where they execute.

Kept apart from :mod:`icml25.core` (the claim contract and library helpers) so that a paper's library code never
pulls in the command line, and the runner can grow executors without touching the contract.
"""

from .runner import reproduce_many, run_reproduction

__all__ = ["reproduce_many", "run_reproduction"]
