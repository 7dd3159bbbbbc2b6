"""Pair and SFT extraction on hand-built trees with the expected pairs listed explicitly (spec §2.6-2.7)."""

import pytest

from icml25.rstar_math.extraction import (
    PairRecord,
    edit_distance,
    extract_pairs,
    extract_sft,
    filter_pairs,
    to_trl,
)
from icml25.rstar_math.tree import TOO_MANY_CODE_ERRORS, Node, Tree, update, update_recursive


def _step(parent, name):
    n = Node(text=f" step {name} " + name * 25, parent=parent, depth=parent.depth + 1)
    parent.children.append(n)
    return n


def _answer(parent, name, correct):
    n = _step(parent, name)
    n.text = f" step {name} \\boxed{{{name}}} " + name * 25
    n.terminal, n.answer, n.correct = True, name, correct
    update_recursive(n, 1.0 if correct else -1.0)
    return n


def _tree():
    t = Tree("question", "1")
    A, B, C, D = (_step(t.root, x) for x in "ABCD")
    _answer(A, "a", True), _answer(A, "b", True)
    _answer(B, "c", True), _answer(B, "d", False)
    _answer(C, "e", False)
    _answer(D, "f", False), _answer(D, "g", False)
    E = _step(t.root, "E")
    E.terminal, E.reason = True, TOO_MANY_CODE_ERRORS
    update(E, -1.0)
    return t


def test_step_pairs_expected():
    t = _tree()
    pairs = [p for p in extract_pairs([t], include_final=False)]
    got = {(p.pos.split()[1], p.neg.split()[1], p.pos_count, p.neg_count, p.margin) for p in pairs}
    # root: positives A (Q=1), B (Q=0); negatives C, D (Q=-1, creation order) -> 2x2; node B: c vs d (1-vs-1)
    assert got == {("A", "C", 2, 2, 2.0), ("A", "D", 2, 2, 2.0), ("B", "C", 2, 2, 1.0), ("B", "D", 2, 2, 1.0),
                   ("c", "d", 1, 1, 2.0)}
    # the failure terminal E is never a negative
    assert all("E" not in p.neg.split()[1] for p in pairs)
    pb = [p for p in pairs if p.pos.split()[1] == "c"][0]
    assert pb.prompt.endswith(t.root.children[1].text)


def test_one_vs_four_rule():
    t = Tree("q", "1")
    P = _step(t.root, "P")
    _answer(P, "p", True)
    negs = [_step(t.root, x) for x in "QRSTU"]
    for n, x in zip(negs, "qrstu"):
        _answer(n, x, False)
    pairs = extract_pairs([t], include_final=False)
    assert [(p.pos.split()[1], p.neg.split()[1]) for p in pairs] == [("P", x) for x in "QRST"]
    assert all(p.pos_count == 1 and p.neg_count == 4 for p in pairs)


def test_final_answer_pairs():
    t = _tree()
    finals = [p for p in extract_pairs([t]) if p.kind == "final"]
    # 2 best correct trajectories (A->a, A->b with avg Q 1) vs 2 worst wrong ones (C->e, D->f: avg Q -1)
    assert len(finals) == 4
    assert {p.pos.split()[1] for p in finals} == {"A"}
    assert {p.neg.split()[1] for p in finals} == {"C", "D"}


def test_margin_and_edit_filters():
    base = dict(prompt="p", pos_count=1, neg_count=1)
    keep = PairRecord(pos="x" * 30, neg="y" * 30, margin=0.5, **base)
    small_margin = PairRecord(pos="x" * 30, neg="y" * 30, margin=0.4, **base)
    close = PairRecord(pos="Bob = Ann + 3 # comment text", neg="Bob = Ann - 3 # comment text", margin=2.0, **base)
    assert filter_pairs([keep, small_margin, close]) == [keep]
    assert edit_distance("kitten", "sitting") == 3 and edit_distance("", "abc") == 3
    assert to_trl([keep])[0] == {"prompt": "p", "chosen": "x" * 30, "rejected": "y" * 30, "margin": 0.5}


def test_all_correct_tree_gives_no_step_pairs():
    t = Tree("q", "1")
    a = _step(t.root, "A")
    _answer(a, "a", True)
    assert extract_pairs([t]) == []


def test_sft_top2_by_avg_then_min_q():
    t = _tree()
    recs = extract_sft([t], top_k=2)
    assert len(recs) == 2
    assert all(r.avg_q == pytest.approx(1.0) for r in recs)  # A->a and A->b beat B->c (avg 0.5)
    assert [r.response.split()[1] for r in recs] == ["A", "A"]
    with pytest.raises(ValueError):
        extract_sft([t], top_k=0)
