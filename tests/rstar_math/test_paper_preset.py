"""The paper preset, the dry-run plan and the abstract's claims (MATH 58.8 -> 90.0 %, +4.5 over o1-preview,
AIME 53.3 %): registered at paper scale, measured from the paper's models only when a benchmark run gives numbers."""

from __future__ import annotations

import dataclasses
import math

import pytest

from icml25.core import Report, Scale
from icml25.rstar_math.experiment import stages as ex
from icml25.rstar_math.reproduce import Config


def test_paper_preset_names_the_papers_models_and_benchmarks() -> None:
    paper = Config.paper()
    assert paper.bench == ("math500", "aime2024") and paper.bench_n == 64 and paper.rounds == 4
    assert paper.policy.startswith("openai:") and paper.ppm
    for name in ("quick", "full", "paper"):
        plan = getattr(Config, name)().plan()
        assert plan.scale == name and plan.estimated_seconds > 0
    assert Config.paper().plan().needs.gpus == 1 and Config.paper().plan().needs.server
    quick = Config.quick()
    assert dataclasses.replace(quick, sft_steps=600).plan().estimated_seconds > quick.plan().estimated_seconds


@pytest.mark.parametrize(("field", "value", "match"), [("bench", ("math9",), "bench"), ("bench_n", 0, "bench_n"),
                                                       ("policy", 3, "policy")])
def test_bad_bench_fields_are_named(field: str, value, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        Config(**{field: value})


def test_bench_without_a_policy_says_what_to_pass() -> None:
    with pytest.raises(ValueError, match="--set policy="):
        Config(bench=("math500",), ppm="/x")


def test_abstract_claims_not_measured_below_paper_scale() -> None:
    rep = Report(slug="rstar_math", title="t")
    ex.add_abstract_claims(rep, Scale.QUICK, Config.quick(), None)
    by = {c.id: c for c in rep.claims}
    assert set(by) == {"math_qwen7b", "math_vs_o1", "aime"}
    assert all(c.scale == Scale.PAPER and math.isnan(c.measured) and "not measured here" in c.note
               for c in by.values())
    assert by["math_qwen7b"].headline and by["aime"].headline


def test_abstract_claims_from_benchmark_numbers() -> None:
    """With benchmark accuracies (as run_benchmarks returns them) the claims compare them with the paper's."""
    rep = Report(slug="rstar_math", title="t", scale=Scale.PAPER)
    bench = {"math500": {"acc": 89.0, "n": 500}, "aime2024": {"acc": 30.0, "n": 30}}
    ex.add_abstract_claims(rep, Scale.PAPER, Config.paper(), bench)
    by = {c.id: c for c in rep.claims}
    assert by["math_qwen7b"].held and by["math_vs_o1"].measured == pytest.approx(3.5) and by["math_vs_o1"].held
    assert not by["aime"].held  # 30 % < 53.3 % - 18.2 points
