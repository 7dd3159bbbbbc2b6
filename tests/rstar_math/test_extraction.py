"""Pair and SFT extraction on hand-built trees with the expected pairs listed explicitly (spec §2.6-2.7)."""

import pytest

from icml25.rstar_math.pipeline.extraction import (
    PairRecord,
    edit_distance,
    extract_pairs,
    extract_sft,
    filter_pairs,
    to_trl,
)
from icml25.rstar_math.search.tree import TOO_MANY_CODE_ERRORS, Node, Tree, update, update_recursive


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


def test_code_token_edit_filter_keeps_one_token_process_errors_and_drops_comment_only_pairs():
    from icml25.rstar_math.pipeline.extraction import code_tokens

    good = " # Bob has 3 more than Ann \n Bob = Ann + 3 <end_of_step>"
    wrong_op = " # Bob has 3 more than Ann \n Bob = Ann - 3 <end_of_step>"
    same_code = " # Bob gets 3 more \n Bob = Ann + 3 <end_of_step>"
    assert code_tokens(good) == ["Bob", "=", "Ann", "+", "3"]
    assert code_tokens(" print ( Bob ) <end_of_code> <output> 7 <end_of_output>") == ["print", "(", "Bob", ")"]
    pairs = [PairRecord("p", good, wrong_op, 1, 1, 1.0), PairRecord("p", good, same_code, 1, 1, 1.0)]
    # the official character filter drops the real process error (1 character apart) ...
    assert edit_distance(good, wrong_op) == 1 and filter_pairs(pairs, 0.5, 20) == []
    # ... the code-token filter keeps it and drops the pair whose code is identical
    assert filter_pairs(pairs, 0.5, 1, edit_unit="code_token") == pairs[:1]
    # brute-force check of the token Levenshtein distance on small lists
    assert edit_distance(["a", "b", "c"], ["b", "c", "d"]) == 2 and edit_distance([], ["x", "y"]) == 2
    with pytest.raises(ValueError, match="edit_unit"):
        filter_pairs(pairs, 0.5, 1, edit_unit="word")


def test_entity_renaming_keeps_trajectories_correct_and_changes_names():
    import numpy as np

    from icml25.rstar_math.domain.augment import augment_renamed, rename_entities
    from icml25.rstar_math.domain.step_format import StepFormat
    from icml25.rstar_math.domain.steparith import NAMES, StepArithGenerator
    from icml25.rstar_math.execution.code_executors import SafeArithExecutor

    fmt, ex = StepFormat(), SafeArithExecutor(allow_float=False)
    probs = StepArithGenerator(levels=(3, 4, 5), seed=1).sample(10)
    examples = [(fmt.prompt(p.question), "".join(p.canonical_steps())) for p in probs]
    out = augment_renamed(examples, copies=3, seed=0)
    assert len(out) == 40 and out[:10] == examples
    changed = 0
    for (q, r), (q2, r2) in zip(examples * 3, out[10:]):
        names = {w for w in q.split() if w in NAMES}
        names2 = {w for w in q2.split() if w in NAMES}
        assert len(names2) == len(names)  # a permutation: distinct names stay distinct
        changed += names != names2
        # the renamed solution still runs to the same answer, and only its names differ
        assert ex.run(fmt.code_of(r2)).stdout == ex.run(fmt.code_of(r)).stdout
        assert len(r.split()) == len(r2.split()) and [w for w in r.split() if w.isdigit()] == \
            [w for w in r2.split() if w.isdigit()]
    assert changed >= 25
    a = rename_entities(["Ann has 3 pens .", " Ann = 3"], np.random.default_rng(5))
    assert a[0].split()[0] == a[1].split()[0]  # one mapping for the question and the response
