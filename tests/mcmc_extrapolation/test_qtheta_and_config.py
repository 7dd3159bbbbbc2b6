"""q_θ learns transitions, best-of-n picks the best candidate, docstrings run, Config validates."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from icml25.mcmc_extrapolation import Ehrlich, QTheta  # noqa: E402


def test_qtheta_learns_a_deterministic_transformation() -> None:
    rng = np.random.default_rng(0)
    prev = rng.integers(0, 5, size=(256, 6))
    nxt = (prev + 1) % 5  # next state: every token shifted by one
    q = QTheta(num_states=5, length=6, n_layer=1, n_head=2, n_embd=32, seed=0)
    q.fit(prev, nxt, epochs=40, batch_size=64, lr=1e-2, seed=0)
    assert q.losses[-1] < 0.2 * q.losses[0]
    test = rng.integers(0, 5, size=(20, 6))
    out = q.sample(test, n_samples=1, temperature=0.5, seed=0)[:, 0]
    assert np.mean(out == (test + 1) % 5) > 0.9


def test_best_of_n_keeps_the_best_candidate_and_counts_evaluations() -> None:
    f = Ehrlich(6, 8, 1, 3, seed=0)
    q = QTheta(6, 8, seed=1)  # untrained: random candidates
    x0 = f.sample_prior(12, seed=0)
    res = q.transform(x0, steps=3, n_candidates=5, guide=f, seed=0)
    assert res.n_evals == 15 and res.states.shape == (12, 4, 8)
    assert np.all(res.values[:, 1:] == np.where(np.isfinite(f(res.states[:, 1:].reshape(-1, 8))).reshape(12, 3),
                                                f(res.states[:, 1:].reshape(-1, 8)).reshape(12, 3),
                                                res.values[:, 1:]))
    # same seed, same outputs
    again = q.transform(x0, steps=3, n_candidates=5, guide=f, seed=0)
    np.testing.assert_array_equal(res.states, again.states)
    with pytest.raises(ValueError, match="guide"):
        q.transform(x0, steps=1, n_candidates=2)




def test_config_validates_fields() -> None:
    from icml25.mcmc_extrapolation.reproduce import Config

    with pytest.raises(ValueError, match="selections"):
        Config(selections=("best",))
    with pytest.raises(ValueError, match="n_embd"):
        Config(n_embd=30, n_head=4)
    with pytest.raises(ValueError, match="train_max"):
        Config(train_max=1.5)
