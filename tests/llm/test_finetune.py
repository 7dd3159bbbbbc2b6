"""icml25.llm.finetune: LoRA fine-tuning with the loss on the answer tokens only, through train_loop.

Checked against independent computations on a tiny randomly initialised LlamaForCausalLM: the loss is the
cross-entropy over the answer tokens computed by hand from the full logits (prompt tokens and padding do not
count), only the adapter's matrices change, the loss falls on a memorisation task, and the same seed gives the same
adapter."""

from __future__ import annotations

import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("peft")

from icml25.llm import AnswerBatch, answer_batch, answer_loss, attach_lora, finetune, lora_parameters  # noqa: E402

V = 32
DATA = [([1, 5, 6], [7, 8]), ([1, 9], [10, 11, 12]), ([1, 4, 4, 4], [13]), ([1, 2], [3, 14])]


def _llama(seed: int = 0):
    cfg = transformers.LlamaConfig(vocab_size=V, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                   num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                                   eos_token_id=2, pad_token_id=0, initializer_range=0.3)
    torch.manual_seed(seed)
    return transformers.LlamaForCausalLM(cfg).eval()


def _hand_loss(net, pairs, masks=None):
    """Mean of -log p(answer token | everything before it), one unpadded sequence at a time."""
    terms = []
    for k, (p, a) in enumerate(pairs):
        ids = torch.tensor([p + a])
        with torch.no_grad():
            logp = torch.log_softmax(net(input_ids=ids).logits[0].float(), -1)
        for j, tok in enumerate(a):
            if masks is None or masks[k][j]:
                terms.append(-float(logp[len(p) + j - 1, tok]))
    return float(np.mean(terms))


def test_answer_batch_targets_are_the_next_answer_tokens():
    b = answer_batch([([1, 5], [7, 8]), ([1, 3, 4], [9, 6], [False, True])], pad_id=0, eos=2)
    assert isinstance(b, AnswerBatch) and b.input_ids.shape == (2, 6)
    assert b.input_ids.tolist() == [[1, 5, 7, 8, 2, 0], [1, 3, 4, 9, 6, 2]]
    assert b.attention_mask.tolist() == [[1, 1, 1, 1, 1, 0], [1] * 6]
    # position t predicts token t+1; prompt tokens, the masked answer token 9 and padding are -100
    assert b.targets.tolist() == [[-100, 7, 8, 2, -100, -100], [-100, -100, -100, 6, 2, -100]]
    assert b.n_targets == 5
    assert answer_batch([([1, 2, 3], [4, 5])], max_length=4).input_ids.tolist() == [[1, 2, 3, 4]]


def test_answer_loss_is_the_cross_entropy_over_answer_tokens_only():
    net = _llama()
    with torch.no_grad():
        loss = float(answer_loss(net, answer_batch(DATA, pad_id=0)))
    assert loss == pytest.approx(_hand_loss(net, DATA), rel=1e-5)
    # the prompt does not enter the loss as a target: another pad id, or masking answer tokens, gives the hand value
    with torch.no_grad():
        assert float(answer_loss(net, answer_batch(DATA, pad_id=31))) == pytest.approx(loss, rel=1e-5)
        masks = [[True, False], [False, True, True], [True], [False, True]]
        masked = float(answer_loss(net, answer_batch([(p, a, m) for (p, a), m in zip(DATA, masks)])))
    assert masked == pytest.approx(_hand_loss(net, DATA, masks), rel=1e-5) and masked != pytest.approx(loss)


def test_only_the_adapter_trains_and_the_loss_falls():
    net = _llama()
    before = {n: p.detach().clone() for n, p in net.named_parameters()}
    out = finetune(net, DATA, steps=40, lr=3e-2, batch_size=2, r=8, alpha=32, eos=2, seed=0)
    assert len(out.losses) == 40 and np.mean(out.losses[-5:]) < 0.5 * out.losses[0]
    assert out.tokens > 0 and out.adapter == "default" and not out.model.training
    trainable = [n for n, p in out.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    base = {n.replace("base_model.model.", "").replace(".base_layer", ""): p
            for n, p in out.model.named_parameters() if "lora_" not in n}
    assert set(base) == set(before) and all(torch.equal(p, before[n]) for n, p in base.items())
    assert max(float(p.abs().max()) for p in lora_parameters(out.model) if p.dim() == 2) > 0
    # the trained model now fits the data better, by the hand-computed answer loss
    assert _hand_loss(out.model.get_base_model(), DATA) < 0.5 * _hand_loss(_llama(), DATA)


def test_same_seed_same_adapter_and_another_seed_differs():
    runs = [finetune(_llama(), DATA, steps=5, lr=1e-2, batch_size=2, r=2, eos=False, seed=s, lora_dropout=0.1)
            for s in (3, 3, 4)]
    assert runs[0].losses == runs[1].losses
    a, b, c = ([p.detach() for p in lora_parameters(r.model)] for r in runs)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not all(torch.equal(x, z) for x, z in zip(a, c))
    uniform = finetune(_llama(), DATA, steps=5, lr=1e-2, batch_size=2, r=2, eos=False, seed=3, sampler="uniform")
    assert len(uniform.losses) == 5 and np.all(np.isfinite(uniform.losses))


def test_existing_adapter_of_a_peft_model_is_trained_and_the_other_is_not():
    peft_model = attach_lora(_llama(), r=2, adapter="a", seed=0)
    attach_lora(peft_model, r=2, adapter="b", seed=0)
    b_before = [p.detach().clone() for p in lora_parameters(peft_model, "b")]
    out = finetune(peft_model, DATA, steps=3, lr=1e-2, batch_size=2, adapter="a", eos=False)
    assert out.model is peft_model
    assert all(torch.equal(p, q) for p, q in zip(lora_parameters(peft_model, "b"), b_before))
    assert max(float(p.abs().max()) for n, p in peft_model.named_parameters() if "lora_B.a." in n) > 0
    assert max(float(p.abs().max()) for n, p in peft_model.named_parameters() if "lora_B.b." in n) == 0
    with pytest.raises(ValueError, match="already exists"):
        attach_lora(peft_model, adapter="a")


def test_text_pairs_through_an_hfmodel(tmp_path):
    from icml25.llm import HFModel, save_random_gpt2

    lm = HFModel(save_random_gpt2(tmp_path / "gpt2", ["a b c d"] * 4, n_layer=1, n_embd=16, n_head=2))
    base = lm.next_token_logits(["a b"])
    out = finetune(lm, [("a b", " c d"), ("b c", " d a")], steps=3, lr=1e-2, batch_size=2, r=2)
    # the HFModel's own network carries the adapter: its scores moved
    assert np.abs(lm.next_token_logits(["a b"]) - base).max() > 0 and out.tokens > 0
    p, a = lm.prompt_ids("a b"), lm.continuation_ids(" c d")
    b = answer_batch([(p, a)], pad_id=lm.pad_id, eos=lm.eos_ids[0])
    assert b.input_ids[0].tolist() == p + a + lm.eos_ids[:1]


def test_bad_input(monkeypatch):
    from icml25.core.optional import MissingExtraError

    with pytest.raises(ValueError, match="data"):
        finetune(_llama(), [], steps=1)
    with pytest.raises(ValueError, match="empty answer"):
        finetune(_llama(), [([1, 2], [])], steps=1, eos=False)
    with pytest.raises(ValueError, match="empty prompt"):
        answer_batch([([], [3])])
    with pytest.raises(ValueError, match="r must"):
        finetune(_llama(), DATA, r=0)
    with pytest.raises(ValueError, match="lr must"):
        finetune(_llama(), DATA, lr=0.0)
    with pytest.raises(ValueError, match="steps must"):
        finetune(_llama(), DATA, steps=0)
    with pytest.raises(ValueError, match="max_length"):
        finetune(_llama(), [([1, 2, 3], [4])], max_length=3, eos=False)
    with pytest.raises(TypeError, match="tokenizer"):
        finetune(_llama(), [("a", "b")], steps=1)
    with pytest.raises(TypeError, match="model must"):
        finetune(object(), DATA)
    with pytest.raises(ValueError, match="sampler"):
        finetune(_llama(), DATA, sampler="random")
    with pytest.raises(ValueError, match="answer mask"):
        answer_batch([([1], [2, 3], [True])])
    with pytest.raises(TypeError, match="batch"):
        answer_loss(_llama(), {"input_ids": None})
    net = _llama()
    monkeypatch.setitem(sys.modules, "peft", None)  # peft not installed
    with pytest.raises(MissingExtraError, match=r"pip install 'icml25\[llm\]'"):
        finetune(net, DATA, steps=1)
