"""Tiny random Hugging Face models and data files for the text-task tests, built offline in a folder.

A word-level tokenizer (``tokenizers`` WordLevel in ``PreTrainedTokenizerFast``) over a small vocabulary, BERT
masked-LM / classifiers / encoder of width 32 and one layer, and a random GPT-2 from
:func:`icml25.llm.save_random_gpt2`; a Yelp-format CSV pair and an authorship CSV.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

WORDS = ["the", "food", "was", "good", "bad", "great", "awful", "service", "slow", "fast", "and", "very", "ok",
         "place", "i", "liked", "hated", "it"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def word_tokenizer(words: list[str] | None = None):  # type: ignore[no-untyped-def]
    """A BERT-style word-level ``PreTrainedTokenizerFast`` over ``words`` (specials first: ids 0-4)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(SPECIALS + list(words or WORDS))}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
                                                      special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]")


def _bert_config(tok, **kw):  # type: ignore[no-untyped-def]
    from transformers import BertConfig

    return BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=64, max_position_embeddings=64, pad_token_id=tok.pad_token_id, **kw)


def save_mlm(folder: Path, words: list[str] | None = None, seed: int = 0, init_range: float = 0.5) -> Path:
    """A random ``BertForMaskedLM`` with the word tokenizer."""
    import torch
    from transformers import BertForMaskedLM

    tok = word_tokenizer(words)
    torch.manual_seed(seed)
    BertForMaskedLM(_bert_config(tok, initializer_range=init_range)).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def save_classifier(folder: Path, labels: list[str], seed: int = 0) -> Path:
    """A random ``BertForSequenceClassification`` with classes ``labels``."""
    import torch
    from transformers import BertForSequenceClassification

    tok = word_tokenizer()
    torch.manual_seed(seed)
    cfg = _bert_config(tok, num_labels=len(labels), id2label=dict(enumerate(labels)),
                       label2id={lab: i for i, lab in enumerate(labels)}, initializer_range=0.5)
    BertForSequenceClassification(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def save_encoder(folder: Path, seed: int = 0) -> Path:
    """A random ``BertModel`` (sentence encoder)."""
    import torch
    from transformers import BertModel

    tok = word_tokenizer()
    torch.manual_seed(seed)
    BertModel(_bert_config(tok)).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def sentences(n: int, seed: int = 0) -> list[str]:
    import numpy as np

    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS[:-1], size=rng.integers(4, 8))) for _ in range(n)]


def build_all(root: Path) -> dict[str, str]:
    """Every model and data file of the text tasks under ``root``; returns Config field -> value."""
    from icml25.llm import save_random_gpt2

    root.mkdir(parents=True, exist_ok=True)
    save_mlm(root / "mlm", init_range=0.1)
    save_classifier(root / "guide", ["2", "3", "4"], seed=1)
    save_classifier(root / "oracle", ["1", "2", "3", "4", "5"], seed=2)
    save_classifier(root / "author_guide", ["alice", "bob", "carol"], seed=3)
    save_classifier(root / "author_oracle", ["alice", "bob", "carol"], seed=4)
    save_encoder(root / "encoder", seed=5)
    save_random_gpt2(root / "gpt2", sentences(60) + ["<score 0> <score 7>"], n_layer=1, n_embd=32, n_head=2,
                     n_positions=256, vocab_size=200, seed=0, initializer_range=0.3)
    yelp = root / "yelp"
    yelp.mkdir(exist_ok=True)
    for split, seed in (("train", 10), ("test", 11)):
        with open(yelp / f"{split}.csv", "w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            for i, s in enumerate(sentences(40, seed)):
                w.writerow([str(1 + i % 5), s.replace(" very ", " very\\n")])
    with open(root / "authors.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "author"])
        for i, s in enumerate(sentences(40, 12)):
            w.writerow([s, ["alice", "bob", "carol"][i % 3]])
    return {"mlm_model": f"hf:{root / 'mlm'}", "sentiment_guide_model": f"hf:{root / 'guide'}",
            "sentiment_oracle_model": f"hf:{root / 'oracle'}", "author_guide_model": f"hf:{root / 'author_guide'}",
            "author_oracle_model": f"hf:{root / 'author_oracle'}", "similarity_model": f"hf:{root / 'encoder'}",
            "qtheta_model": f"hf:{root / 'gpt2'}", "yelp_path": str(yelp), "authorship_path": str(root / "authors.csv")}


@pytest.fixture(scope="session")
def tiny_text(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The tiny models and data of :func:`build_all`, built once per session (about 2 s)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    return build_all(tmp_path_factory.mktemp("tiny_text"))
