"""Bad-input registry of ``icml25.sorbet`` for the fuzz contract (tests/core/test_bad_input.py)."""

from __future__ import annotations

import functools

import numpy as np

from icml25.testing import ARRAY, POSITIVE, PROB, SIZE, TEXT, BadInputCase


def _torch():
    import torch

    return torch


def _hf():
    from transformers import BertConfig, BertForSequenceClassification

    _torch().manual_seed(0)
    cfg = BertConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=16)
    return BertForSequenceClassification(cfg).eval()


def _batch():
    torch = _torch()
    ids = torch.tensor([[1, 5, 7, 2], [1, 9, 2, 0]])
    am = (ids > 0).long()
    am[:, 0] = 1
    return {"input_ids": ids, "attention_mask": am, "token_type_ids": torch.zeros_like(ids),
            "labels": torch.tensor([0, 1]), "index": torch.tensor([0, 1])}


def _w1a4():
    from icml25.sorbet import convert

    m = convert(_hf(), "w1a4", bspn_warmup=1).train()
    b = _batch()
    m(b["input_ids"], b["attention_mask"], b["token_type_ids"])
    return m.eval()


def _fp():
    from icml25.sorbet import convert

    return convert(_hf(), "fp")


@functools.cache
def _tokenizer():
    from transformers import AutoTokenizer

    from icml25.llm.pretrained import pretrained_path

    return AutoTokenizer.from_pretrained(str(pretrained_path("all-minilm-l6-v2", progress=False)),
                                         local_files_only=True)


def _dev10():
    from icml25.sorbet import load_glue_task

    return load_glue_task("sst2", "dev").subset(range(10))


def _outputs():
    from types import SimpleNamespace

    torch = _torch()
    g = torch.Generator().manual_seed(0)
    hs = tuple(torch.randn(2, 4, 8, generator=g) for _ in range(2))
    ht = tuple(torch.randn(2, 4, 8, generator=g) for _ in range(2))
    return (SimpleNamespace(logits=torch.randn(2, 2, generator=g), hidden_states=hs),
            SimpleNamespace(logits=torch.randn(2, 2, generator=g), hidden_states=ht))


def _stats():
    return {"fc": {"spikes": 10.0, "neurons": 20.0, "synaptic_ops": 40.0}}


CASES = [
    BadInputCase("PTSoftmax", lambda: {"dim": -1, "ste": True}),
    BadInputCase("pt_softmax", lambda: {"scores": _torch().randn(2, 4), "dim": -1}),
    BadInputCase("BSPN", lambda: {"num_features": 8, "groups": 2, "warmup_iters": 10, "alpha_fwd": 0.9,
                                  "alpha_bkw": 0.9, "eps": 1e-5},
                 bad={"num_features": SIZE, "groups": SIZE, "alpha_fwd": PROB, "alpha_bkw": PROB, "eps": POSITIVE}),
    BadInputCase("group_shift", lambda: {"h": _torch().randn(2, 8), "groups": 2}, bad={"groups": SIZE}),
    BadInputCase("BinaryLinear", lambda: {"in_features": 4, "out_features": 3},
                 bad={"in_features": SIZE, "out_features": SIZE}),
    BadInputCase("BinaryEmbedding", lambda: {"num_embeddings": 10, "embedding_dim": 4},
                 bad={"num_embeddings": SIZE, "embedding_dim": SIZE}),
    BadInputCase("LSQQuantizer", lambda: {"bits": 4, "signed": True, "num_features": 8, "init_step": 0.0625},
                 bad={"bits": SIZE, "num_features": SIZE, "init_step": POSITIVE}),
    BadInputCase("pow2_round", lambda: {"x": _torch().tensor([3.0, -0.3])}),
    BadInputCase("nearest_pow2", lambda: {"z": _torch().tensor([3.0, 5.0])}),
    BadInputCase("AverageIF", lambda: {"T": 16, "threshold_ratio": 0.95}, bad={"T": SIZE, "threshold_ratio": PROB}),
    BadInputCase("SpikingSorbet", lambda: {"model": _w1a4(), "T": 16}, bad={"T": SIZE}),
    BadInputCase("SorbetOptions", lambda: {"attention": "ptsoftmax", "norm": "bspn", "activation": "relu",
                                           "weight_bits": 1, "act_bits": 4, "pooling": "mean",
                                           "attn_prob_step": "unit"},
                 bad={"attention": TEXT, "norm": TEXT, "activation": TEXT, "weight_bits": SIZE, "act_bits": SIZE,
                      "pooling": TEXT, "attn_prob_step": TEXT}),
    BadInputCase("SorbetBertForSequenceClassification",
                 skip="built by convert() from a model; its sizes come from that model's config"),
    BadInputCase("convert", lambda: {"model": _hf(), "stage": "w1a4"}, bad={"stage": TEXT}),
    BadInputCase("load_teacher", lambda: {"spec": "pretrained:all-minilm-l6-v2", "num_labels": 2, "num_layers": 1},
                 bad={"spec": TEXT, "num_labels": SIZE, "num_layers": SIZE}),
    BadInputCase("fine_tune", lambda: {"model": _fp(), "train": [_batch()], "epochs": 1, "lr": 1e-3,
                                       "weight_decay": 0.01},
                 bad={"epochs": SIZE, "lr": POSITIVE}),
    BadInputCase("evaluate", lambda: {"model": _fp(), "data": [_batch()], "task": "sst2"}, bad={"task": TEXT}),
    BadInputCase("DistillTrainer", lambda: {"teacher": None, "student": None, "temperature": 1.0, "lr": 1e-3,
                                            "step_lr": 1e-4, "epochs": 1},
                 bad={"temperature": POSITIVE, "lr": POSITIVE, "step_lr": POSITIVE, "epochs": SIZE}),
    BadInputCase("multi_step", lambda: {"teacher": _fp(), "train": [_batch()], "stages": ("ptsoftmax_bspn",),
                                        "epochs": (1,), "lr": (1e-3,)}),
    BadInputCase("kd_loss", lambda: {"student": _outputs()[0], "teacher": _outputs()[1],
                                     "mask": _torch().ones(2, 4), "temperature": 1.0},
                 bad={"temperature": POSITIVE}),
    BadInputCase("GlueData", skip="a container returned by load_glue_task, not built from user numbers"),
    BadInputCase("load_glue_task", lambda: {"task": "sst2", "split": "dev"}, bad={"task": TEXT, "split": TEXT}),
    BadInputCase("encode", lambda: {"data": _dev10(), "tokenizer": _tokenizer(), "max_length": 32},
                 bad={"max_length": SIZE}),
    BadInputCase("batches", lambda: {"encoded": [([1, 5, 2], [0, 0, 0]), ([1, 2], [0, 0])],
                                     "labels": np.array([0, 1]), "batch_size": 2},
                 bad={"batch_size": SIZE}),
    BadInputCase("glue_metric", lambda: {"task": "sst2", "predictions": np.array([1, 0, 1]),
                                         "labels": np.array([1, 1, 1])},
                 bad={"task": TEXT, "predictions": ARRAY, "labels": ARRAY}),
    BadInputCase("ann_macs", lambda: {"length": 4, "hidden": 8, "ffn": 16, "layers": 2, "num_labels": 2},
                 bad={"length": SIZE, "hidden": SIZE, "ffn": SIZE, "layers": SIZE, "num_labels": SIZE}),
    BadInputCase("energy_report", lambda: {"stats": _stats(), "lengths": np.array([4.0, 6.0]), "hidden": 8,
                                           "ffn": 16, "layers": 1, "heads": 2, "T": 16, "e_mac": 4.6e-12,
                                           "e_ac": 0.9e-12, "e_add": 0.9e-12},
                 bad={"lengths": ARRAY, "hidden": SIZE, "ffn": SIZE, "layers": SIZE, "heads": SIZE, "T": SIZE,
                      "e_mac": POSITIVE, "e_ac": POSITIVE, "e_add": POSITIVE}),
    BadInputCase("estimate_energy", lambda: {"model": _w1a4(), "data": [_batch()], "T": 16, "e_mac": 4.6e-12,
                                             "e_ac": 0.9e-12, "e_add": 0.9e-12},
                 bad={"T": SIZE, "e_mac": POSITIVE, "e_ac": POSITIVE, "e_add": POSITIVE}),
]
