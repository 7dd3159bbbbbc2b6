"""Test support for icml25 and for users testing their own paper packages: quick-report cache, skip decorators
for missing extras, the bad-input fuzz contract (:mod:`icml25.testing.fuzz`) and the file fuzz contract.

Imports pytest/hypothesis only where a helper needs them, and works from an installed wheel (the paper's
``bad_input_cases.py`` is located through the test tree given by the caller or ``ICML25_TESTS_ROOT``).
"""

from .helpers import (
    ARRAY,
    POSITIVE,
    PROB,
    REAL,
    SIZE,
    TEXT,
    BadInputCase,
    quick_report,
    requires,
    run_without,
    test_seeds,
)

__all__ = ["requires", "quick_report", "test_seeds", "run_without", "BadInputCase", "ARRAY", "PROB", "SIZE",
           "POSITIVE", "REAL", "TEXT"]
