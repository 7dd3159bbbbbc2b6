"""PPM loss closed forms (spec §2.8) and a learning-happens check on a tiny model."""

import math

import numpy as np
import pytest
import torch

from icml25.rstar_math.process_preference_model import (
    PPMModel,
    pair_accuracy,
    pair_factors,
    ppm_pair_loss,
    train_ppm,
)
from icml25.rstar_math.tiny_policy import make_tiny_lm


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
