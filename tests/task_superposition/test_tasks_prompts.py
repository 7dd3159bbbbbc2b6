"""Task families and mixture prompts against the official tables and the official rounding rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25.task_superposition import (
    MixturePromptBuilder,
    build_prompt,
    official_setting,
    synthetic_family,
    task_counts,
)


@pytest.mark.parametrize("lam, m, expected", [((1 / 3, 1 / 3, 1 / 3), 60, (20, 20, 20)),
                                              ((0.5, 0.25, 0.25), 10, (5, 3, 2)),
                                              ((1 / 3, 1 / 3, 1 / 3), 10, (4, 3, 3)),
                                              ((0.25, 0.25, 0.25, 0.25), 80, (20, 20, 20, 20)),
                                              ((1.0, 0.0), 8, (8, 0))])
def test_rounding_rule_matches_the_official_examples(lam, m, expected):
    assert task_counts(lam, m) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 20), min_size=1, max_size=6).filter(lambda w: sum(w) > 0), st.integers(1, 100))
def test_rounding_rule_properties(weights, m):
    lam = np.array(weights) / sum(weights)
    c = np.array(task_counts(lam, m))
    assert c.sum() == m  # every example is assigned
    assert np.all(np.abs(c - lam * m) < 1 + 1e-9)  # floor plus at most one
    assert np.all(c[lam == 0] == 0)  # a task with no share never gets examples


def test_country_lookups_reproduce_the_official_table():
    fam = official_setting("country")
    france = {"country": "France", "capital": "Paris", "continent": "Europe"}
    assert fam.answers(france) == ["Paris", "Europe", "FRANCE"]
    assert fam.example(france, 0) == "France->Paris"


def test_add_translate_lookups_reproduce_the_official_table():
    fam = official_setting("add_translate")
    assert fam.answers((57, 66)) == ["123", "one hundred and twenty-three", "cent vingt-trois", "ciento veintitrés"]
    assert fam.query((57, 66)) == "57+66->"


def test_ab_and_word_settings():
    ab = official_setting("AB")
    assert ab.answers((12, 34)) == ["12", "34", "46"] and ab.query((12, 34)) == "12@34="
    word = official_setting("word")
    assert word.answers("table") == ["t", "e", "T", "E"]


@pytest.mark.parametrize("name", ["add_translate", "country", "AB", "word"])
def test_prompts_have_fresh_queries_distinct_answers_and_the_counts(name):
    fam = official_setting(name)
    items = MixturePromptBuilder(fam, m=12, proportions=np.eye(fam.K)[0] * 0.5 + 0.5 / fam.K,
                                 random_state=3).sample(20)
    for it in items:
        lines = it.prompt.split("\n")
        assert len(lines) == 13 and lines[-1] == fam.query(it.query_input)
        inputs = [ln.rpartition(fam.sep)[0] for ln in lines[:-1]]
        assert fam.format_input(it.query_input) not in inputs
        assert len(set(it.answers)) == fam.K
        # each example line is the answer of the task it was drawn for
        for ln, k in zip(lines[:-1], it.example_tasks):
            assert ln.endswith(fam.sep + fam.tasks[k].fn(_parse(fam, ln.rpartition(fam.sep)[0])))
        assert np.bincount(it.example_tasks, minlength=fam.K).tolist() == list(it.counts)
        assert it.lam_hat.sum() == pytest.approx(1.0)


def _parse(fam, text):
    if fam.name in ("add_translate", "AB"):
        a, b = text.replace("@", "+").split("+")
        return int(a), int(b)
    if fam.name == "country":
        from icml25.task_superposition import load_countries

        return next(r for r in load_countries() if r["country"] == text)
    return text


def test_builder_is_reproducible_and_zero_shot_prompt_is_the_query():
    fam = synthetic_family("F-AB")
    a = MixturePromptBuilder(fam, m=4, random_state=5).sample(3)
    b = MixturePromptBuilder(fam, m=4, random_state=5).sample(3)
    assert [x.prompt for x in a] == [x.prompt for x in b]
    z = build_prompt(fam, (0, 0, 0), rng=1)
    assert z.prompt == fam.query(z.query_input) and z.lam_hat.tolist() == pytest.approx([1 / 3] * 3)


def test_clear_errors():
    with pytest.raises(ValueError, match="proportions must sum to 1"):
        task_counts([0.5, 0.4], 10)
    with pytest.raises(ValueError, match="name must be one of"):
        official_setting("capitals")
    with pytest.raises(ValueError, match="tasks"):
        official_setting("country", tasks=[])
    with pytest.raises(ValueError, match="tasks must be one of"):
        official_setting("country", tasks=["capital", "flag"])
    with pytest.raises(ValueError, match="proportions must have one entry per task"):
        MixturePromptBuilder(official_setting("AB"), m=6, proportions=[0.5, 0.5])
    with pytest.raises(ValueError, match="counts"):
        build_prompt(official_setting("AB"), (1, -1, 0))
