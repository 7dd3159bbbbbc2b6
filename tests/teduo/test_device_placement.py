"""TEDUO's torch policies run on the ``meta`` device (issue 45 item 3), with no op mixing devices.

Meta kernels accept some CPU operands (an embedding lookup with CPU indices), so every op is also checked by
:class:`SameDevice`, which fails on any op that gets tensors on two devices (CPU 0-dim scalars allowed): that is how
CUDA would fail. ``fit``/``act_batch`` are not run: they log ``float(loss)`` and return ``.tolist()`` (values).
"""

import pytest

torch = pytest.importorskip("torch")

from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402

from icml25.teduo.babyai import SymbolicState  # noqa: E402
from icml25.teduo.policies import MLPPolicy, TinyLMPolicy  # noqa: E402

META = torch.device("meta")


class SameDevice(TorchDispatchMode):
    """Raise on any op whose tensor operands are on more than one device (0-dim CPU scalars excepted)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        flat, _ = tree_flatten((args, kwargs))
        devs = {t.device.type for t in flat
                if isinstance(t, torch.Tensor) and not (t.device.type == "cpu" and t.dim() == 0)}
        if len(devs) > 1:
            raise RuntimeError(f"{func} mixes devices {sorted(devs)}")
        return func(*args, **kwargs)


STATE = SymbolicState(1, 1, 0, None, (("red", "key", 2, 1),))
GOALS = ["pick up the red key", "go to the red key"]


@pytest.mark.parametrize("make", [lambda: TinyLMPolicy(d_model=16, n_heads=2, n_layers=1),
                                  lambda: MLPPolicy(hidden=8)], ids=["tinylm", "mlp"])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_policy_net_forward_loss_backward_on_meta(make, mode):
    """TinyLM's position ids are created on the input's device (they were a CPU ``arange``)."""
    policy = make()
    net = policy._build().to(META)
    getattr(net, mode)()
    x = policy._encode([STATE, STATE], GOALS).to(META)
    with SameDevice():
        logits = net(x)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(2, dtype=torch.long, device=META))
        if mode == "train":
            loss.backward()
    assert logits.device.type == "meta" and logits.shape == (2, 4)
    if mode == "train":
        assert all(p.grad.device.type == "meta" for p in net.parameters() if p.grad is not None)
