"""The task-superposition TinyGPT runs on the ``meta`` device (issue 45 item 3): the weighted ICL training loss of
:func:`train_icl_model` and its backward, and the padded scoring batch, stay on the network's device.

The scorers and :func:`layer_hidden_states` themselves end in ``.cpu().numpy()`` (values a meta tensor lacks), and
``Config.device`` only places ``hf:``/pretrained models, so the test stops at the network's outputs.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from icml25.llm.tiny import TinyGPT  # noqa: E402
from icml25.llm.tiny_module import TinyGPTConfig  # noqa: E402
from icml25.task_superposition import synthetic_family  # noqa: E402
from icml25.task_superposition.training import _tokenizer, icl_training_batch  # noqa: E402

META = torch.device("meta")


@pytest.fixture
def family_and_model():
    fam = synthetic_family("F-AB")
    model = TinyGPT(TinyGPTConfig(n_layer=1, n_head=2, n_embd=16, block_size=128), _tokenizer(fam), seed=0)
    return fam, model.to(META)


def test_icl_training_loss_backward_on_meta(family_and_model):
    fam, model = family_and_model
    tok = model.tokenizer
    x, y, w = (torch.from_numpy(a).to(model.device)
               for a in icl_training_batch(fam, tok, np.random.default_rng(0), 4, 1, 3))
    logits = model.module(x)
    assert logits.device.type == "meta" and logits.shape == (*x.shape, tok.vocab_size)
    ce = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none")
    loss = (ce * w.reshape(-1)).sum() / w.sum()  # as train_icl_model
    loss.backward()
    assert loss.device.type == "meta"
    assert all(p.grad.device.type == "meta" for p in model.module.parameters() if p.grad is not None)


def test_scoring_batch_on_meta(family_and_model):
    """The right-padded batch of the tiny scorer goes to the network's device, and the last-token rows are read
    there (as ``_TinyTokenLM.next_logprobs`` does before ``.cpu()``)."""
    _, model = family_and_model
    seqs = [model._ids("12="), model._ids("3=")]
    x = model._right_padded(seqs)
    assert x.device.type == "meta"
    with torch.inference_mode():
        logits = model.module(x).float()
        last = torch.tensor([len(s) - 1 for s in seqs], device=x.device)
        lp = torch.log_softmax(logits[torch.arange(len(seqs), device=x.device), last], -1)
    assert lp.device.type == "meta" and lp.shape == (2, model.tokenizer.vocab_size)
