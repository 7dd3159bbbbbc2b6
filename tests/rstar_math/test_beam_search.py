"""Step-level beam search (spec §2.11, official ``sft_eval_bs.yaml``): hand-computed and reference selections,
oracle-scored accuracy on StepArith, width 1 = best-scored step, one batched policy call per depth, bad input,
determinism."""

import random
import zlib
from dataclasses import replace

import numpy as np
import pytest

from icml25.rstar_math import (
    BeamSearchConfig,
    NoisyRuleSolver,
    SafeArithExecutor,
    StepArithGenerator,
    StepBeamSearch,
    StepFormat,
    Tree,
    check_invariants,
    evaluate,
    finished_solutions,
)
from icml25.rstar_math.domain.steparith import step_is_consistent
from icml25.rstar_math.pipeline.evaluation import sample_chains
from icml25.rstar_math.search.tree import FAILURE_REASONS

EX = SafeArithExecutor(allow_float=False)
FMT = StepFormat()
Q = "How many ?"


def _code(name, value="1"):
    return f" {name} = {value} <end_of_step>"


def _ans(k):
    return f" <answer> \\boxed{{ {k} }} <end_of_answer>"


class TablePolicy:
    """Deterministic policy over a fixed step tree: ``table[partial] = [candidate texts]`` (first ``n`` given)."""

    def __init__(self, table, question=Q):
        self.table, self.head, self.calls, self.prompts = table, FMT.prompt(question), 0, []

    def sample_steps(self, prompts, n=1, temperature=1.0, stop=None, max_tokens=64, seed=None):
        self.calls += 1
        self.prompts.append(len(prompts))
        return [list(self.table.get(p[len(self.head):], []))[:n] for p in prompts]


class TableScorer:
    """Score of a step by its text before any ``<output>`` block (the executor appends it to closing steps)."""

    def __init__(self, scores):
        self.scores, self.calls = scores, 0

    def score(self, prefixes, steps):
        self.calls += 1
        return np.array([self.scores[s.split(" <output>")[0]] for s in steps])


def _texts(tree, tags):
    out = []
    for tag in tags:
        node = tree.root
        for k in tag.split(".")[1:]:
            node = node.children[int(k) - 1]
        out.append(node.text.split(" <output>")[0])
    return out


# ---- (a) a small fixed step tree, expectations computed by hand ---------------------------------------------
A, B, ERR, JUNK = _code("a"), _code("b", "2"), _code("c", "1 // 0"), " garbage without a stop tag"
D, E, F, G, H = _code("d", "b + 1"), _code("e", "b * 2"), _code("f", "a + 5"), _code("g", "d - 1"), _code("h", "g")
PRINT = " print ( d ) <end_of_code>"
HAND_TABLE = {"": [A, B, ERR, JUNK], B: [_ans(7), D, E], A: [F, _ans(3), JUNK], B + D: [PRINT, G],
              B + D + G: [_ans(2), H]}
HAND_SCORES = {A: 0.5, B: 0.9, _ans(7): 0.2, D: 0.8, E: 0.6, F: 0.7, _ans(3): 0.95, PRINT: 0.3, G: 0.4,
               _ans(2): 0.95, H: 0.1}


def test_hand_computed_beams_and_answer():
    # By hand, B = 2: depth 1 valid {A .5, B .9} (ERR: code error, JUNK: invalid) -> beams [B, A].
    # depth 2 candidates (beam order B, A): ans7 .2, D .8, E .6, F .7, ans3 .95 -> sorted ans3, D, F, E, ans7;
    #   top 2: ans3 finishes (width 1), D lives. ans7 is outranked: never finished.
    # depth 3: D -> PRINT .3, G .4 -> top 1: G. depth 4: ans2 .95 (H is too deep at max_depth 4) -> finished,
    #   width 0. Answers 3 and 2 tie at .95: the first found (3) wins.
    policy, scorer = TablePolicy(HAND_TABLE), TableScorer(HAND_SCORES)
    bs = StepBeamSearch(policy, EX, scorer, BeamSearchConfig(beam_width=2, n_candidates=4, max_depth=4))
    (tree,) = bs.search([(Q, "3")])
    assert [_texts(tree, tags) for tags in tree.meta["beams"]] == [[B, A], [D], [G], []]
    assert [(f["answer"], f["score"], f["depth"]) for f in tree.meta["finished"]] == [("3", 0.95, 2), ("2", 0.95, 4)]
    assert tree.meta["answer"] == "3" and tree.meta["score"] == 0.95
    assert tree.meta["generated_steps"] == 4 + 3 + 3 + 2 + 2
    assert policy.calls == scorer.calls == 4 and bs.policy_calls == 4
    sols = finished_solutions(tree)
    assert [(n.answer, s, n.correct) for n, s in sols] == [("3", 0.95, True), ("2", 0.95, False)]
    reasons = {n.text: n.reason for n in tree.nodes()}
    assert reasons[ERR] == "too_many_code_errors" and reasons[JUNK] == "no_valid_child"
    assert reasons[H] == "too_many_steps"
    assert check_invariants(tree) == []
    # the record survives the JSON round trip
    back = Tree.from_json(tree.to_json())
    assert [(n.answer, s) for n, s in finished_solutions(back)] == [("3", 0.95), ("2", 0.95)]


def test_hand_tree_with_one_less_depth_drops_too_deep_steps():
    # max_depth 3: PRINT and G are code steps at depth 3 -> too deep, dropped; only ans3 finished.
    bs = StepBeamSearch(TablePolicy(HAND_TABLE), EX, TableScorer(HAND_SCORES),
                        BeamSearchConfig(beam_width=2, n_candidates=4, max_depth=3))
    (tree,) = bs.search([(Q, None)])
    assert [_texts(tree, tags) for tags in tree.meta["beams"]] == [[B, A], [D], []]
    assert tree.meta["answer"] == "3" and len(tree.meta["finished"]) == 1


# ---- (a') random step trees against an independent reference of the selection rule ------------------------
def _random_tree(rng, depth_left, prefix, table, kinds, scores, counter):
    """Random branching with explicit step kinds; every step text is unique (variable / answer numbered)."""
    if depth_left == 0:
        return
    kids = []
    for _ in range(rng.randint(1, 4)):
        counter[0] += 1
        k = counter[0]
        kind = rng.choices(["ok", "err", "junk", "ans"], weights=[5, 1, 1, 2])[0]
        if kind == "ans" and any(kinds[c] == "ans" for c in kids):
            kind = "ok"  # one answer per expansion (the search keeps only the first sampled answer)
        text = {"ok": _code(f"v{k}", str(k)), "err": _code(f"v{k}", "1 // 0"), "junk": f" junk {k}",
                "ans": _ans(k)}[kind]
        kids.append(text)
        kinds[text] = kind
        scores[text] = round(rng.uniform(-1, 1), 1)  # one decimal: ties happen
        if kind == "ok":
            _random_tree(rng, depth_left - 1, prefix + text, table, kinds, scores, counter)
    table[prefix] = kids


def _reference(table, kinds, scores, width, max_depth):
    """The rule written directly over the table: per depth, the valid children of the live beams in beam order,
    stable sort by score, top ``width``: answers finish (width - 1), the rest live."""
    live, finished, beams = [""], [], []
    for depth in range(1, max_depth + 1):
        if not live or width == 0:
            break
        cands = []
        for partial in live:
            for text in table.get(partial, []):
                if kinds[text] in ("err", "junk") or (kinds[text] == "ok" and depth >= max_depth):
                    continue
                cands.append((partial + text, text))
        cands.sort(key=lambda c: -scores[c[1]])
        top = cands[:width]
        finished += [(c[1], scores[c[1]]) for c in top if kinds[c[1]] == "ans"]
        live = [c[0] for c in top if kinds[c[1]] != "ans"]
        width -= len(top) - len(live)
        beams.append(live)
    best = None
    for text, s in finished:
        if best is None or s > best[1]:
            best = (text, s)
    return beams, finished, best


@pytest.mark.parametrize("seed", range(12))
def test_selection_matches_reference_on_random_trees(seed):
    rng = random.Random(seed)
    table, kinds, scores = {}, {}, {}
    _random_tree(rng, 5, "", table, kinds, scores, [0])
    width, max_depth = rng.randint(1, 4), rng.randint(2, 5)
    bs = StepBeamSearch(TablePolicy(table), EX, TableScorer(scores),
                        BeamSearchConfig(beam_width=width, n_candidates=4, max_depth=max_depth))
    (tree,) = bs.search([(Q, None)])
    beams, finished, best = _reference(table, kinds, scores, width, max_depth)
    got_beams = [["".join(n.text for n in _node(tree, t).path()) for t in tags] for tags in tree.meta["beams"]]
    assert got_beams == beams
    assert [(n.text, s) for n, s in finished_solutions(tree)] == finished
    assert tree.meta["answer"] == (None if best is None else best[0].split("{")[1].split("}")[0].strip())
    assert check_invariants(tree) == []


def _node(tree, tag):
    node = tree.root
    for k in tag.split(".")[1:]:
        node = node.children[int(k) - 1]
    return node


# ---- (b) oracle scorer on real StepArith problems -----------------------------------------------------------
class OracleScorer:
    """+1 for a step consistent with the generator's ground truth, -1 otherwise."""

    def __init__(self, problems):
        self.by_head = {FMT.prompt(p.question): p for p in problems}

    def score(self, prefixes, steps):
        out = []
        for pre, st in zip(prefixes, steps):
            head = next(h for h in self.by_head if pre.startswith(h))
            out.append(1.0 if step_is_consistent(self.by_head[head], pre[len(head):], st) else -1.0)
        return np.array(out)


def test_oracle_scored_beam_search_beats_single_samples_and_solves_easy_levels():
    easy = StepArithGenerator(levels=(1, 2), seed=5).sample(16)
    hard = StepArithGenerator(levels=(3, 4), seed=6).sample(12)
    pool = easy + hard
    cfg = replace(BeamSearchConfig.repo_eval(), max_depth=12)  # the official 8 x 8
    trees = StepBeamSearch(NoisyRuleSolver(pool, seed=3), EX, OracleScorer(pool), cfg).search(pool)
    ok = [t.meta["answer"] == p.answer for t, p in zip(trees, pool)]
    single = sample_chains(NoisyRuleSolver(pool, seed=3), EX, pool, 1, 1.0, 12, 1)
    single_ok = [row[0].correct for row in single]
    greedy = sample_chains(NoisyRuleSolver(pool, seed=3), EX, pool, 1, 0.0, 12, 1)
    assert np.mean(ok[:16]) >= 0.95  # L1-L2
    assert np.mean(ok) >= np.mean(single_ok) + 0.2  # the noisy solver's own sampled chain is much worse
    assert np.mean(ok) >= np.mean([row[0].correct for row in greedy]) - 0.05  # the noise-free greedy chain
    # the chosen answer's score is +1 exactly when it is correct (the oracle never scores a wrong answer +1)
    assert all((t.meta["score"] == 1.0) == o for t, o in zip(trees, ok) if t.meta["answer"] is not None)


# ---- (c) beam width 1 is the best-scored step per depth -----------------------------------------------------
def test_width_one_picks_the_best_scored_candidate():
    # by hand: root candidates A .5, B .9, ERR (failure) -> B; then B's best ans3? no: B -> ans7 .2, D .8, E .6
    # -> D; D -> PRINT .3, G .4 -> G; G -> ans2 .95 (H too deep at max_depth 4) -> finished with answer 2.
    bs = StepBeamSearch(TablePolicy(HAND_TABLE), EX, TableScorer(HAND_SCORES),
                        BeamSearchConfig(beam_width=1, n_candidates=4, max_depth=4))
    (tree,) = bs.search([(Q, None)])
    assert [_texts(tree, tags) for tags in tree.meta["beams"]] == [[B], [D], [G], []]
    assert tree.meta["answer"] == "2"
    # on StepArith: every kept beam is the first max-scored valid child of the previous beam
    pool = StepArithGenerator(levels=(2, 3), seed=2).sample(6)
    trees = StepBeamSearch(NoisyRuleSolver(pool, seed=1), EX, _HashScorer(),
                           BeamSearchConfig(beam_width=1, n_candidates=4, max_depth=10)).search(pool)
    for t in trees:
        parent = t.root
        for tags in t.meta["beams"] + [None]:
            valid = [c for c in parent.children if c.reason is None]
            if not valid:
                break
            best = max(valid, key=lambda c: c.Q)  # first of the maxima
            if tags is None or not tags:
                assert best.is_answer and t.meta["finished"][-1]["tag"] == _tag(best)
                break
            assert _node(t, tags[0]) is best
            parent = best


def _tag(node):
    from icml25.rstar_math.search.beam_search import node_tag

    return node_tag(node)


class _HashScorer:
    """A fixed pseudo-random score per (prefix, step), independent of call order."""

    def score(self, prefixes, steps):
        return np.array([zlib.crc32((p + "|" + s).encode()) % 2001 / 1000.0 - 1.0 for p, s in zip(prefixes, steps)])


# ---- (d) one batched policy call per depth ------------------------------------------------------------------
class CountingPolicy:
    def __init__(self, inner):
        self.inner, self.batches = inner, []

    def sample_steps(self, prompts, **kw):
        self.batches.append(len(prompts))
        return self.inner.sample_steps(prompts, **kw)


def test_one_policy_call_and_one_scorer_call_per_depth():
    pool = StepArithGenerator(levels=(1, 2, 3, 4), seed=4).sample(10)
    policy = CountingPolicy(NoisyRuleSolver(pool, seed=0))
    scorer = CountingScorer(OracleScorer(pool))
    bs = StepBeamSearch(policy, EX, scorer, BeamSearchConfig(beam_width=3, n_candidates=3, max_depth=10))
    trees = bs.search(pool)
    depths = max(len(t.meta["beams"]) for t in trees)
    assert len(policy.batches) == bs.policy_calls == depths <= 10
    assert scorer.calls <= depths
    assert policy.batches[0] == len(pool)  # every problem's root in the first call
    # every later call serves exactly the live beams of all problems kept at the depth before
    for d in range(1, depths):
        assert policy.batches[d] == sum(len(t.meta["beams"][d - 1]) for t in trees if len(t.meta["beams"]) > d)
    assert sum(t.meta["generated_steps"] for t in trees) == 3 * sum(policy.batches)


class CountingScorer:
    def __init__(self, inner):
        self.inner, self.calls = inner, 0

    def score(self, prefixes, steps):
        self.calls += 1
        return self.inner.score(prefixes, steps)


# ---- (e) bad input -----------------------------------------------------------------------------------------
def test_bad_input_is_rejected_clearly():
    for kw, name in [({"beam_width": 0}, "beam_width"), ({"n_candidates": 1.5}, "n_candidates"),
                     ({"max_depth": -1}, "max_depth"), ({"temperature": float("nan")}, "temperature"),
                     ({"errors_threshold": 0}, "errors_threshold"), ({"max_tokens": "8"}, "max_tokens"),
                     ({"seed": 0.5}, "seed")]:
        with pytest.raises((ValueError, TypeError), match=name):
            BeamSearchConfig(**kw)
    pol, sc = TablePolicy(HAND_TABLE), TableScorer(HAND_SCORES)
    with pytest.raises(TypeError, match="scorer"):
        StepBeamSearch(pol, EX, None)
    with pytest.raises(TypeError, match="config"):
        StepBeamSearch(pol, EX, sc, {"beam_width": 2})
    with pytest.raises(TypeError, match="policy"):
        StepBeamSearch(object(), EX, sc)
    bs = StepBeamSearch(pol, EX, sc)
    with pytest.raises(ValueError, match="non-empty"):
        bs.search([])
    with pytest.raises(ValueError, match="question"):
        bs.search([{"question": "  "}])

    class Short:
        def sample_steps(self, prompts, **kw):
            return []

    with pytest.raises(RuntimeError, match="sample lists"):
        StepBeamSearch(Short(), EX, sc).search([(Q, None)])

    class BadScores:
        def score(self, prefixes, steps):
            return np.zeros(len(steps) + 1)

    with pytest.raises(RuntimeError, match="one finite score"):
        StepBeamSearch(pol, EX, BadScores()).search([(Q, None)])
    with pytest.raises(ValueError, match="StepBeamSearch"):
        finished_solutions(Tree(Q))
    with pytest.raises(ValueError, match="scorer"):
        pool = StepArithGenerator(levels=(1,), seed=0).sample(2)
        evaluate(pool, NoisyRuleSolver(pool), EX, methods=("beam",), ns=(2,))


# ---- (f) determinism, and the evaluation method ------------------------------------------------------------
def test_fixed_seed_is_deterministic_and_evaluate_beam():
    pool = StepArithGenerator(levels=(2, 3), seed=9).sample(8)
    cfg = BeamSearchConfig(beam_width=3, n_candidates=3, max_depth=10, seed=7)

    def run(solver_seed):
        trees = StepBeamSearch(NoisyRuleSolver(pool, seed=solver_seed), EX, _HashScorer(), cfg).search(pool)
        return [t.to_json() for t in trees]

    assert run(1) == run(1)
    assert run(1) != run(2)
    res = evaluate(pool, NoisyRuleSolver(pool, seed=0), EX, OracleScorer(pool), methods=("beam",), ns=(1, 4),
                   max_depth=10)
    assert set(res) == {"beam@1", "beam@4"}
    assert res["beam@4"]["steps"] > res["beam@1"]["steps"] > 0
    assert res["beam@4"]["acc"] >= res["beam@1"]["acc"]
    assert len(res["beam@4"]["correct"]) == len(pool)
    fails = [n for t in StepBeamSearch(NoisyRuleSolver(pool, seed=0), EX, _HashScorer(), cfg).search(pool)
             for n in t.nodes() if n.reason in FAILURE_REASONS]
    assert all(n.N == 1 and n.W == -1 for n in fails)
