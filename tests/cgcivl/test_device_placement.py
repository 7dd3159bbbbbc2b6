"""The CGCIVL value and actor networks run on the ``meta`` device (issue 45 item 3).

A tensor created on the CPU inside a forward pass would fail here with "not on the expected device meta".
The losses (:func:`ivl_loss`, ...) are not run: their info dicts call ``float()``, which needs data. The IQE head is
not run either: :func:`interval_union_length` checks ``(hi < lo).any()`` on the values, which a meta tensor lacks.
"""

import pytest

torch = pytest.importorskip("torch")

from icml25.cgcivl.agents import GCIVL, AgentConfig  # noqa: E402
from icml25.cgcivl.quasimetric import MLPValue, QuasimetricValue, mlp  # noqa: E402

META = torch.device("meta")


@pytest.mark.parametrize("make", [lambda: QuasimetricValue(4, (16,), head="mrn", latent=16),
                                  lambda: MLPValue(4, (16,))], ids=["mrn", "mlp"])
def test_value_net_forward_backward_on_meta(make):
    with META:
        net = make()
        s, g = torch.randn(5, 4), torch.randn(5, 4)
    v = net(s, g)
    assert v.device.type == "meta" and v.shape == (5,)
    (v - 1.0).pow(2).mean().backward()
    assert all(p.grad is not None and p.grad.device.type == "meta" for p in net.parameters())


def test_agent_networks_moved_to_meta():
    """A CPU-built hierarchical agent moved to meta: normalisation, both values and both actors stay on meta."""
    agent = GCIVL(3, 2, AgentConfig(hidden=(8,), value="mrn", latent=8, actor="hierarchical"), seed=0)
    for mod in (agent.values, agent.targets, agent.actors):
        mod.to(META)
    agent.device = META
    agent.obs_mean, agent.obs_std = agent.obs_mean.to(META), agent.obs_std.to(META)
    obs = torch.zeros(4, 3).numpy()
    s = agent._norm(obs)
    assert s.device.type == "meta" and s.shape == (4, 3)
    v = agent._v(agent.values, s, s)
    assert v.device.type == "meta" and v.shape == (2, 4)
    sub = agent.actors["high"](torch.cat([s, s], -1))
    a = agent.actors["low"](torch.cat([s, sub], -1))
    assert a.device.type == "meta" and a.shape == (4, 2)
    a.sum().backward()
    assert agent.actors["high"][0].weight.grad.device.type == "meta"


def test_mlp_on_meta():
    with META:
        net = mlp(6, (8, 8), 3)
        y = net(torch.randn(2, 6))
    assert y.device.type == "meta" and y.shape == (2, 3)
