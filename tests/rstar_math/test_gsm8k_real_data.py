"""Real data (spec §5b): GSM8K calculator annotations as gold code trajectories, and MCTS with a
replay-and-perturb mock policy over them."""

import random
import re

from icml25.rstar_math.domain.answer_check import AnswerChecker
from icml25.rstar_math.domain.benchmarks_data import gsm8k_code_steps, load_gsm8k_annotated
from icml25.rstar_math.domain.step_format import StepFormat, extract_boxed
from icml25.rstar_math.execution.code_executors import SafeArithExecutor
from icml25.rstar_math.pipeline.extraction import extract_pairs, extract_sft
from icml25.rstar_math.search.mcts import MCTS, MCTSConfig
from icml25.rstar_math.search.tree import check_invariants

FMT = StepFormat.official()


def test_annotation_to_code_reproduces_gold_answers():
    data = load_gsm8k_annotated()
    assert len(data) == 1319
    ex, ch = SafeArithExecutor(), AnswerChecker()
    ok = 0
    for r in data:
        steps = gsm8k_code_steps(r["solution"])
        if steps:
            res = ex.run(FMT.code_of("".join(steps)))
            ok += res.error is None and ch.equivalent(res.stdout, r["answer"])
    assert ok / len(data) >= 0.90


class ReplayPerturbPolicy:
    """Proposes the gold next step plus perturbed variants (wrong constant, syntax error, premature answer)."""

    def __init__(self, gold: dict, seed: int = 0):
        self.gold, self.rng = gold, random.Random(seed)

    def sample_steps(self, prompts, n=1, temperature=1.0, stop=None, max_tokens=64, seed=None):
        out = []
        for p in prompts:
            q = FMT.question_of(p)
            partial = p[len(FMT.prompt(q)):]
            steps, answer = self.gold[q]
            if "<end_of_output>" in partial:
                obs = partial.rsplit("<output>", 1)[1].split("<end_of_output>")[0].strip()
                cands = [f"<answer>The answer is \\boxed{{{obs}}}<end_of_answer>",
                         f"<answer>The answer is \\boxed{{{obs}1}}<end_of_answer>"]
            else:
                k = partial.count("<end_of_step>")
                good = steps[k]
                cands = [good]
                for _ in range(n - 1):
                    u = self.rng.random()
                    if u < 0.5:
                        cands.append(re.sub(r"= (.*)\n", lambda m: f"= ({m.group(1)}) + 1\n", good, count=1))
                    elif u < 0.75:
                        cands.append(good.replace("=", "= (", 1))
                    else:
                        cands.append(f"<answer>The answer is \\boxed{{{int(answer) + 2}}}<end_of_answer>")
            self.rng.shuffle(cands)
            out.append(cands[:n])
        return out


def test_mcts_with_replay_policy_finds_gold_and_extracts_valid_records():
    data = load_gsm8k_annotated()[:40]
    ex, ch = SafeArithExecutor(), AnswerChecker()
    gold, problems = {}, []
    for r in data:
        steps = gsm8k_code_steps(r["solution"])
        res = ex.run(FMT.code_of("".join(steps))) if steps else None
        if res is not None and res.error is None and ch.equivalent(res.stdout, r["answer"]):
            gold[r["question"]] = (steps, r["answer"])
            problems.append(r)
        if len(problems) == 15:
            break
    cfg = MCTSConfig(n_candidates=3, rollouts=16, max_depth=16, errors_threshold=1)
    trees = MCTS(ReplayPerturbPolicy(gold), ex, ch, config=cfg, fmt=FMT).search(problems)
    assert all(check_invariants(t) == [] for t in trees)
    assert sum(t.solved() for t in trees) >= 14
    sft = extract_sft(trees, fmt=FMT)
    assert len(sft) >= 14
    for rec in sft:
        g = gold[rec.query][1]
        assert ch.equivalent(extract_boxed(rec.response), g)
        assert ch.equivalent(ex.run(FMT.code_of(rec.response)).stdout, g)
    pairs = extract_pairs(trees, fmt=FMT)
    assert pairs and all(set(p.to_dict()) >= {"prompt", "pos", "neg", "pos_count", "neg_count"} for p in pairs)
    for p in pairs:  # positives never carry a code error, negatives never are the gold continuation answer
        assert "Error" not in p.pos
