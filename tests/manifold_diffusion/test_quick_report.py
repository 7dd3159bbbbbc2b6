"""Inspect the quick reproduction's tables (the contract suite runs it once)."""

from __future__ import annotations

import pytest

from icml25.testing import quick_report


@pytest.mark.xdist_group("manifold_diffusion")
def test_quick_report_orders_the_strategies() -> None:
    rep = quick_report("manifold_diffusion")
    rows = {r["strategy"]: r["steady_state_msd_db"] for r in rep.tables["pca_steady_state_msd_db"]}
    assert rows["centralized"] < rows["diffusion"] < rows["DRSGD"] < rows["non-cooperative"]
    mus = [r["steady_state_msd_db"] for r in rep.tables["step_size"]]
    assert len(mus) == 3
