"""icml25: 19 ICML 2025 papers as library APIs, CPU-sized reproductions with claim reports, and tests.

``import icml25`` is light (numpy and scipy only); each paper lives in ``icml25.<slug>``.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
