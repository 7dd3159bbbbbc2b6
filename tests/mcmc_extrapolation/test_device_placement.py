"""q_θ runs on the ``meta`` device (issue 45 item 3): ``QTheta(device=...)`` puts the network there and the training
loss and the cached decoding steps stay there.

:meth:`QTheta.fit` and :meth:`QTheta.sample` are not run whole: ``fit`` logs ``float(loss)`` and ``sample`` draws
with a ``torch.Generator`` on the model's device, neither of which a meta tensor (no data) supports.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from icml25.llm.tiny_module import KVCache  # noqa: E402
from icml25.mcmc_extrapolation.qtheta import QTheta  # noqa: E402


@pytest.fixture
def q():
    return QTheta(4, 6, n_layer=1, n_head=2, n_embd=16, device="meta")


def test_qtheta_training_loss_on_meta(q):
    assert {p.device.type for p in q.module.parameters()} == {"meta"}
    prev, nxt = np.zeros((3, 6), dtype=int), np.ones((3, 6), dtype=int)
    seq = torch.as_tensor(q._serialise(prev, nxt), device=q.device)  # as fit builds it
    inputs, targets = seq[:, :-1], seq[:, 1:].clone()
    targets[:, : q.L + 1] = -100
    logits = q.module(inputs)
    assert logits.device.type == "meta" and logits.shape == (3, 2 * q.L + 1, q.v + 2)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
    loss.backward()
    assert loss.device.type == "meta"
    assert all(p.grad.device.type == "meta" for p in q.module.parameters() if p.grad is not None)


def test_qtheta_cached_decoding_on_meta(q):
    """The prefix pass and one cached step of :meth:`QTheta.sample`, with its KV cache on the model's device."""
    prefix = torch.full((3, q.L + 2), q.BOS, dtype=torch.long, device=q.device)
    cache = KVCache(q.module.cfg, 3, 2 * q.L + 2, dtype=torch.float32, device=q.device)
    with torch.no_grad():
        logits = q.module(prefix, cache=cache, last_only=True)[:, -1]
        assert logits.device.type == "meta" and logits.shape == (3, q.v + 2)
        tok = torch.zeros(3, 1, dtype=torch.long, device=q.device)
        step = q.module(tok, cache=cache)[:, -1]
    assert step.device.type == "meta" and step.shape == (3, q.v + 2)
