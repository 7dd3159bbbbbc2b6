"""Neural policy adapter (shared-prefix sampling vs TinyGPT.generate), SFT masking, evaluation methods."""

import torch

from icml25.llm import TinyGPT
from icml25.rstar_math.domain.bootstrap_solver import NoisyRuleSolver
from icml25.rstar_math.domain.step_format import StepFormat
from icml25.rstar_math.domain.steparith import StepArithGenerator
from icml25.rstar_math.domain.word_tokenizer import WordTokenizer
from icml25.rstar_math.execution.code_executors import SafeArithExecutor
from icml25.rstar_math.models.sft import lm_batches
from icml25.rstar_math.models.tiny_policy import TinyStepPolicy, make_tiny_lm
from icml25.rstar_math.pipeline.evaluation import evaluate, majority_vote, sample_chains
from icml25.rstar_math.search.policies import ConstantScorer

FMT = StepFormat()
EX = SafeArithExecutor(allow_float=False)


def test_word_tokenizer_round_trip():
    tok = WordTokenizer()
    p = StepArithGenerator(seed=4).sample(1)[0]
    text = FMT.render(p.question, p.canonical_steps())
    ids = tok.encode(text)
    assert tok.unk_id not in ids
    assert tok.encode(tok.decode(ids)) == ids


def test_shared_prefix_sampler_matches_tinygpt_generate_greedy(tmp_path):
    torch.set_num_threads(1)
    lm = make_tiny_lm(n_layer=1, n_head=2, n_embd=32, block_size=192, seed=3)
    probs = StepArithGenerator(levels=(1, 2, 3), seed=5).sample(4)
    prompts = [FMT.prompt(p.question) for p in probs]  # different lengths: exercises left padding
    fast = TinyStepPolicy(lm).sample_steps(prompts, n=2, temperature=0.0, stop=list(FMT.stop), max_tokens=12)
    ref = TinyStepPolicy(lm, shared_prefix=False).sample_steps(prompts, n=2, temperature=0.0,
                                                               stop=list(FMT.stop), max_tokens=12)
    assert fast == ref
    sampled = TinyStepPolicy(lm).sample_steps(prompts, n=3, temperature=1.0, stop=list(FMT.stop), max_tokens=12,
                                              seed=1)
    again = TinyStepPolicy(lm).sample_steps(prompts, n=3, temperature=1.0, stop=list(FMT.stop), max_tokens=12,
                                            seed=1)
    assert sampled == again and all(len(r) == 3 for r in sampled)
    lm2 = TinyGPT.load(lm.save(tmp_path / "m"))
    assert TinyStepPolicy(lm2).sample_steps(prompts, 2, 0.0, list(FMT.stop), 12) == fast


def test_saved_policy_loads_through_load_model(tmp_path):
    from icml25.llm import load_model

    lm = make_tiny_lm(n_layer=1, n_head=2, n_embd=32, block_size=192, seed=4)
    d = lm.save(tmp_path / "policy")
    back = load_model(f"tiny:{d}")
    assert back.tokenizer.itos == lm.tokenizer.itos
    prompts = [FMT.prompt(p.question) for p in StepArithGenerator(levels=(1, 2), seed=6).sample(3)]
    for a, b in zip(lm.next_token_logits(prompts), back.next_token_logits(prompts)):
        assert torch.allclose(torch.as_tensor(a), torch.as_tensor(b))
    greedy = TinyStepPolicy(lm).sample_steps(prompts, 1, 0.0, list(FMT.stop), 12)
    assert TinyStepPolicy(back).sample_steps(prompts, 1, 0.0, list(FMT.stop), 12) == greedy


def test_sampler_seed_none_is_fresh_entropy():
    torch.set_num_threads(1)
    lm = make_tiny_lm(n_layer=1, n_head=2, n_embd=32, block_size=192, seed=3)
    prompts = [FMT.prompt(p.question) for p in StepArithGenerator(levels=(1,), seed=5).sample(2)]
    pol = TinyStepPolicy(lm)

    def draw(seed):  # an untrained model: near-uniform over ~1,100 words, so 24 tokens per row never repeat by chance
        return pol.sample_steps(prompts, n=4, temperature=1.0, stop=list(FMT.stop), max_tokens=24, seed=seed)

    assert draw(7) == draw(7)
    unseeded = [draw(None) for _ in range(3)]
    assert unseeded[0] != unseeded[1] and unseeded[1] != unseeded[2]
    assert draw(0) not in unseeded  # seed=None is not a hidden seed 0


def test_sft_masks_prompt_and_executor_output():
    tok = WordTokenizer()
    p = StepArithGenerator(levels=(1,), seed=0).sample(1)[0]
    prompt, resp = FMT.prompt(p.question), "".join(p.canonical_steps())
    x, y, lengths = lm_batches(tok, [(prompt, resp)], block=256)
    targets = [tok.itos[i] for i in y[0] if i != -100]
    n_prompt = len(tok.encode(prompt))
    assert (y[0][:n_prompt] == -100).all()  # no loss on predicting prompt tokens
    assert y[0][n_prompt] == tok.encode(resp)[0]  # the first response token is a target
    assert "<output>" not in targets and "<end_of_output>" not in targets
    assert targets[-1] == "<|eot|>" and "<end_of_code>" in targets and "<end_of_answer>" in targets
    assert targets.count(p.answer) == 1  # only the boxed answer: the executor's copy inside <output> is masked


def test_sample_chains_and_evaluate_with_rule_solver():
    probs = StepArithGenerator(levels=(1, 2), seed=2).sample(10)
    solver = NoisyRuleSolver(probs, seed=0)
    greedy = sample_chains(solver, EX, probs, k=1, temperature=0.0, max_depth=10)
    assert all(c[0].correct for c in greedy)  # temperature 0 removes the solver's noise
    res = evaluate(probs, NoisyRuleSolver(probs, seed=1), EX, ConstantScorer(0.0), ns=(2, 4), max_depth=10,
                   mcts_config=None)
    assert res["greedy"]["acc"] == 1.0
    for key in ("maj@2", "maj@4", "bon@2", "bon@4", "mcts@2", "mcts@4"):
        assert 0.0 <= res[key]["acc"] <= 1.0 and res[key]["steps"] > 0
    assert res["maj@4"]["steps"] > res["maj@2"]["steps"]
    assert majority_vote(["3", "4", "3", None]) == "3" and majority_vote([None]) is None


def test_top_k_vote_against_brute_force():
    import random

    from icml25.rstar_math.pipeline.evaluation import top_k_vote

    rng = random.Random(0)
    for _ in range(200):
        cands = [(rng.choice([0.1, 0.5, 0.9, -1.0]), rng.choice(["1", "2", "3", None])) for _ in range(6)]
        k = rng.randint(1, 6)
        valid = [c for c in cands if c[1] is not None]
        # brute force: the k best by value (stable), then the most frequent answer, first-seen on ties
        top = sorted(valid, key=lambda c: -c[0])[:k]
        counts = {a: sum(1 for _, b in top if b == a) for _, a in top}
        want = max(dict.fromkeys(a for _, a in top), key=lambda a: counts[a]) if top else None
        assert top_k_vote(cands, k) == want
    assert top_k_vote([(0.9, None)], 2) is None


def test_multi_run_mcts_one_run_top1_is_the_best_valued_answer():
    from icml25.rstar_math.pipeline.evaluation import multi_run_mcts
    from icml25.rstar_math.search.mcts import MCTS, MCTSConfig

    probs = StepArithGenerator(levels=(2, 3), seed=3).sample(6)
    scorer, cfg = ConstantScorer(0.0), MCTSConfig(n_candidates=3, max_depth=10, errors_threshold=1)
    one = multi_run_mcts(probs, NoisyRuleSolver(probs, seed=2), EX, scorer, runs=1, rollouts=3, top_k=1,
                         mcts_config=cfg, seed=5)
    from dataclasses import replace

    trees = MCTS(NoisyRuleSolver(probs, seed=2), EX, scorer=scorer,
                 config=replace(cfg, mode="inference", rollouts=3, seed=5, max_tokens=32)).search(
        [(p.question, None) for p in probs])
    assert one == [t.meta["anytime"][-1][1] for t in trees]
    res = evaluate(probs, NoisyRuleSolver(probs, seed=2), EX, scorer, methods=("mcts_vote",), ns=(1,),
                   mcts_config=cfg, max_depth=10, vote=(3, 2, 2))
    assert 0.0 <= res["mcts_vote"]["acc"] <= 1.0 and len(res["mcts_vote"]["correct"]) == 6
