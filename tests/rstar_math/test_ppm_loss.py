"""PPM loss closed forms (spec §2.8) and a learning-happens check on a tiny model."""

import math

import numpy as np
import pytest
import torch

from icml25.rstar_math.models.process_preference_model import (
    PPMModel,
    pair_accuracy,
    pair_factors,
    ppm_pair_loss,
    train_ppm,
)
from icml25.rstar_math.models.tiny_policy import make_tiny_lm


def test_paper_loss_closed_form():
    hp, hn = torch.ones(4), torch.zeros(4)
    assert float(ppm_pair_loss(hp, hn)) == pytest.approx(math.log(1 + math.e ** -1), abs=1e-6)
    assert math.log(1 + math.e ** -1) == pytest.approx(0.3133, abs=1e-4)


def test_official_factor_weighting():
    hp, hn = torch.ones(4), torch.zeros(4)
    # four pairs from one node with 2 positives x 2 negatives: factor 1/4 each, summed -> one pair's loss
    v = float(ppm_pair_loss(hp, hn, [2, 2, 2, 2], [2, 2, 2, 2], weighting="official"))
    assert v == pytest.approx(0.31326, abs=1e-4)
    assert np.allclose(pair_factors([1, 2, 0], [4, 2, 3]), [0.25, 0.25, 1 / 3])
    with pytest.raises(ValueError):
        ppm_pair_loss(hp, hn, weighting="other")


def test_ppm_learns_a_separable_preference():
    torch.set_num_threads(1)
    lm = make_tiny_lm(n_layer=1, n_head=2, n_embd=32, block_size=64, seed=0)
    pairs = [{"prompt": f"<|user|>:\nAnn has {k} apples .", "pos": f" Ann = {k} <end_of_step>",
              "neg": f" Ann = {k + 1} + Bob <end_of_step>", "pos_count": 1, "neg_count": 1} for k in range(2, 30)]
    ppm = PPMModel.from_policy(lm)
    assert np.abs(ppm.raw_scores(["p"], [" x"])).max() < 1e-3  # official head init: near-zero scores
    losses = train_ppm(ppm, pairs, steps=40, batch_size=8, lr=3e-3, seed=0)
    assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5])
    assert pair_accuracy(ppm, pairs) >= 0.95
    s = ppm.score(["p"], [" Ann = 3 <end_of_step>"])
    assert s.shape == (1,) and -1 <= s[0] <= 1


def test_ppm_save_load_round_trip_with_official_head_keys(tmp_path):
    torch.manual_seed(0)
    ppm = PPMModel.from_policy(make_tiny_lm(n_layer=1, n_head=2, n_embd=16, block_size=64, seed=1))
    with torch.no_grad():
        ppm.summary.weight.normal_()
        ppm.summary.bias.fill_(0.3)
    ppm.eval()
    ppm.save(tmp_path / "ppm")
    assert sorted(torch.load(tmp_path / "ppm" / "value_head.bin")) == ["v_head.summary.bias", "v_head.summary.weight"]
    other = PPMModel.from_policy(make_tiny_lm(n_layer=1, n_head=2, n_embd=16, block_size=64, seed=2)).eval()
    prefixes, steps = ["<question> Ann has 3 apples ."] * 2, [" Ann = 3 <end_of_step>", " Bob = 4 <end_of_step>"]
    assert not np.allclose(other.score(prefixes, steps), ppm.score(prefixes, steps))
    other.load_weights(tmp_path / "ppm")
    np.testing.assert_allclose(other.score(prefixes, steps), ppm.score(prefixes, steps), rtol=1e-6)
    head = tmp_path / "ppm" / "value_head.bin"
    torch.save({"w": torch.zeros(1, 16)}, head)
    with pytest.raises(ValueError, match="v_head.summary.weight"):
        other.load_weights(tmp_path / "ppm")


def test_shared_prefix_scoring_equals_plain_scoring():
    from icml25.rstar_math.domain.step_format import StepFormat
    from icml25.rstar_math.domain.steparith import StepArithGenerator

    fmt = StepFormat()
    ppm = PPMModel.from_policy(make_tiny_lm(n_layer=2, n_head=2, n_embd=32, block_size=256, seed=4))
    with torch.no_grad():
        ppm.summary.weight.normal_()
    prefixes, steps = [], []
    for p in StepArithGenerator(levels=(1, 3, 5), seed=9).sample(5):  # prefixes of different lengths
        sol = p.canonical_steps()
        for k in range(len(sol)):
            head = fmt.prompt(p.question) + "".join(sol[:k])
            for cand in sol[k:k + 3]:  # several children per prefix, as in an expansion
                prefixes.append(head)
                steps.append(cand)
    prefixes.append(prefixes[0])
    steps.append("")  # an empty step takes the plain path
    from icml25.rstar_math.models._prefix_scoring import split_shareable

    idx_shared, _, _, idx_plain = split_shareable(ppm.tokenizer, prefixes, steps, ppm.block_size)
    assert idx_plain == [len(steps) - 1] and len(idx_shared) == len(steps) - 1
    shared = ppm.raw_scores(prefixes, steps, chunk=7)
    plain = ppm.raw_scores(prefixes, steps, share_prefix=False)
    assert len(set(prefixes)) < len(prefixes) and np.ptp(plain) > 0.1
    np.testing.assert_allclose(shared, plain, atol=1e-4, rtol=1e-4)


def test_shared_prefix_scoring_near_the_context_limit():
    # one prefix almost fills the context and has a short step; another child batch row has a long step:
    # the padded tail of the short row must not index positions past the context (it did before the clamp)
    from icml25.rstar_math.domain.step_format import StepFormat
    from icml25.rstar_math.domain.steparith import StepArithGenerator

    fmt = StepFormat()
    ppm = PPMModel.from_policy(make_tiny_lm(n_layer=1, n_head=2, n_embd=32, block_size=120, seed=1))
    with torch.no_grad():
        ppm.summary.weight.normal_()
    tok = ppm.tokenizer
    p = StepArithGenerator(levels=(6,), seed=2).sample(1)[0]
    sol = p.canonical_steps()
    long_prefix = fmt.prompt(p.question) + "".join(sol[:3])
    words = tok.words(long_prefix)
    short = " " + " ".join(words[-(ppm.block_size - 6):]).lstrip("\n ")
    short_step, long_step = " Ann = 3 <end_of_step>", sol[4]
    assert len(tok.encode(short)) + 1 + len(tok.encode(short_step)) <= ppm.block_size
    assert len(tok.encode(short)) + 1 + len(tok.encode(long_step)) > ppm.block_size
    other = fmt.prompt(StepArithGenerator(levels=(1,), seed=3).sample(1)[0].question)
    prefixes, steps = [short, other], [short_step, long_step]
    shared = ppm.raw_scores(prefixes, steps, chunk=8)
    plain = ppm.raw_scores(prefixes, steps, share_prefix=False)
    np.testing.assert_allclose(shared, plain, atol=1e-4, rtol=1e-4)
