"""MCQ record, prompt rendering, revise round trips, and the real-data builders."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25.croq import MCQ, build_mcq, render_prompt, revise


def test_render_prompt() -> None:
    q = MCQ("2+2?", ("3", "4", "5"), 1)
    assert render_prompt(q) == "2+2?\nA. 3\nB. 4\nC. 5\nAnswer:"


@given(st.integers(2, 15).flatmap(lambda m: st.tuples(st.just(m), st.integers(0, m - 1),
                                                       st.lists(st.booleans(), min_size=m, max_size=m))))
@settings(max_examples=100, deadline=None)
def test_revise_round_trips_indices(args: tuple) -> None:
    m, ans, keep = args
    if sum(keep) < 2:
        with pytest.raises(ValueError, match="at least 2"):
            revise(MCQ("q", tuple(f"o{i}" for i in range(m)), ans), np.array(keep))
        return
    q = MCQ("q", tuple(f"o{i}" for i in range(m)), ans)
    r, idx = revise(q, np.array(keep))
    assert list(idx) == [i for i in range(m) if keep[i]]  # original relative order
    assert all(r.options[j] == q.options[idx[j]] for j in range(r.n_options))
    assert (r.answer is None) == (not keep[ans])
    if r.answer is not None:
        assert idx[r.answer] == ans
    r2, idx2 = revise(q, np.flatnonzero(keep)[::-1])  # indices in any order give the same question
    assert r2 == r and np.array_equal(idx2, idx)


def test_mcq_validation() -> None:
    with pytest.raises(ValueError, match="between 2 and 15"):
        MCQ("q", ("only",), 0)
    with pytest.raises(ValueError, match="outside the option range"):
        MCQ("q", ("a", "b"), 2)
    with pytest.raises(TypeError, match="answer"):
        MCQ("q", ("a", "b"), "a")
    with pytest.raises(ValueError, match="0..3"):
        revise(MCQ("q", ("a", "b", "c", "d"), 0), [0, 7])


@pytest.mark.parametrize("dataset", ["mmlu", "truthfulqa", "toolalpaca"])
@pytest.mark.parametrize("n_options", [4, 10, 15])
def test_builders_never_duplicate_answer_text(dataset: str, n_options: int) -> None:
    qs = build_mcq(dataset, n_options, seed=3)
    assert len(qs) > 150
    for q in qs:
        assert q.n_options == n_options
        low = [o.strip().lower() for o in q.options]
        assert len(set(low)) == n_options
        assert low.count(low[q.answer]) == 1
    answers = np.array([q.answer for q in qs])
    assert len(np.unique(answers)) == n_options  # the shuffle spreads the answer over every letter


def test_builders_are_seeded_and_keep_the_correct_answer() -> None:
    a, b = build_mcq("truthfulqa", 10, seed=1), build_mcq("truthfulqa", 10, seed=1)
    assert a == b and a != build_mcq("truthfulqa", 10, seed=2)
    import csv

    from icml25.core.data import resolve_data

    rows = list(csv.DictReader(open(resolve_data("croq", "truthfulqa/TruthfulQA.csv"), encoding="utf-8")))
    best = {r["Question"]: r["Best Answer"].strip() for r in rows}
    assert all(q.options[q.answer] == best[q.question] for q in a)
    tools = build_mcq("toolalpaca", 4, seed=0)
    assert all(":" in o for q in tools for o in q.options)


def test_builder_bad_input() -> None:
    with pytest.raises(ValueError, match="dataset"):
        build_mcq("gsm8k", 4)
    with pytest.raises(ValueError, match="n_options"):
        build_mcq("mmlu", 1)
