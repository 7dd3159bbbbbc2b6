"""Data loading of the reproduction: the shipped class trees (tieredImageNet-H, iNat19) through
:func:`icml25.core.data.resolve_data`. ImCLEF07A is loaded by :func:`icml25.hier_decoding.imclef.load_imclef`;
the synthetic posteriors are generated in ``synthetic.py``."""

from __future__ import annotations

from .hierarchy import Hierarchy


def load_tree(name: str) -> Hierarchy:
    """The tieredImageNet-H or iNat19 tree shipped with the package."""
    from icml25.core.data import resolve_data

    return Hierarchy.from_json(resolve_data("hier_decoding", f"{name}_hierarchy.json"))
