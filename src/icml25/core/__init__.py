"""Shared machinery of icml25: claims and reports, the reproduction registry, CLI, seeding, data, plotting."""

from .claims import Claim, Report, Scale, aggregate_reports
from .config import ConfigError, apply_overrides
from .data import DataNotFoundError, resolve_data
from .errors import ReproductionError, UsageError
from .optional import MissingExtraError, require
from .registry import get_reproduction, list_reproductions, reproduction
from .seeding import check_random_state, seed_everything

__all__ = [
    "Claim", "Report", "Scale", "aggregate_reports", "ConfigError", "apply_overrides", "DataNotFoundError",
    "resolve_data", "MissingExtraError", "require", "get_reproduction", "list_reproductions", "reproduction",
    "check_random_state", "seed_everything", "UsageError", "ReproductionError",
]
