"""CP-OPT loss: hand-computed value, gradient vs finite differences; the scorer learns smaller sets."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from icml25.croq import CPOptScorer, SplitConformal, cp_opt_loss


def _sig(u: float) -> float:
    return 1.0 / (1.0 + math.exp(-u))


def test_loss_equals_hand_computed_value() -> None:
    s = torch.tensor([[0.6, 0.3, 0.1], [0.2, 0.5, 0.0]], dtype=torch.float64)
    mask = torch.tensor([[True, True, True], [True, True, False]])
    y = torch.tensor([0, 1])
    tau = torch.tensor(0.25, dtype=torch.float64)
    beta, lam, alpha, lam_ce = 10.0, 5.0, 0.1, 0.5
    size = (_sig(3.5) + _sig(0.5) + _sig(-1.5) + _sig(-0.5) + _sig(2.5)) / 2
    cov = (_sig(3.5) + _sig(2.5)) / 2
    ce = -(math.log(0.6) + math.log(0.5)) / 2
    expected = size + lam * (cov - 0.9) ** 2 + lam_ce * ce
    got = cp_opt_loss(s, tau, y, mask, alpha, beta, lam, lam_ce)
    assert float(got) == pytest.approx(expected, rel=1e-12)


def test_gradient_matches_finite_differences() -> None:
    torch.manual_seed(0)
    s = torch.rand(6, 4, dtype=torch.float64)
    s = (s / s.sum(1, keepdim=True)).requires_grad_(True)
    tau = torch.tensor(0.2, dtype=torch.float64, requires_grad=True)
    mask = torch.ones(6, 4, dtype=torch.bool)
    mask[0, 3] = False
    y = torch.tensor([0, 1, 2, 3, 0, 1])
    f = lambda s_, t_: cp_opt_loss(s_, t_, y, mask, 0.1, 7.0, 3.0, 0.7)  # noqa: E731
    assert torch.autograd.gradcheck(f, (s, tau))


def test_bad_shapes_raise() -> None:
    with pytest.raises(ValueError, match="mask"):
        cp_opt_loss(torch.ones(3, 4), torch.tensor(0.1), torch.zeros(3, dtype=torch.long),
                    torch.ones(3, 3, dtype=torch.bool), 0.1, 10, 10)


def test_scorer_learns_smaller_sets_than_noisy_baseline(global_seed: int) -> None:
    """Features hold the true class clearly; the baseline score is a noisy copy. CP-OPT must shrink sets a lot."""
    rng = np.random.default_rng(global_seed)
    n, m = 1500, 5
    y = rng.integers(0, m, n)
    feats = rng.normal(size=(n, m)) + 3.0 * np.eye(m)[y]
    noisy = np.exp(0.6 * (feats + rng.normal(scale=2.0, size=(n, m))))
    noisy /= noisy.sum(1, keepdims=True)
    tr, cal, te = np.arange(600), np.arange(600, 1000), np.arange(1000, n)
    sc = CPOptScorer(hidden_dims=(32, 32), epochs=150, lr=3e-3, beta=20, alpha=0.1, random_state=global_seed)
    s = sc.fit(feats[tr], y[tr], n_options=np.full(600, m)).option_scores(feats, np.full(n, m))
    assert sc.loss_curve_[-1] < sc.loss_curve_[0]
    sizes = {}
    for name, sco in (("opt", s), ("base", noisy)):
        cp = SplitConformal(0.1)
        cp.calibrate_from_scores(sco[cal], y[cal])
        sets = cp.predict_sets(sco[te])
        sizes[name] = sets.sum(1).mean()
        assert sets[np.arange(len(te)), y[te]].mean() > 0.85
    assert sizes["opt"] < 0.8 * sizes["base"]


def test_scorer_masks_padded_slots_and_validates() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    k = np.array([2, 3] * 20)
    y = np.zeros(40, dtype=int)
    sc = CPOptScorer(hidden_dims=(8,), epochs=3).fit(X, y, n_options=k)
    s = sc.option_scores(X, k)
    assert s.shape == (40, 3) and np.all(s[k == 2, 2] == 0) and np.allclose(s.sum(1), 1)
    with pytest.raises(ValueError, match="outside the option range"):
        CPOptScorer(epochs=1).fit(X, np.full(40, 2), n_options=k)
    with pytest.raises(ValueError, match="NaN"):
        CPOptScorer(epochs=1).fit(np.full((40, 3), np.nan), y, n_options=k)
    with pytest.raises(ValueError, match="not fitted"):
        CPOptScorer().option_scores(X, k)
    assert CPOptScorer(lam=3.0).get_params()["lam"] == 3.0


@pytest.mark.parametrize("kwargs,msg", [({"beta": 0.0}, "beta"), ({"alpha": 1.5}, "alpha"), ({"epochs": 0}, "epochs"),
                                        ({"activation": "gelu"}, "activation"), ({"hidden_dims": 8}, "hidden_dims")])
def test_hyper_parameters_are_validated_in_fit(kwargs, msg) -> None:  # type: ignore[no-untyped-def]
    # fails if: a bad hyper-parameter is accepted silently (the constructor only stores it, as scikit-learn wants)
    sc = CPOptScorer(**kwargs)
    with pytest.raises((ValueError, TypeError), match=msg):
        sc.fit(np.zeros((10, 2)) + np.arange(10)[:, None], np.arange(10) % 2)


def test_scorer_as_a_classifier_labels_and_accuracy() -> None:
    # fails if: string labels do not map to option slots, or score() is not the accuracy of predict()
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 150)
    X = rng.normal(size=(150, 3)) + 3 * np.eye(3)[y]
    names = np.array(["a", "b", "c"])[y]
    sc = CPOptScorer(hidden_dims=(8,), epochs=60, lr=1e-2).fit(X, names)
    assert sc.classes_.tolist() == ["a", "b", "c"]
    assert sc.score(X, names) == pytest.approx(np.mean(sc.predict(X) == names)) and sc.score(X, names) > 0.9
    np.testing.assert_allclose(sc.predict_proba(X), sc.option_scores(X))
