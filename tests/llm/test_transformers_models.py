"""``icml25.llm.load_transformers``: one loader of local transformers checkpoints for every task (issue 43).

Tiny random BERT / GPT-2 checkpoints (width 32, one layer) are written offline to ``tmp_path``, as the
mcmc_extrapolation and sorbet tests do.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

WORDS = ["the", "food", "was", "good", "bad", "service", "slow", "fast"]


def _tok():  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS)}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2),
                                                                                                ("[SEP]", 3)])
    return PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]")


def _save(folder: Path, cls_name: str, seed: int = 0, **cfg_kw) -> Path:  # type: ignore[no-untyped-def]
    import torch
    import transformers

    tok = _tok()
    cfg = transformers.BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=64, max_position_embeddings=32, pad_token_id=0, **cfg_kw)
    torch.manual_seed(seed)
    getattr(transformers, cls_name)(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:  # type: ignore[no-untyped-def]
    from icml25.llm import save_random_gpt2

    root = tmp_path_factory.mktemp("tf_models")
    return {"mlm": _save(root / "mlm", "BertForMaskedLM"),
            "cls": _save(root / "cls", "BertForSequenceClassification", num_labels=3,
                         id2label={0: "neg", 1: "mid", 2: "pos"}, label2id={"neg": 0, "mid": 1, "pos": 2}),
            "enc": _save(root / "enc", "BertModel", seed=1),
            "gpt2": save_random_gpt2(root / "gpt2", ["the food was good", "service was slow"], n_layer=1)}


def _same_weights(a, b) -> bool:  # type: ignore[no-untyped-def]
    import torch

    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("task, key, cls_name", [("masked-lm", "mlm", "BertForMaskedLM"),
                                                 ("sequence-classification", "cls", "BertForSequenceClassification"),
                                                 ("encoder", "enc", "BertModel"),
                                                 ("causal-lm", "gpt2", "GPT2LMHeadModel")])
def test_each_task_loads_its_class_with_the_saved_weights(folders, task, key, cls_name) -> None:
    import transformers

    from icml25.llm import load_transformers

    for spec in (f"hf:{folders[key]}", str(folders[key]), folders[key]):
        tok, model = load_transformers(spec, task)
        assert type(model).__name__ == cls_name
        assert not model.training
        assert len(tok("the food")["input_ids"]) >= 2
    ref = getattr(transformers, cls_name).from_pretrained(str(folders[key]))
    assert _same_weights(model, ref)


def test_config_overrides_seed_and_quiet(folders) -> None:
    import torch
    from transformers import BertForSequenceClassification
    from transformers.utils import logging as hf_logging

    from icml25.llm import load_transformers

    _, m = load_transformers(f"hf:{folders['cls']}", "sequence-classification")
    assert m.config.num_labels == 3 and m.config.id2label[2] == "pos"
    # a fresh 4-class head on the encoder, one layer kept: seeded right before the model is built
    before = hf_logging.get_verbosity()
    _, a = load_transformers(folders["enc"], "sequence-classification", seed=7, quiet=True, num_labels=4,
                             num_hidden_layers=1)
    assert hf_logging.get_verbosity() == before
    assert a.config.num_labels == 4 and len(a.bert.encoder.layer) == 1
    _, b = load_transformers(folders["enc"], "sequence-classification", seed=7, quiet=True, num_labels=4,
                             num_hidden_layers=1)
    _, c = load_transformers(folders["enc"], "sequence-classification", seed=8, quiet=True, num_labels=4,
                             num_hidden_layers=1)
    torch.manual_seed(7)
    ref = BertForSequenceClassification.from_pretrained(str(folders["enc"]), num_labels=4, num_hidden_layers=1)
    assert _same_weights(a, b) and _same_weights(a, ref)
    assert not torch.equal(a.classifier.weight, c.classifier.weight)
    assert torch.equal(a.bert.embeddings.word_embeddings.weight, c.bert.embeddings.word_embeddings.weight)
    _, d = load_transformers(folders["enc"], "encoder", device="cpu")
    assert next(d.parameters()).device.type == "cpu"


def test_model_folder_resolves_and_names_the_field(folders, tmp_path) -> None:
    from icml25.llm import ModelFolderError, model_folder

    assert model_folder(f"hf:{folders['mlm']}") == folders["mlm"]
    assert model_folder(f"  {folders['mlm']} ") == folders["mlm"]
    with pytest.raises(ModelFolderError, match=r"^mlm_model: the model folder .*nowhere.* does not exist; pass "
                                               r"--set mlm_model=hf:") as err:
        model_folder("hf:/nowhere/roberta", "mlm_model")
    assert isinstance(err.value, ValueError) and isinstance(err.value, FileNotFoundError)
    assert "\n" not in str(err.value)
    with pytest.raises(FileNotFoundError, match=r"has no config.json; save it first"):
        model_folder(tmp_path, hint="save it first")
    for bad in ("", "  ", 3, None):
        with pytest.raises(TypeError, match="spec must be a model string"):
            model_folder(bad)
    with pytest.raises(ValueError, match=r"encoder: pretrained model 'pretrained:no-such-model' is not available"):
        model_folder("pretrained:no-such-model", "encoder")


def test_pretrained_spec_resolves_to_the_cache_folder(pretrained_folder) -> None:
    from icml25.llm import load_transformers, model_folder

    folder = pretrained_folder("all-minilm-l6-v2")  # skips when the model is not installed
    assert model_folder("pretrained:all-minilm-l6-v2") == Path(folder)
    _, m = load_transformers("pretrained:all-minilm-l6-v2", "encoder", model_type="bert")
    assert type(m).__name__ == "BertModel"


def test_wrong_task_kind_or_type_is_one_clear_error(folders, monkeypatch) -> None:
    from icml25.llm import ModelFolderError, load_transformers

    for bad in ("fill-mask", "", None, 3):
        with pytest.raises(ValueError, match="task must be one of 'causal-lm', 'masked-lm'"):
            load_transformers(folders["mlm"], bad)  # type: ignore[arg-type]
    # a pretrained causal LM asked for as an encoder: refused before anything is built
    with pytest.raises(ValueError, match=r"spec: 'pretrained:gemma-3-270m' is a causal model, not the encoder "
                                         r"model task 'sequence-classification' needs"):
        load_transformers("pretrained:gemma-3-270m", "sequence-classification", field="spec")
    with pytest.raises(ModelFolderError, match="no-such-model"):
        load_transformers("pretrained:no-such-model", "encoder")
    with pytest.raises(ValueError, match=r"holds a 'gpt2' model, expected a 'bert' one; use BERT"):
        load_transformers(folders["gpt2"], "sequence-classification", model_type="bert", hint="use BERT")
    with pytest.raises(ValueError, match=r"spec: .* holds a 'gpt2' model, which transformers cannot load for task "
                                         r"'masked-lm' \(AutoModelForMaskedLM\)") as err:
        load_transformers(folders["gpt2"], "masked-lm")
    assert "\n" not in str(err.value)
    with pytest.raises(FileNotFoundError, match="encoder: the model folder .* does not exist"):
        load_transformers("hf:/nowhere/bert", "encoder", field="encoder")
    with pytest.raises(TypeError, match="seed must be an integer"):
        load_transformers(folders["enc"], "encoder", seed=1.5)
    monkeypatch.setitem(sys.modules, "transformers", None)  # transformers not installed
    from icml25.core.optional import MissingExtraError

    with pytest.raises(MissingExtraError, match=r"pip install 'icml25\[llm\]'"):
        load_transformers(folders["enc"], "encoder")


def test_import_stays_light() -> None:
    import subprocess

    code = ("import sys, icml25.llm as L; L.load_transformers; L.model_folder; "
            "import icml25.mcmc_extrapolation.text_models; print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
