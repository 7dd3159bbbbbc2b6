"""Every loss on a hand-computed batch; the penalty's direction and floor."""

import pytest
import torch

from icml25.cgcivl import awr_loss, conservative_penalty, expectile_weight, ivl_loss, value_floor


def test_ivl_loss_by_hand():
    v = torch.tensor([[-1.0, -2.0], [-1.5, -2.5]])
    nv_t = torch.tensor([[-0.5, -3.0], [-1.0, -1.0]])
    v_t = torch.tensor([[-1.0, -2.0], [-1.0, -2.0]])
    r, m = torch.tensor([-1.0, 0.0]), torch.tensor([1.0, 0.0])
    loss, _ = ivl_loss(v, nv_t, v_t, r, m, discount=0.5, expectile=0.9)
    # pair 0: q = -1 + 0.5*V_t(s') -> (-1.25, -1.5); q_min = -1.5; A = -1.5 - (-1) < 0 -> w = 0.1
    # pair 1: success -> q = 0 for both; A = 0 - (-2) >= 0 -> w = 0.9
    l1 = 0.1 * (-1.25 + 1.0) ** 2 / 2 + 0.9 * (0 + 2.0) ** 2 / 2
    l2 = 0.1 * (-1.5 + 1.5) ** 2 / 2 + 0.9 * (0 + 2.5) ** 2 / 2
    assert float(loss) == pytest.approx(l1 + l2)


def test_ivl_target_clipping():
    v = torch.zeros(2, 1)
    loss, _ = ivl_loss(v, torch.full((2, 1), -1000.0), torch.zeros(2, 1), torch.tensor([-1.0]), torch.ones(1),
                       discount=0.9, expectile=0.5, clip_targets=True)
    assert float(loss) == pytest.approx(2 * 0.5 * value_floor(0.9) ** 2)


def test_expectile_weight():
    w = expectile_weight(torch.tensor([-1.0, 0.0, 2.0]), 0.7)
    assert torch.allclose(w, torch.tensor([0.3, 0.7, 0.7]))


def test_penalty_value_and_gradient_direction():
    v = torch.tensor([[-1.0, -2.0, -3.0, -4.0], [-1.0, -2.0, -5.0, -4.0]], requires_grad=True)
    ct = torch.tensor([False, False, True, True])
    pen, _ = conservative_penalty(v, ct, 0.5)
    assert float(pen) == pytest.approx(0.5 * ((-4.0 - 4.0) / 2 - (-1.0 - 2.0) / 2))
    pen.backward()
    assert (v.grad[:, ct] > 0).all() and (v.grad[:, ~ct] < 0).all()  # descent lowers CT values, raises HER


def test_penalty_floor_stops_the_push():
    v = torch.tensor([-5.0, -200.0, -1.0], requires_grad=True)
    pen, _ = conservative_penalty(v, torch.tensor([True, True, False]), 1.0, floor=-100.0)
    pen.backward()
    assert v.grad[1] == 0 and v.grad[0] > 0
    assert float(pen) == pytest.approx((-5.0 - 100.0) / 2 + 1.0)


def test_penalty_with_empty_sets_is_finite():
    v = torch.tensor([-1.0, -2.0])
    pen, _ = conservative_penalty(v, torch.tensor([False, False]), 1.0)
    assert float(pen) == pytest.approx(1.5)


def test_awr_by_hand():
    logp, adv = torch.tensor([-1.0, -2.0]), torch.tensor([0.1, 10.0])
    loss, _ = awr_loss(logp, adv, beta=2.0, clip=100.0)
    assert float(loss) == pytest.approx(-(torch.exp(torch.tensor(0.2)) * -1.0 + 100.0 * -2.0) / 2)


def test_value_floor_rejects_bad_gamma():
    assert value_floor(0.99) == pytest.approx(-100.0)
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="discount"):
            value_floor(bad)
