"""The quick reproduction's tables (the claims themselves are asserted by tests/core/test_contract.py)."""

from __future__ import annotations

import pytest

from icml25.testing import quick_report


@pytest.mark.xdist_group("hier_decoding")
def test_quick_report_tables() -> None:
    rep = quick_report("hier_decoding")
    q1 = {r["metric"]: r for r in rep.tables["q1_exactness"]}
    assert {"accuracy", "hamming", "hF_0.5", "hF_1", "hF_2", "mistake_severity", "wu_palmer", "zhao", "node_cost",
            "leaf_cost"} <= set(q1)
    assert all(r["max_abs_gap"] <= 1e-9 and r["cases"] > 0 for r in q1.values())
    metrics = {r["metric"] for r in rep.tables["q3_imclef_sigma2"]}
    assert len(metrics) == 8
    claims = {c.id: c for c in rep.claims}
    assert claims["Q2b"].measured > 0 and claims["Q3a"].measured > 0
