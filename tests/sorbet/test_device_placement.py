"""Sorbet's tensors stay on the model's device (issue 45 item 3).

Two checks. The full-precision stage runs entirely on the ``meta`` device (forward, distillation loss, backward);
its input check reads token-id values, which a meta tensor lacks, so it is replaced by a shape-only one here. The
quantised stages and the spiking simulator have value-dependent steps (input finiteness, the quantisers' first-batch
step initialisation), so they run on the CPU with ``meta`` as torch's *default* device: any tensor the code creates
without naming the device of its inputs lands on meta and the next operation with a CPU tensor fails.
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from icml25.sorbet import model as model_mod  # noqa: E402
from icml25.sorbet.distill import kd_loss  # noqa: E402
from icml25.sorbet.model import convert  # noqa: E402

from .conftest import tiny_batch, tiny_hf  # noqa: E402

META = torch.device("meta")


@pytest.fixture
def _shape_only_check(monkeypatch):
    def check(self, input_ids, attention_mask, token_type_ids):
        return (input_ids, torch.ones_like(input_ids) if attention_mask is None else attention_mask,
                torch.zeros_like(input_ids) if token_type_ids is None else token_type_ids)

    monkeypatch.setattr(model_mod.SorbetBertForSequenceClassification, "_check", check)


def _meta_batch():
    return {k: v.to(META) for k, v in tiny_batch().items()}


@pytest.mark.usefixtures("_shape_only_check")
def test_fp_forward_and_distillation_backward_on_meta():
    teacher = convert(tiny_hf(), stage="fp").to(META)
    student = convert(tiny_hf(seed=1), stage="fp").to(META)
    b = _meta_batch()
    s = student(b["input_ids"], b["attention_mask"], b["token_type_ids"])
    with torch.no_grad():
        t = teacher(b["input_ids"], b["attention_mask"], b["token_type_ids"])
    assert s.logits.device.type == "meta" and s.logits.shape == (5, 2)
    assert len(s.hidden_states) == 3 and all(h.device.type == "meta" for h in s.hidden_states)
    loss = kd_loss(s, t, b["attention_mask"])
    assert loss.device.type == "meta"
    loss.backward()
    grads = [p.grad for p in student.parameters() if p.grad is not None]
    assert grads and all(g.device.type == "meta" for g in grads)


def test_w1a4_parameters_and_buffers_follow_the_module():
    m = convert(tiny_hf(), stage="w1a4").to(META)
    assert all(p.device.type == "meta" for p in m.parameters())
    assert all(b.device.type == "meta" for b in m.buffers())


@pytest.mark.parametrize("stage", ["ptsoftmax_bspn", "w1a4"])
def test_quantised_stage_creates_no_tensor_off_its_device(stage):
    teacher = convert(tiny_hf(), stage="fp")
    student = convert(tiny_hf(seed=1), stage=stage).train()
    b = tiny_batch()
    torch.set_default_device(META)
    try:
        for _ in range(2):  # the first batch initialises the quantisers' steps
            s = student(b["input_ids"], b["attention_mask"], b["token_type_ids"])
            with torch.no_grad():
                t = teacher(b["input_ids"], b["attention_mask"], b["token_type_ids"])
            kd_loss(s, t, b["attention_mask"]).backward()
        student.eval()
        out = student(b["input_ids"], b["attention_mask"], b["token_type_ids"])
    finally:
        torch.set_default_device("cpu")
    assert out.logits.device.type == "cpu" and torch.isfinite(out.logits).all()


def test_spiking_simulator_creates_no_tensor_off_its_device():
    w1a4 = convert(tiny_hf(), stage="w1a4").train()
    b = tiny_batch()
    w1a4(b["input_ids"], b["attention_mask"], b["token_type_ids"])  # initialise the quantisers
    snn = convert(w1a4.eval(), stage="snn", per_step=False)
    torch.set_default_device(META)
    try:
        out = snn(b["input_ids"], b["attention_mask"], b["token_type_ids"])
    finally:
        torch.set_default_device("cpu")
    assert out.logits.device.type == "cpu" and out.logits.shape == (5, 2)


def test_convert_to_snn_passes_its_options_and_rejects_others():
    w1a4 = convert(tiny_hf(), stage="w1a4").train()
    w1a4(**{k: v for k, v in tiny_batch().items() if k.endswith("ids") or k == "attention_mask"})
    assert convert(w1a4, stage="snn", per_step=False).per_step is False
    with pytest.raises(ValueError, match="T must be 2"):
        convert(w1a4, stage="snn", T=4)
    with pytest.raises(TypeError, match="for convert.stage='snn'"):
        convert(w1a4, stage="snn", attention="softmax")
