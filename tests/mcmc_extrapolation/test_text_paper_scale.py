"""The paper-scale text path end to end on tiny random models: claims X2 / X3 measured, Config validation, clear
errors and 'not measured' reasons when models or data are missing, the dry run."""

from __future__ import annotations

import dataclasses
import math

import pytest

from icml25.core import Scale
from icml25.mcmc_extrapolation.reproduce import Config

TINY_EHRLICH = dict(num_states=6, dim=8, motif_length=3, train_max=0.67, n_chains=6, chain_steps=10, n_test=3,
                    epochs=1, steps=2, n_candidates=2, long_budget=5, mh_long_steps=6, exact_chains=20,
                    exact_steps=21)
TINY_TEXT = dict(text_max_words=8, text_length=8, text_n_chains=8, text_chain_steps=12, text_n_test=3,
                 qtheta_steps=3, qtheta_batch=4, qtheta_lora_r=4, text_steps=2, text_candidates=2,
                 text_max_new_tokens=6, qtheta_lr=1e-2)


def _tiny(tiny_text: dict[str, str], **kw) -> Config:  # type: ignore[no-untyped-def]
    return Config(**TINY_EHRLICH, **TINY_TEXT, **tiny_text, text_tasks=("sentiment", "anonymisation"), **kw)


def test_paper_scale_text_tasks_end_to_end(tiny_text: dict[str, str], tmp_path) -> None:
    from icml25.mcmc_extrapolation.reproduce import reproduce

    rep = reproduce(Scale.PAPER, 0, tmp_path, _tiny(tiny_text))
    claims = {c.id: c for c in rep.claims}
    for cid in ("X2", "X3"):
        assert math.isfinite(claims[cid].measured), claims[cid].note
        assert "episodes" in claims[cid].note
    assert math.isnan(claims["X1"].measured) and "FoldX" in claims["X1"].note
    for task in ("sentiment", "anonymisation"):
        rows = next(v for k, v in rep.tables.items() if k.startswith(task))
        assert len(rows) == 4 and rows[1]["guide calls per input"] == 4 and rows[3]["guide calls per input"] == 12 and rows[1]["sequential steps"] == 2
        assert all(math.isfinite(r["mean oracle score"]) for r in rows)
        assert all(-1.0001 <= r["similarity to input"] <= 1.0001 for r in rows)


def test_missing_models_and_data_leave_the_claims_not_measured_with_the_reason(tiny_text, tmp_path) -> None:
    from icml25.core.report import Report
    from icml25.mcmc_extrapolation import experiment

    cfg = dataclasses.replace(_tiny(tiny_text), mlm_model=f"hf:{tmp_path / 'no-mlm'}", authorship_path="")
    rep = Report(slug="mcmc_extrapolation", title="t", scale=Scale.PAPER)
    experiment.add_paper_task_claims(rep, Scale.PAPER, cfg, 0)
    c = {x.id: x for x in rep.claims}
    assert math.isnan(c["X2"].measured) and "mlm_model" in c["X2"].note and "no-mlm" in c["X2"].note
    cfg2 = dataclasses.replace(_tiny(tiny_text), authorship_path=str(tmp_path / "none.csv"), text_tasks=("anonymisation",))
    rep2 = Report(slug="mcmc_extrapolation", title="t", scale=Scale.PAPER)
    experiment.add_paper_task_claims(rep2, Scale.PAPER, cfg2, 0)
    c2 = {x.id: x for x in rep2.claims}
    assert "authorship_path" in c2["X3"].note and math.isnan(c2["X3"].measured)
    assert "text_tasks does not include 'sentiment'" in c2["X2"].note
    rep3 = Report(slug="mcmc_extrapolation", title="t", scale=Scale.QUICK)
    experiment.add_paper_task_claims(rep3, Scale.QUICK, cfg, 0)
    assert all("not measured here" in x.note for x in rep3.claims)


def test_text_config_validation_and_model_path_errors(tmp_path) -> None:
    from icml25.llm import model_folder
    from icml25.mcmc_extrapolation.text_models import MLMInfill

    with pytest.raises(ValueError, match="text_tasks"):
        Config(text_tasks=("poetry",))
    with pytest.raises(ValueError, match="mlm_model"):
        Config(mlm_model="s3:bucket/model")
    with pytest.raises(ValueError, match="sentiment_guide_ratings"):
        Config(sentiment_guide_ratings=(0, 6))
    with pytest.raises(ValueError, match="sentiment_direction"):
        Config(sentiment_direction="up")
    with pytest.raises(ValueError, match="text_chain_steps"):
        Config(text_tasks=("sentiment",), text_chain_steps=3)
    paper = Config.paper()
    assert paper.text_tasks == ("sentiment", "anonymisation")
    with pytest.raises(FileNotFoundError, match=r"mlm_model: the model folder .*roberta-base.* does not exist"):
        model_folder(paper.mlm_model, "mlm_model")
    with pytest.raises(FileNotFoundError, match="model folder"):
        MLMInfill(f"hf:{tmp_path}")


def test_dry_run_lists_the_text_tasks_and_what_they_need(tiny_text) -> None:
    text = Config.paper().plan().text()
    for word in ("sentiment", "anonymisation", "roberta-base", "yelp_review_full", "authorship_path", "missing"):
        assert word in text, word
    assert "found" in _tiny(tiny_text).plan().text()
