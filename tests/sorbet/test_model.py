"""convert(): the FP re-implementation equals transformers (peer), stages chain, bad models/lengths are rejected."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from icml25.sorbet import SorbetBertForSequenceClassification, convert  # noqa: E402


@pytest.mark.parametrize("act", ["gelu", "relu"])
def test_fp_equals_transformers(act, tiny):
    hf = tiny.hf(0, act=act)
    b = tiny.batch(0)
    ours = convert(hf, "fp").eval()(b["input_ids"], b["attention_mask"], b["token_type_ids"])
    ref = hf(input_ids=b["input_ids"], attention_mask=b["attention_mask"], token_type_ids=b["token_type_ids"],
             output_hidden_states=True)
    assert torch.allclose(ours.logits, ref.logits, atol=1e-5)
    m = b["attention_mask"].bool()
    for h1, h2 in zip(ours.hidden_states, ref.hidden_states):
        assert torch.allclose(h1[m], h2[m], atol=1e-4)


def test_stage_chain_keeps_latent_weights(tiny):
    hf = tiny.hf(1)
    s1 = convert(hf, "ptsoftmax_bspn")
    s2 = convert(s1, "w1a4")
    back = convert(s2, "fp", activation="relu")
    w = hf.bert.encoder.layer[0].attention.self.query.weight
    for m in (s1, s2, back):
        assert torch.equal(m.layers[0].query.weight, w)
    # LayerNorm gamma initialises the BSPN gain
    assert torch.equal(s1.layers[0].norm1.norm.weight, hf.bert.encoder.layer[0].attention.output.LayerNorm.weight)
    assert s2.options.weight_bits == 1 and s2.options.act_bits == 4
    assert isinstance(s2, SorbetBertForSequenceClassification)


def test_hf_source_is_untouched(tiny):
    hf = tiny.hf(2)
    before = {k: v.clone() for k, v in hf.state_dict().items()}
    m = convert(hf, "w1a4").train()
    b = tiny.batch(0)
    m(b["input_ids"], b["attention_mask"]).logits.sum().backward()
    assert all(torch.equal(v, hf.state_dict()[k]) for k, v in before.items())


def test_rejects_bad_inputs(tiny):
    hf = tiny.hf(0)
    m = convert(hf, "fp")
    with pytest.raises(ValueError, match="maximum sequence length"):
        m(torch.ones(1, 25, dtype=torch.long))
    with pytest.raises(ValueError, match="stage"):
        convert(hf, "w2a8")
    with pytest.raises(TypeError, match="unknown option"):
        convert(hf, "w1a4", bits=3)
    with pytest.raises(TypeError, match="BERT-family"):
        convert(torch.nn.Linear(2, 2), "w1a4")
    from transformers import GPT2Config, GPT2ForSequenceClassification

    gpt = GPT2ForSequenceClassification(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=30))
    with pytest.raises(TypeError, match="BERT"):
        convert(gpt, "fp")
    with pytest.raises(ValueError, match="token ids"):
        m(torch.tensor([[1, 99]]))


def test_real_minilm_conversion(minilm):
    tok, hf = minilm
    enc = tok(["a charming and often affecting journey .", "bleak and desperate"], padding=True,
              return_tensors="pt")
    hf.eval()
    with torch.no_grad():
        ref = hf(**enc).logits
        ours = convert(hf, "fp").eval()(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]).logits
    assert torch.allclose(ours, ref, atol=1e-5)
    assert hf.config.hidden_size == 384 and hf.config.num_attention_heads == 12
