"""rStar-Math's tiny models run on the ``meta`` device (issue 45 item 3): the policy trunk and the PPM head forward
and the pairwise loss backward stay on the network's device.

:func:`ppm_pair_loss` and :func:`masked_logits` are not run: the first checks ``isfinite(h).all()`` and the second
selects positions with a boolean mask (a data-dependent shape); a meta tensor has no values for either, so the test
uses Eq. 4's ``-log sigmoid(h+ - h-)`` directly and the trunk's hidden states.
"""

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from icml25.rstar_math.models._trunk import trunk_hidden  # noqa: E402
from icml25.rstar_math.models.process_preference_model import PPMModel  # noqa: E402
from icml25.rstar_math.models.tiny_policy import make_tiny_lm  # noqa: E402

META = torch.device("meta")


@pytest.fixture
def lm():
    return make_tiny_lm(n_layer=1, n_head=2, n_embd=16, block_size=64, seed=1)


def test_ppm_forward_pair_loss_backward_on_meta(lm):
    ppm = PPMModel.from_policy(lm).to(META)
    x, lens = ppm.encode(["1+1=", "1+1="], ["2", "3"])
    assert x.device.type == "meta" and lens.device.type == "meta"  # encode puts the ids on the model's device
    h = ppm(x, lens)
    assert h.device.type == "meta" and h.shape == (2,)
    loss = -F.logsigmoid(h[:1] - h[1:]).mean()  # Eq. 4, as ppm_pair_loss(weighting="paper")
    loss.backward()
    assert ppm.summary.weight.grad.device.type == "meta"
    assert all(p.grad.device.type == "meta" for p in ppm.parameters() if p.grad is not None)


def test_policy_trunk_and_logits_on_meta(lm):
    module = lm.module.to(META)
    x = torch.zeros(3, 7, dtype=torch.long, device=META)
    h = trunk_hidden(module, x)
    assert h.device.type == "meta" and h.shape == (3, 7, 16)
    logits = module.lm_head(h)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.zeros(21, dtype=torch.long, device=META))
    loss.backward()
    assert module.lm_head.weight.grad.device.type == "meta"


def test_train_ppm_creates_no_tensor_off_the_model_device(lm):
    """On the CPU with ``meta`` as torch's default device: a tensor built without the model's device fails."""
    from icml25.rstar_math.models.process_preference_model import pair_accuracy, train_ppm
    from icml25.rstar_math.pipeline.extraction import PairRecord

    ppm = PPMModel.from_policy(lm)
    pairs = [PairRecord(prompt="1+1=", pos="2", neg="3", pos_count=2, neg_count=1, margin=1.0),
             PairRecord(prompt="2+2=", pos="4", neg="5", pos_count=2, neg_count=1, margin=1.0)]
    torch.set_default_device(META)
    try:
        losses = train_ppm(ppm, pairs, steps=2, batch_size=2, lr=1e-3, warmup=1)
        acc = pair_accuracy(ppm, pairs)
    finally:
        torch.set_default_device("cpu")
    assert len(losses) == 2 and all(abs(v) < 10 for v in losses) and 0.0 <= acc <= 1.0
