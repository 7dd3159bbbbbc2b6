"""Losses of GCIVL and CGCIVL (spec §2.3-2.5), as pure functions of tensors.

Shapes: ``E`` ensemble members (2), ``B`` batch. Values are ``V <= 0`` with ``-V`` ~ discounted steps to goal.
"""

from __future__ import annotations

import torch

from icml25.core.validation import check_positive, check_real, check_tensor

__all__ = ["expectile_weight", "ivl_loss", "conservative_penalty", "awr_loss", "value_floor"]


def value_floor(discount: float) -> float:
    """``-1 / (1 - discount)``: the lowest value a discounted -1-per-step return can take (spec §8)."""
    discount = check_real(discount, "discount", low=0.0, high=1.0, low_open=True, high_open=True)
    return -1.0 / (1.0 - discount)


def expectile_weight(adv: torch.Tensor, expectile: float) -> torch.Tensor:
    """Asymmetric weight ``|kappa - 1[adv < 0]|`` for ``adv`` of shape (B,): ``kappa`` if ``adv >= 0`` else ``1 - kappa``
    (spec §2.3)."""
    expectile = check_real(expectile, "expectile", low=0.0, high=1.0, low_open=True, high_open=True)
    check_tensor(adv, "adv", ndim=1)
    return torch.where(adv >= 0, torch.full_like(adv, expectile), torch.full_like(adv, 1.0 - expectile))


def ivl_loss(v: torch.Tensor, next_v_target: torch.Tensor, v_target: torch.Tensor, rewards: torch.Tensor,
             masks: torch.Tensor, *, discount: float, expectile: float, clip_targets: bool = False
             ) -> tuple[torch.Tensor, dict[str, float]]:
    """Implicit V-learning loss of GCIVL (spec §2.3).

    ``q_j = r + gamma m V_bar_j(s', g)``, ``A = r + gamma m min_j V_bar_j(s', g) - mean_j V_bar_j(s, g)``,
    ``L = sum_j mean_B w(A) (q_j - V_j(s, g))^2`` with the expectile weight ``w`` of the *target* advantage.

    Parameters
    ----------
    v : (E, B) online values ``V_j(s, g)`` (carry gradients).
    next_v_target, v_target : (E, B) target-network values at ``(s', g)`` and ``(s, g)`` (no gradient).
    rewards, masks : (B,)
    discount, expectile : float
    clip_targets : bool
        Clip ``q`` to ``[-1/(1 - discount), 0]`` (part of the floored CGCIVL of spec §8).

    Returns
    -------
    (loss scalar, info dict)
    """
    discount = check_real(discount, "discount", low=0.0, high=1.0, low_open=True, high_open=True)
    check_real(expectile, "expectile", low=0.0, high=1.0, low_open=True, high_open=True)
    check_tensor(v, "v", ndim=2)
    check_tensor(next_v_target, "next_v_target", shape=tuple(v.shape))
    check_tensor(v_target, "v_target", shape=tuple(v.shape))
    check_tensor(rewards, "rewards", shape=(v.shape[1],))
    check_tensor(masks, "masks", shape=(v.shape[1],))
    next_v_target, v_target = next_v_target.detach(), v_target.detach()
    q = rewards + discount * masks * next_v_target                          # (E, B)
    q_min = rewards + discount * masks * next_v_target.min(0).values        # (B,)
    adv = q_min - v_target.mean(0)
    if clip_targets:
        q = q.clamp(value_floor(discount), 0.0)
    w = expectile_weight(adv, expectile)
    loss = (w * (q - v).pow(2)).mean(-1).sum()
    return loss, {"value_loss": float(loss.detach()), "v_mean": float(v.detach().mean()), "adv_mean": float(adv.mean())}


def conservative_penalty(v: torch.Tensor, is_cross: torch.Tensor, alpha: float, *, floor: float | None = None
                         ) -> tuple[torch.Tensor, dict[str, float]]:
    """CGCIVL's conservative term [R] (spec §2.4): ``alpha (mean_CT max(V_bar, floor) - mean_HER V_bar)``.

    ``V_bar`` is the ensemble mean. Minimising it lowers values of cross-trajectory (random-goal) pairs and keeps
    in-trajectory pairs up; with ``floor = -1/(1-gamma)`` a CT value already at the floor gets no gradient.
    An empty CT or HER set contributes 0.

    Parameters
    ----------
    v : (E, B) or (B,) online values.
    is_cross : (B,) bool, True for cross-trajectory pairs.
    alpha : float >= 0
    floor : float, optional
    """
    alpha = check_positive(alpha, "alpha", allow_zero=True)
    check_tensor(v, "v")
    if v.ndim not in (1, 2):
        raise ValueError(f"v must have shape (E, B) or (B,), got {tuple(v.shape)}")
    vbar = v.mean(0) if v.ndim == 2 else v
    check_tensor(is_cross, "is_cross", shape=tuple(vbar.shape), dtype="bool")
    her = ~is_cross
    ct_v = vbar[is_cross]
    if floor is not None:
        ct_v = ct_v.clamp(min=check_real(floor, "floor"))
    zero = vbar.sum() * 0.0
    ct = ct_v.mean() if is_cross.any() else zero
    hr = vbar[her].mean() if her.any() else zero
    pen = alpha * (ct - hr)
    return pen, {"penalty": float(pen.detach()), "v_ct": float(vbar.detach()[is_cross].mean()) if is_cross.any() else 0.0,
                 "v_her": float(hr.detach())}


def awr_loss(log_prob: torch.Tensor, adv: torch.Tensor, beta: float, clip: float = 100.0
             ) -> tuple[torch.Tensor, dict[str, float]]:
    """Advantage-weighted regression: ``-mean(min(exp(beta * A), clip) * log pi(a | s, g))`` (spec §2.5).

    ``adv`` is detached: the actor's gradient never flows into V.
    """
    beta = check_positive(beta, "beta", allow_zero=True)
    clip = check_positive(clip, "clip")
    check_tensor(log_prob, "log_prob", ndim=1)
    check_tensor(adv, "adv", shape=tuple(log_prob.shape))
    w = torch.exp(beta * adv.detach()).clamp(max=clip)
    loss = -(w * log_prob).mean()
    return loss, {"actor_loss": float(loss.detach()), "adv_weight_mean": float(w.mean())}
