"""Competence first (issue 48): the choice of the two-task settings from the single-task accuracies, the setting
strings, the Wilson interval and the scale claims C5 (sizes of one family only)."""

from __future__ import annotations

import dataclasses

import pytest

from icml25.task_superposition import wilson_interval
from icml25.task_superposition._validation import pair_setting, parse_family, setting_tag
from icml25.task_superposition.experiment.competence import competent_setting


def _rows(spec, accs, low, chance=1 / 3):
    return [{"setting": spec, "task": t, "accuracy": a, "low": lo, "chance": chance,
             "competent": a >= 0.5 and lo > chance} for t, a, lo in zip(("capital", "continent", "upper"), accs, low)]


def test_the_two_most_accurate_competent_tasks_are_chosen_in_task_order():
    rows = _rows("country::spaced", [0.9, 0.55, 1.0], [0.7, 0.30, 0.8])  # continent: interval not above chance
    assert competent_setting(rows) == ("country:capital,upper:spaced", [0.9, 1.0])


def test_fewer_than_two_competent_tasks_choose_nothing():
    assert competent_setting(_rows("country", [0.9, 0.2, 0.4], [0.7, 0.05, 0.2])) is None


def test_setting_strings():
    assert parse_family("AB").task_names == ["copyA", "copyB", "add"]
    assert parse_family("country::spaced").sep == " ->"
    assert parse_family("country:capital,upper").task_names == ["capital", "upper"]
    with pytest.raises(ValueError):
        parse_family("country:capital")  # one task cannot be mixed
    assert pair_setting("country::spaced", "capital", "upper") == "country:capital,upper:spaced"
    assert pair_setting("AB", "copyA", "copyB") == "AB:copyA,copyB"
    assert setting_tag("country:capital,upper:spaced") == "country-spaced"
    assert setting_tag("AB:copyA,copyB") == "AB"


def test_wilson_interval_brackets_the_proportion():
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and 0.2 < hi < 0.35
    lo, hi = wilson_interval(12, 16)
    assert lo < 0.75 < hi
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_scale_claims_need_two_sizes_of_one_family(tmp_path):
    """Without scale_models, C5a/C5c are paper-scale claims not measured here (two families are not two sizes)."""
    from icml25.core import Scale
    from icml25.task_superposition.reproduce import Config, reproduce

    cfg = dataclasses.replace(Config.full(), scratch=False, tv_model="", real_prompts=2, competence_prompts=2,
                              competence_settings=("AB",))
    rep = reproduce(Scale.FULL, 0, tmp_path, cfg, stub=True)
    c5 = {c.id: c for c in rep.claims if c.id in ("C5a", "C5c")}
    assert set(c5) == {"C5a", "C5c"}
    assert all(c.scale == Scale.PAPER and c.measured != c.measured and "one model family" in c.note
               for c in c5.values())
    ids = {c.id for c in rep.claims}
    assert {"C1b-smollm2", "C1b-gemma", "A-gemma/AB"} <= ids  # the pooled per-model claims and the chosen pair
    assert [c.id for c in rep.claims if c.headline and c.id.startswith("C1b")] == ["C1b-gemma"]
