"""The rate-coded spiking simulator against the W1A4 ANN (exact equality) and the IF neuron against its counts."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from icml25.sorbet import AverageIF, SpikingSorbet, convert  # noqa: E402


def test_if_neuron_emits_exactly_q_spikes_at_most_one_per_step():
    s = AverageIF(16)(torch.arange(16.0))
    assert s.sum(0).tolist() == list(range(16))
    assert set(s.unique().tolist()) <= {0.0, 1.0}
    with pytest.raises(ValueError, match="n must"):
        AverageIF(16)(torch.tensor([16.0]))


@pytest.mark.parametrize("options", [{}, {"pooling": "mean"}, {"attention": "softmax", "norm": "layernorm",
                                                               "activation": "gelu"}])
def test_spiking_equals_ann_bit_for_bit(options, tiny):
    m = tiny.w1a4(0, **options)
    b = tiny.batch(3)
    ann = m(b["input_ids"], b["attention_mask"], b["token_type_ids"])
    snn = SpikingSorbet(m)(b["input_ids"], b["attention_mask"], b["token_type_ids"])
    assert torch.equal(ann.logits, snn.logits)
    for h1, h2 in zip(ann.hidden_states, snn.hidden_states):
        assert torch.equal(h1, h2)
    window = SpikingSorbet(m, per_step=False)(b["input_ids"], b["attention_mask"], b["token_type_ids"])
    assert torch.equal(window.logits, snn.logits)


def test_spike_statistics_are_counts(tiny):
    m = tiny.w1a4(1)
    b = tiny.batch(1)
    st = convert(m, "snn")(b["input_ids"], b["attention_mask"], b["token_type_ids"]).stats
    real = int(b["attention_mask"].sum())
    assert st["layer0.qkv_in"]["neurons"] == real * 32
    assert st["layer0.ffn_in_in"]["synaptic_ops"] == st["layer0.ffn_in_in"]["spikes"] * 64
    for v in st.values():
        assert 0 <= v["spikes"] <= 15 * v["neurons"]


def test_rejects_non_w1a4_and_uninitialised(tiny):
    with pytest.raises(ValueError, match="W1A4"):
        SpikingSorbet(convert(tiny.hf(), "ptsoftmax_bspn"))
    with pytest.raises(ValueError, match="not initialised"):
        SpikingSorbet(convert(tiny.hf(), "w1a4"))
    with pytest.raises(TypeError, match="model"):
        SpikingSorbet(tiny.hf())
