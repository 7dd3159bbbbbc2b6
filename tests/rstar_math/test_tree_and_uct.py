"""UCT (zero-bonus rule), update arithmetic, invariants and JSON round trip on hand-built trees."""

import math

import pytest

from icml25.rstar_math.search.tree import (
    NO_VALID_CHILD,
    Node,
    Tree,
    check_invariants,
    select_child,
    uct_score,
    update,
    update_recursive,
)


def _child(parent, text="s"):
    n = Node(text=text, parent=parent, depth=parent.depth + 1)
    parent.children.append(n)
    return n


def test_update_recursive_arithmetic():
    root = Node()
    a = _child(root)
    b = _child(a)
    update_recursive(b, 1.0)
    update_recursive(b, -1.0)
    c = _child(a)
    update_recursive(c, -1.0)
    assert (root.N, root.W) == (3, -1.0)
    assert (a.N, a.W) == (3, -1.0) and a.Q == pytest.approx(-1 / 3)
    assert (b.N, b.W, b.v0) == (2, 0.0, 1.0)
    assert (c.N, c.Q, c.v0) == (1, -1.0, -1.0)
    assert a.v0 == 1.0  # first value ever assigned


def test_uct_zero_bonus_rule_on_hand_built_tree():
    root = Node()
    a, b, c = _child(root, "a"), _child(root, "b"), _child(root, "c")
    # nothing visited: every child scores 0, ties go to the first child
    assert [uct_score(x) for x in (a, b, c)] == [0.0, 0.0, 0.0]
    assert select_child(root) is a
    # a lost once: Q=-1 plus exploration 2*sqrt(ln 1 / 1) = 0 -> -1 ; b, c unvisited score 0 -> b chosen
    update_recursive(a, -1.0)
    assert uct_score(a) == pytest.approx(-1.0)
    assert select_child(root) is b
    update_recursive(b, 1.0)  # root N=2
    expected_b = 1.0 + 2.0 * math.sqrt(math.log(2) / 1)
    assert uct_score(b) == pytest.approx(expected_b)
    assert uct_score(c) == 0.0  # unvisited child keeps zero bonus (textbook UCT would give +inf)
    assert uct_score(c, unvisited_bonus="infinite") == math.inf
    assert select_child(root) is b
    assert select_child(root, unvisited_bonus="infinite") is c
    # terminal children are skipped; all terminal -> None
    b.terminal = True
    # a: -1 + 2 sqrt(ln 2 / 1) = 0.665 beats the unvisited c (0) under the zero-bonus rule
    assert uct_score(a) == pytest.approx(-1.0 + 2.0 * math.sqrt(math.log(2)))
    assert select_child(root) is a
    a.terminal = True
    assert select_child(root) is c
    c.terminal = True
    assert select_child(root) is None


def test_uct_parent_unvisited_gives_no_exploration():
    root = Node()
    a = _child(root)
    update(a, 0.5)  # a PPM prior on the child only: parent N = 0
    assert uct_score(a, c=2.0) == pytest.approx(0.5)


def test_invariants_and_failure_terminals():
    t = Tree("q", "1")
    a = _child(t.root)
    ok = _child(a)
    ok.terminal, ok.answer, ok.correct = True, "1", True
    update_recursive(ok, 1.0)
    bad = _child(a)
    bad.terminal, bad.reason = True, NO_VALID_CHILD
    update(bad, -1.0)
    bad.n_local += 1
    assert check_invariants(t) == []
    assert a.N == 1 and a.W == 1.0  # the failure value was not backed up
    bad.W = -2.0
    assert check_invariants(t)  # the audit can fail


def test_json_round_trip():
    t = Tree("q", "7")
    a = _child(t.root, "x")
    b = _child(a, "y")
    b.terminal, b.answer, b.correct = True, "7", True
    update_recursive(b, 1.0)
    d = t.to_json()
    assert d["nodes"]["0.1.1"]["q_value"] == 1.0 and d["nodes"]["0.1"]["visit_count"] == 1
    t2 = Tree.from_json(d)
    assert [n.text for n in t2.nodes()] == [n.text for n in t.nodes()]
    assert t2.root.children[0].children[0].is_answer and t2.solved()
    with pytest.raises(ValueError):
        Tree.from_json({"nodes": {}})
