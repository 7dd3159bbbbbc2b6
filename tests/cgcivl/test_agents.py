"""Agents: per-seed determinism, save/load, value learning on a corridor, the penalty's effect on CT values."""

import numpy as np
import pytest
import torch

from icml25.cgcivl import CGCIVL, GCIVL, AgentConfig, GCDataset


def _corridor(n_traj=20, T=20):
    """Trajectories walking right along a line, each over a different segment of [0, 40]."""
    rng = np.random.default_rng(0)
    obs, term = [], []
    for _ in range(n_traj):
        x0 = rng.uniform(0, 20)
        obs.append(np.stack([x0 + np.arange(T), np.zeros(T)], 1))
        term.append(np.r_[np.zeros(T - 1), 1])
    obs = np.concatenate(obs)
    return obs, np.tile([[1.0, 0.0]], (len(obs), 1)), np.concatenate(term)


def _train(cls, cfg, steps, seed=0):
    obs, act, term = _corridor()
    ds = GCDataset(obs, act, term, random_state=seed)
    agent = cls(2, 2, cfg, obs_mean=obs.mean(0), obs_std=obs.std(0), seed=seed)
    for _ in range(steps):
        agent.update(ds.sample(64))
    return agent


SMALL = dict(hidden=(32, 32), latent=16, lr=3e-3)


def test_same_seed_same_numbers():
    cfg = AgentConfig(value="mrn", alpha_c=0.3, **SMALL)
    a, b = _train(GCIVL, cfg, 20), _train(GCIVL, cfg, 20)
    s, g = np.zeros((5, 2)), np.ones((5, 2)) * 3
    assert np.array_equal(a.value(s, g), b.value(s, g)) and np.array_equal(a.act(s, g), b.act(s, g))
    c = _train(GCIVL, cfg, 20, seed=1)
    assert not np.array_equal(a.value(s, g), c.value(s, g))


def test_value_learns_in_trajectory_distances():
    torch.manual_seed(0)
    agent = _train(GCIVL, AgentConfig(actor="none", expectile=0.7, discount=0.9, tau=0.05, **SMALL), 400)
    s = np.array([[10.0, 0.0]] * 4)
    g = np.array([[11.0, 0.0], [13.0, 0.0], [16.0, 0.0], [20.0, 0.0]])
    v = agent.value(s, g)
    assert np.all(np.diff(v) < 0)  # farther goals have lower values
    truth = -(1 - 0.9 ** np.array([1, 3, 6, 10])) / 0.1
    assert np.abs(v - truth).max() < 1.5


def test_penalty_lowers_cross_values_relative_to_plain():
    plain = _train(GCIVL, AgentConfig(value="mrn", alpha_c=0.0, actor="none", **SMALL), 150)
    cons = _train(GCIVL, AgentConfig(value="mrn", alpha_c=1.0, actor="none", **SMALL), 150)
    obs, act, term = _corridor()
    b = GCDataset(obs, act, term, random_state=5).sample(2000)
    ct = b["is_cross"]
    gap_plain = plain.value(b["obs"][ct], b["value_goals"][ct]).mean()
    gap_cons = cons.value(b["obs"][ct], b["value_goals"][ct]).mean()
    assert gap_cons < gap_plain - 1.0


def test_hierarchical_actor_and_save_load(tmp_path):
    cfg = AgentConfig(value="mrn", alpha_c=0.3, actor="hierarchical", **SMALL)
    agent = _train(CGCIVL, cfg, 10)
    s, g = np.zeros((3, 2)), np.ones((3, 2))
    path = agent.save(tmp_path / "a.pt")
    other = CGCIVL(2, 2, cfg, seed=7).load(path)
    assert np.array_equal(agent.value(s, g), other.value(s, g)) and np.array_equal(agent.act(s, g), other.act(s, g))
    assert np.all(np.abs(agent.act(s, g)) <= 1)


def test_bad_inputs():
    with pytest.raises(ValueError, match="discount"):
        AgentConfig(discount=1.0)
    with pytest.raises(ValueError, match="value"):
        AgentConfig(value="transformer")
    agent = GCIVL(2, 2, AgentConfig(actor="none", **SMALL))
    with pytest.raises(ValueError, match="goals"):
        agent.value(np.zeros((3, 2)), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="actor"):
        agent.act(np.zeros((3, 2)), np.zeros((3, 2)))


def _old_update(agent, batch):
    """The update before issue 50, written out: the actor's advantages from separate online passes V(s', g) and
    V(s, g) (no shared goal encoding) and an Adam actor optimiser without ``foreach``."""
    loss, _ = agent.value_loss(batch)
    agent.value_opt.zero_grad(set_to_none=True)
    loss.backward()
    agent.value_opt.step()
    with torch.no_grad():
        for pt, p in zip(agent.targets.parameters(), agent.values.parameters()):
            pt.mul_(1 - agent.config.tau).add_(p, alpha=agent.config.tau)
    c = agent.config
    s, s2, ga = agent._norm(batch["obs"]), agent._norm(batch["next_obs"]), agent._norm(batch["actor_goals"])
    a = agent._t(batch["actions"])
    v = lambda x, g: agent._v(agent.values, x, g).mean(0)  # noqa: E731
    with torch.no_grad():
        if c.actor == "flat":
            adv = v(s2, ga) - v(s, ga)
        else:
            sub = agent._norm(batch["subgoals"])
            adv_h, adv_l = v(sub, ga) - v(s, ga), v(s2, sub) - v(s, sub)
    if c.actor == "flat":
        mu = agent.actors["flat"](torch.cat([s, ga], -1))
        aloss = -(torch.exp(c.beta * adv).clamp(max=c.adv_clip) * -0.5 * (a - mu).pow(2).sum(-1)).mean()
    else:
        mh = agent.actors["high"](torch.cat([s, ga], -1))
        ml = agent.actors["low"](torch.cat([s, sub], -1))
        aloss = (-(torch.exp(c.beta_high * adv_h).clamp(max=c.adv_clip) * -0.5 * (sub - mh).pow(2).sum(-1)).mean()
                 - (torch.exp(c.beta_low * adv_l).clamp(max=c.adv_clip) * -0.5 * (a - ml).pow(2).sum(-1)).mean())
    agent.actor_opt.zero_grad(set_to_none=True)
    aloss.backward()
    agent.actor_opt.step()
    return float(aloss.detach())


@pytest.mark.parametrize("value,actor", [("mlp", "flat"), ("mrn", "flat"), ("iqe", "hierarchical")])
def test_update_equals_the_old_formula(value, actor):
    """Issue 50's faster update (goal encoded once for the actor's advantages, foreach Adam) gives the old update's
    losses and parameters on fixed batches, up to float rounding."""
    obs, act, term = _corridor()
    cfg = AgentConfig(value=value, alpha_c=0.3 if value != "mlp" else 0.0, actor=actor, **SMALL)
    new = GCIVL(2, 2, cfg, obs_mean=obs.mean(0), obs_std=obs.std(0), seed=3)
    old = GCIVL(2, 2, cfg, obs_mean=obs.mean(0), obs_std=obs.std(0), seed=3)
    old.actor_opt = torch.optim.Adam(old.actors.parameters(), lr=cfg.lr)
    ds = GCDataset(obs, act, term, random_state=0)
    for _ in range(5):
        b = ds.sample(64)
        info = new.update(b)
        a_old = _old_update(old, b)
        assert info["actor_loss"] == pytest.approx(a_old, rel=1e-4, abs=1e-5)
    for p, q in zip(list(new.values.parameters()) + list(new.actors.parameters()),
                    list(old.values.parameters()) + list(old.actors.parameters())):
        assert torch.allclose(p, q, atol=1e-5, rtol=1e-4)
