"""GCIVL and CGCIVL agents (spec §2): double-V implicit value learning, the conservative penalty, and AWR actors
(flat, or HIQL-style hierarchical with raw-state subgoals).

Pure PyTorch; numpy arrays at the public boundary.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from icml25.core.validation import check_array, check_int, check_option, check_positive, check_real

from .losses import awr_loss, conservative_penalty, ivl_loss, value_floor
from .quasimetric import make_value_net, mlp

__all__ = ["AgentConfig", "GCIVL", "CGCIVL"]


@dataclass(frozen=True)
class AgentConfig:
    """Hyper-parameters of a GCIVL-family agent (OGBench names where they exist)."""

    value: str = "mlp"  # value network: "mlp" (GCIVL), "mrn" or "iqe" (quasimetric V = -d, spec §2.2)
    alpha_c: float = 0.0  # weight of the conservative penalty (spec §2.4); 0 = plain GCIVL loss
    penalty_floor: bool = True  # floor CT values at -1/(1-gamma) in the penalty and clip TD targets (spec §8)
    hidden: tuple[int, ...] = (256, 256)  # MLP widths (paper scale: 512, 512, 512)
    latent: int = 64  # quasimetric embedding size
    discount: float = 0.99  # gamma
    expectile: float = 0.9  # kappa of the expectile value loss (GCIVL 0.9, HIQL 0.7)
    lr: float = 3e-4  # Adam learning rate (value and actor)
    tau: float = 0.005  # Polyak rate of the target value networks
    actor: str = "flat"  # "flat" AWR, "hierarchical" (HIQL-style) or "none" (value only)
    beta: float = 10.0  # AWR inverse temperature of the flat actor
    beta_high: float = 3.0  # AWR inverse temperature of the high-level actor
    beta_low: float = 3.0  # AWR inverse temperature of the low-level actor
    adv_clip: float = 100.0  # maximum AWR weight
    device: str = "cpu"  # torch device of the networks and of every batch tensor ("cuda" at paper scale)

    def __post_init__(self) -> None:
        check_option(self.value, "value", ("mlp", "mrn", "iqe"))
        check_option(self.actor, "actor", ("flat", "hierarchical", "none"))
        check_positive(self.alpha_c, "alpha_c", allow_zero=True)
        if not isinstance(self.hidden, tuple) or not self.hidden:
            raise TypeError(f"hidden must be a non-empty tuple of ints, got {self.hidden!r}")
        for h in self.hidden:
            check_int(h, "hidden", low=1)
        check_int(self.latent, "latent", low=2)
        check_real(self.discount, "discount", low=0.0, high=1.0, low_open=True, high_open=True)
        check_real(self.expectile, "expectile", low=0.0, high=1.0, low_open=True, high_open=True)
        for name in ("lr", "adv_clip"):
            check_positive(getattr(self, name), name)
        if not isinstance(self.device, str) or not (self.device in ("cpu", "cuda") or self.device.startswith("cuda:")):
            raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:<index>', got {self.device!r}")
        check_real(self.tau, "tau", low=0.0, high=1.0, low_open=True)
        for name in ("beta", "beta_high", "beta_low"):
            check_positive(getattr(self, name), name, allow_zero=True)


def _gauss_logp(mean: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Log-density (up to a constant) of a unit-std Gaussian (OGBench's constant-std actor)."""
    return -0.5 * (x - mean).pow(2).sum(-1)


class GCIVL:
    """Goal-conditioned implicit V-learning (OGBench GCIVL) with the options that make it CGCIVL.

    Value: two networks ``V_1, V_2`` and their Polyak targets trained with :func:`ivl_loss` (spec §2.3), plus
    ``alpha_c *`` :func:`conservative_penalty` when ``alpha_c > 0`` (spec §2.4). Actor: AWR (spec §2.5).

    Parameters
    ----------
    obs_dim, action_dim : int
    config : AgentConfig, optional
        Defaults to plain GCIVL (MLP value, no penalty, flat actor).
    obs_mean, obs_std : array (obs_dim,), optional
        Normalisation of observations and goals (e.g. the dataset statistics).
    seed : int
        Seed of the network initialisation.

    Examples
    --------
    >>> agent = GCIVL(2, 2, seed=0)
    >>> batch = {"obs": np.zeros((4, 2)), "next_obs": np.ones((4, 2)), "actions": np.zeros((4, 2)),
    ...          "value_goals": np.ones((4, 2)), "actor_goals": np.ones((4, 2)), "subgoals": np.ones((4, 2)),
    ...          "rewards": -np.ones(4), "masks": np.ones(4), "is_cross": np.zeros(4, bool)}
    >>> sorted(agent.update(batch))[:2]
    ['actor_loss', 'adv_mean']
    >>> agent.value(np.zeros((3, 2)), np.ones((3, 2))).shape, agent.act(np.zeros((3, 2)), np.ones((3, 2))).shape
    ((3,), (3, 2))
    """

    default_config = AgentConfig()

    def __init__(self, obs_dim: int, action_dim: int, config: AgentConfig | None = None, *,
                 obs_mean: Any = None, obs_std: Any = None, seed: int = 0) -> None:
        self.obs_dim = check_int(obs_dim, "obs_dim", low=1)
        self.action_dim = check_int(action_dim, "action_dim", low=1)
        self.config = self.default_config if config is None else config
        if not isinstance(self.config, AgentConfig):
            raise TypeError(f"config must be an AgentConfig, got {type(self.config).__name__}")
        self.seed = check_int(seed, "seed", low=0)
        mean = np.zeros(obs_dim) if obs_mean is None else check_array(obs_mean, "obs_mean", shape=(obs_dim,))
        std = np.ones(obs_dim) if obs_std is None else check_array(obs_std, "obs_std", shape=(obs_dim,), low=0.0)
        c = self.config
        if c.device != "cpu" and not torch.cuda.is_available():
            raise RuntimeError(f"config.device={c.device!r} but torch sees no CUDA GPU; use device='cpu'")
        self.device = torch.device(c.device)
        self.obs_mean = torch.as_tensor(mean, dtype=torch.float32, device=self.device)
        self.obs_std = torch.as_tensor(np.maximum(std, 1e-6), dtype=torch.float32, device=self.device)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            self.values = nn.ModuleList([make_value_net(obs_dim, c.hidden, c.value, c.latent) for _ in range(2)])
            self.targets = copy.deepcopy(self.values).requires_grad_(False)
            self.actors = nn.ModuleDict()
            if c.actor == "flat":
                self.actors["flat"] = mlp(2 * obs_dim, c.hidden, action_dim)
            elif c.actor == "hierarchical":
                self.actors["high"] = mlp(2 * obs_dim, c.hidden, obs_dim)
                self.actors["low"] = mlp(2 * obs_dim, c.hidden, action_dim)
        if c.device != "cpu":
            self.values.to(self.device)
            self.targets.to(self.device)
            self.actors.to(self.device)
        # foreach: one fused pass over the parameter list (torch's default on CUDA; the same values on the CPU)
        self.value_opt = torch.optim.Adam(self.values.parameters(), lr=c.lr, foreach=True)
        self.actor_opt = torch.optim.Adam(self.actors.parameters(), lr=c.lr, foreach=True) if len(self.actors) else None
        self.steps = 0

    # ---- helpers -------------------------------------------------------------------------------------------
    def _norm(self, x: Any) -> torch.Tensor:
        return (self._t(x) - self.obs_mean) / self.obs_std

    def _t(self, x: Any, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """A numpy batch array as a tensor on the agent's device."""
        return torch.as_tensor(np.asarray(x), dtype=dtype, device=self.device)

    def _v(self, nets: nn.ModuleList, s: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        return torch.stack([net(s, g) for net in nets])  # (2, B)

    def _v_pair(self, a: torch.Tensor, b: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Ensemble means ``(V(a, g), V(b, g))`` of the online networks, the goal encoded once per network
        (``shared_goal``: the same numbers as two separate calls; the actor's advantages need both)."""
        pairs = [net.shared_goal(a, b, g) for net in self.values]
        return torch.stack([p[0] for p in pairs]).mean(0), torch.stack([p[1] for p in pairs]).mean(0)

    # ---- training --------------------------------------------------------------------------------------------
    def value_loss(self, batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, float]]:
        """The value objective of spec §2.3-2.4 on one batch (see :meth:`update` for the batch keys)."""
        c = self.config
        s, s2, g = self._norm(batch["obs"]), self._norm(batch["next_obs"]), self._norm(batch["value_goals"])
        r = self._t(batch["rewards"])
        m = self._t(batch["masks"])
        v = self._v(self.values, s, g)
        with torch.no_grad():
            pairs = [net.shared_goal(s, s2, g) for net in self.targets]  # (V(s, g), V(s', g)) per target network
        v_t, nv_t = torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])
        floor = c.penalty_floor and c.alpha_c > 0
        loss, info = ivl_loss(v, nv_t, v_t, r, m, discount=c.discount, expectile=c.expectile, clip_targets=floor)
        if c.alpha_c > 0:
            ct = self._t(np.asarray(batch["is_cross"], dtype=bool), torch.bool)
            pen, pinfo = conservative_penalty(v, ct, c.alpha_c, floor=value_floor(c.discount) if floor else None)
            loss = loss + pen
            info.update(pinfo)
        return loss, info

    def actor_loss(self, batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, float]]:
        """AWR loss of the flat or hierarchical actor (spec §2.5); V is evaluated without gradient."""
        c = self.config
        s, s2 = self._norm(batch["obs"]), self._norm(batch["next_obs"])
        ga = self._norm(batch["actor_goals"])
        a = self._t(batch["actions"])
        if c.actor == "flat":
            with torch.no_grad():
                nv, v = self._v_pair(s2, s, ga)
                adv = nv - v
            mu = self.actors["flat"](torch.cat([s, ga], -1))
            return awr_loss(_gauss_logp(mu, a), adv, c.beta, c.adv_clip)
        sub = self._norm(batch["subgoals"])
        with torch.no_grad():
            vh, v = self._v_pair(sub, s, ga)
            vl, vs = self._v_pair(s2, s, sub)
            adv_h, adv_l = vh - v, vl - vs
        lh, ih = awr_loss(_gauss_logp(self.actors["high"](torch.cat([s, ga], -1)), sub), adv_h, c.beta_high, c.adv_clip)
        ll, il = awr_loss(_gauss_logp(self.actors["low"](torch.cat([s, sub], -1)), a), adv_l, c.beta_low, c.adv_clip)
        return lh + ll, {"actor_loss": float((lh + ll).detach()), "high_loss": ih["actor_loss"], "low_loss": il["actor_loss"]}

    def update(self, batch: dict[str, Any]) -> dict[str, float]:
        """One gradient step: value (Adam) -> Polyak target update -> actor (Adam).

        ``batch`` (numpy, as :meth:`GCDataset.sample` returns): ``obs``, ``next_obs``, ``value_goals``,
        ``actor_goals``, ``subgoals`` (B, obs_dim); ``actions`` (B, action_dim); ``rewards``, ``masks``,
        ``is_cross`` (B,).
        """
        loss, info = self.value_loss(batch)
        self.value_opt.zero_grad(set_to_none=True)
        loss.backward()
        self.value_opt.step()
        with torch.no_grad():  # Polyak: pt <- (1 - tau) pt + tau p, over the whole parameter list at once
            tau = self.config.tau
            targets = list(self.targets.parameters())
            torch._foreach_mul_(targets, 1 - tau)
            torch._foreach_add_(targets, list(self.values.parameters()), alpha=tau)
        if self.actor_opt is not None:
            aloss, ainfo = self.actor_loss(batch)
            self.actor_opt.zero_grad(set_to_none=True)
            aloss.backward()
            self.actor_opt.step()
            info.update(ainfo)
        self.steps += 1
        return info

    # ---- inference -------------------------------------------------------------------------------------------
    def value(self, obs: Any, goals: Any) -> np.ndarray:
        """Ensemble-mean ``V(s, g)`` for raw observations/goals of shape (B, obs_dim); returns (B,)."""
        obs = check_array(obs, "obs", ndim=2, shape=(None, self.obs_dim))
        goals = check_array(goals, "goals", ndim=2, shape=(len(obs), self.obs_dim))
        with torch.no_grad():
            return self._v(self.values, self._norm(obs), self._norm(goals)).mean(0).cpu().numpy().astype(float)

    def act(self, obs: Any, goals: Any) -> np.ndarray:
        """Deterministic action (the Gaussian mean, clipped to [-1, 1]) for (B, obs_dim) obs/goals -> (B, action_dim).

        Hierarchical: ``a = pi_low(s, mean of pi_high(s, g))``.
        """
        if not len(self.actors):
            raise ValueError("act needs an actor; this agent was built with config.actor='none'")
        obs = check_array(obs, "obs", ndim=2, shape=(None, self.obs_dim))
        goals = check_array(goals, "goals", ndim=2, shape=(len(obs), self.obs_dim))
        s, g = self._norm(obs), self._norm(goals)
        with torch.no_grad():
            if "flat" in self.actors:
                a = self.actors["flat"](torch.cat([s, g], -1))
            else:
                sub = self.actors["high"](torch.cat([s, g], -1))
                a = self.actors["low"](torch.cat([s, sub], -1))
        return a.clamp(-1.0, 1.0).cpu().numpy().astype(float)

    # ---- persistence -----------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"config": asdict(self.config), "values": self.values.state_dict(),
                "targets": self.targets.state_dict(), "actors": self.actors.state_dict(),
                "obs_mean": self.obs_mean, "obs_std": self.obs_std, "steps": self.steps}

    def save(self, path: str | Path) -> Path:
        """Save networks, normalisation and config with ``torch.save``."""
        path = Path(path)
        torch.save(self.state_dict(), path)
        return path

    def load(self, path: str | Path) -> GCIVL:
        """Load what :meth:`save` wrote (same architecture); returns ``self``."""
        st = torch.load(Path(path), weights_only=False, map_location=self.device)
        self.values.load_state_dict(st["values"])
        self.targets.load_state_dict(st["targets"])
        self.actors.load_state_dict(st["actors"])
        self.obs_mean, self.obs_std, self.steps = st["obs_mean"], st["obs_std"], st["steps"]
        return self

    def with_config(self, **changes: Any) -> AgentConfig:
        """A copy of this agent's config with ``changes`` (convenience for ablations)."""
        return replace(self.config, **changes)


class CGCIVL(GCIVL):
    """Conservative GCIVL (Ke et al., ICML 2025): quasimetric value + conservative cross-trajectory penalty.

    Default config: MRN quasimetric value head, ``alpha_c = 0.3`` with the ``-1/(1-gamma)`` floor (spec §2.4, §8).
    ``alpha_c = 0`` reduces it to "GCIVL + quasimetric" (the ablation).

    Examples
    --------
    >>> agent = CGCIVL(2, 2, seed=0)
    >>> agent.config.value, agent.config.alpha_c
    ('mrn', 0.3)
    >>> float(agent.value(np.zeros((1, 2)), np.zeros((1, 2)))[0])  # V(s, s) = -d(s, s) = 0
    0.0
    """

    default_config = AgentConfig(value="mrn", alpha_c=0.3)
