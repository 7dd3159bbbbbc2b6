"""Bad-input registry of ``icml25.llm`` for the fuzz contract (tests/core/test_bad_input.py).

Models are tiny (one layer, width 8) so every valid call takes milliseconds. ``OpenAIServer`` methods talk to an
in-process mock transport (httpx.MockTransport) that answers the completions schema.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

from icml25.testing import ARRAY, POSITIVE, PROB, REAL, SIZE, TEXT, BadInputCase

_TMP = Path(tempfile.mkdtemp(prefix="icml25-llm-badinput-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
TEXTS = ["abc abc", "cab bca", "a b c"]


def _tok():
    from icml25.llm import CharTokenizer

    return CharTokenizer.from_texts(TEXTS)


def _cfg():
    from icml25.llm import TinyGPTConfig

    return TinyGPTConfig(n_layer=1, n_head=2, n_embd=8, block_size=32)


def _tiny():
    from icml25.llm import TinyGPT

    return TinyGPT(_cfg(), _tok(), seed=0)


def _train_loop_kwargs() -> dict:
    import numpy as np
    import torch

    net = torch.nn.Linear(2, 1)
    x = torch.ones(4, 2)
    return {"module": net, "batch_loss": lambda idx: net(x[idx]).pow(2).mean(), "sample": lambda: np.array([0, 1]),
            "steps": 2, "lr": 1e-3, "warmup": 1, "min_lr_ratio": 0.1, "weight_decay": 0.1, "grad_clip": 1.0,
            "torch_seed": 3}


def _buckets_kwargs() -> dict:
    import numpy as np

    return {"lengths": [3, 5, 2, 4], "batch_size": 2, "rng": np.random.default_rng(0)}


@functools.cache
def _saved_tiny() -> str:
    d = _TMP / "tiny"
    _tiny().save(d)
    return str(d)


@functools.cache
def _saved_gpt2() -> str:
    from icml25.llm import save_random_gpt2

    d = _TMP / "gpt2"
    if not (d / "config.json").is_file():  # the save_random_gpt2 case's valid call usually wrote it already
        save_random_gpt2(d, TEXTS * 3, n_layer=1, n_embd=8, n_head=2, n_positions=32, vocab_size=280)
    return str(d)


@functools.cache
def _hf():
    from icml25.llm import HFModel

    return HFModel(_saved_gpt2())


def _fresh_hf():  # finetune / attach_lora inject LoRA layers into the network: a new model per call
    from icml25.llm import HFModel

    return HFModel(_saved_gpt2())


def _finetune_kwargs() -> dict:
    return {"model": _fresh_hf(), "data": [("ab", "c"), ([1, 2], [3, 4])], "steps": 2, "lr": 1e-3, "batch_size": 2,
            "r": 2, "alpha": 4.0, "lora_dropout": 0.1, "max_length": 16, "warmup": 1, "min_lr_ratio": 0.1,
            "weight_decay": 0.01, "grad_clip": 1.0, "seed": 1}


def _answer_batch_kwargs() -> dict:
    return {"pairs": [([1, 2], [3]), ([4], [5, 6], [True, False])], "pad_id": 0, "eos": 2, "max_length": 8}


def _mock_response(request):  # type: ignore[no-untyped-def]
    import httpx

    body = json.loads(request.content)
    prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
    echo = bool(body.get("echo"))
    choices = []
    for p in prompts:
        for _ in range(body.get("n", 1)):
            context = (p if echo else "") + "ab"
            lp = {"tokens": list(context), "token_logprobs": [-0.1] * len(context),
                  "top_logprobs": [{"a": -0.1, "b": -2.0}] * len(context), "text_offset": list(range(len(context)))}
            choices.append({"index": len(choices), "text": context, "logprobs": lp, "finish_reason": "length"})
    return httpx.Response(200, json={"choices": choices})


def _server():
    import httpx

    from icml25.llm import OpenAIServer

    srv = OpenAIServer("http://localhost:1/v1", "mock")
    srv._client = httpx.Client(transport=httpx.MockTransport(_mock_response))
    return srv


def _gen_kwargs():
    return {"prompts": ["ab", "c"], "n": 2, "temperature": 0.7, "top_p": 0.9, "max_tokens": 3, "seed": 1}


CASES = [
    BadInputCase("Generation", skip="a result record that the backends build; it takes no user input"),
    BadInputCase("truncate_at_stop", lambda: {"text": "abc. def", "stop": ["."]}),
    BadInputCase("validate_prompts", lambda: {"prompts": ["a", "b"]}),
    BadInputCase("TinyGPTConfig", lambda: {"n_layer": 1, "n_head": 2, "n_embd": 8, "block_size": 32, "dropout": 0.1},
                 {"n_layer": SIZE, "n_head": SIZE, "n_embd": SIZE, "block_size": SIZE, "dropout": PROB}),
    BadInputCase("TinyGPTModule", lambda: {"cfg": _cfg(), "vocab_size": 12}, {"vocab_size": SIZE}),
    BadInputCase("TinyGPT", lambda: {"config": _cfg(), "tokenizer": _tok(), "seed": 3}),
    BadInputCase("TinyGPT.fit", lambda: {"texts": TEXTS, "steps": 2, "batch_size": 2, "lr": 1e-3, "warmup": 1,
                                         "weight_decay": 0.1, "min_lr_ratio": 0.1, "progress": False},
                 {"steps": SIZE, "batch_size": SIZE, "lr": POSITIVE, "warmup": REAL, "weight_decay": REAL,
                  "min_lr_ratio": PROB}, obj=_tiny),
    BadInputCase("train_loop", _train_loop_kwargs,
                 {"steps": SIZE, "lr": POSITIVE, "warmup": REAL, "min_lr_ratio": PROB, "weight_decay": REAL,
                  "grad_clip": REAL, "torch_seed": REAL}),
    BadInputCase("LengthBuckets", _buckets_kwargs, {"lengths": ARRAY, "batch_size": SIZE}),
    BadInputCase("LengthBuckets.draw", lambda: {}, obj=lambda: __import__("icml25.llm").llm
                 .LengthBuckets(**_buckets_kwargs())),
    BadInputCase("TinyGPT.generate", _gen_kwargs, {"n": SIZE, "temperature": REAL, "top_p": PROB}, obj=_tiny),
    BadInputCase("TinyGPT.logprobs", lambda: {"prompts": ["ab"], "continuations": ["c"]}, obj=_tiny),
    BadInputCase("TinyGPT.next_token_logits", lambda: {"prompts": ["ab", "c"]}, obj=_tiny),
    BadInputCase("TinyGPT.hidden_states", lambda: {"prompts": ["ab"]}, obj=_tiny),
    BadInputCase("TinyGPT.num_parameters", lambda: {}, obj=_tiny),
    BadInputCase("TinyGPT.to", lambda: {"device": "cpu"}, obj=_tiny),
    BadInputCase("TinyGPT.save", lambda: {"directory": str(_TMP / "saved")}, {"directory": TEXT}, obj=_tiny),
    BadInputCase("TinyGPT.load", lambda: {"directory": _saved_tiny()}, {"directory": TEXT}),
    BadInputCase("CharTokenizer", lambda: {"chars": "abc", "specials": ["<|sep|>"]}),
    BadInputCase("CharTokenizer.from_texts", lambda: {"texts": TEXTS, "extra": ["0"]}),
    BadInputCase("CharTokenizer.encode", lambda: {"text": "abc"}, obj=_tok),
    BadInputCase("CharTokenizer.decode", lambda: {"ids": [3, 4]}, obj=_tok),
    BadInputCase("ByteTokenizer", lambda: {}),
    BadInputCase("WordTokenizer", lambda: {"words": ["a", "b", "\n"]}),
    BadInputCase("WordTokenizer.encode", lambda: {"text": "a b"}, obj=lambda: __import__("icml25.llm").llm
                 .WordTokenizer(["a", "b"])),
    BadInputCase("WordTokenizer.decode", lambda: {"ids": [3, 4]}, obj=lambda: __import__("icml25.llm").llm
                 .WordTokenizer(["a", "b"])),
    BadInputCase("ByteTokenizer.encode", lambda: {"text": "abc"}, obj=lambda: __import__("icml25.llm").llm
                 .ByteTokenizer()),
    BadInputCase("ByteTokenizer.decode", lambda: {"ids": [97, 257]}, obj=lambda: __import__("icml25.llm").llm
                 .ByteTokenizer()),
    BadInputCase("load_tokenizer", lambda: {"path": str(Path(_saved_tiny()) / "tokenizer.json")}, {"path": TEXT}),
    BadInputCase("load_model", lambda: {"spec": f"tiny:{_saved_tiny()}"}, {"spec": TEXT}),
    BadInputCase("load_configured_model", lambda: {"spec": f"tiny:{_saved_tiny()}", "field": "model",
                                                   "paper": "demo"}, {"spec": TEXT}),
    BadInputCase("sample_shared_prefix", lambda: {"lm": _tiny(), "prompts": ["ab", "c"], "n": 2, "temperature": 1.0,
                                                  "max_tokens": 4, "stop_ids": [1], "seed": 0},
                 {"n": SIZE, "temperature": REAL, "max_tokens": SIZE}),
    BadInputCase("prefix_hidden_states", lambda: {"module": _tiny().module, "pad_id": 0, "prefix_rows": [[1, 3, 4]],
                                                  "row_of": [0, 0], "step_ids": [[5], [3, 4]]}),
    BadInputCase("save_random_gpt2", lambda: {"directory": str(_TMP / "gpt2"), "corpus": TEXTS * 3, "n_layer": 1,
                                              "n_embd": 8, "n_head": 2, "n_positions": 32, "vocab_size": 280,
                                              "initializer_range": 0.02},
                 {"directory": TEXT, "n_layer": SIZE, "n_embd": SIZE, "n_head": SIZE, "n_positions": SIZE,
                  "vocab_size": SIZE, "initializer_range": POSITIVE}),
    BadInputCase("HFModel", lambda: {"path": _saved_gpt2()}, {"path": TEXT}),
    BadInputCase("HFModel.generate", _gen_kwargs, {"n": SIZE, "temperature": REAL, "top_p": PROB}, obj=_hf),
    BadInputCase("HFModel.logprobs", lambda: {"prompts": ["ab"], "continuations": ["c"]}, obj=_hf),
    BadInputCase("HFModel.next_token_logits", lambda: {"prompts": ["ab"]}, obj=_hf),
    BadInputCase("HFModel.expand", lambda: {"prefixes": ["ab", [3, 4]], "n_children": 2, "max_tokens": 3,
                                            "temperature": 0.7, "top_p": 0.9, "seed": 1},
                 {"n_children": SIZE, "temperature": REAL, "top_p": PROB}, obj=_hf),
    BadInputCase("HFModel.score_continuations", lambda: {"prefix": "ab", "continuations": ["c", [3, 4]]}, obj=_hf),
    BadInputCase("expand", lambda: {"lm": _tiny(), "prefixes": ["ab", "c"], "n_children": 2, "max_tokens": 3,
                                    "temperature": 0.7, "top_p": 0.9, "seed": 1},
                 {"n_children": SIZE, "temperature": REAL, "top_p": PROB}),
    BadInputCase("NextTokenLogprobs", lambda: {"model": _hf(), "batch_size": 4, "incremental": 2},
                 {"batch_size": SIZE}),
    BadInputCase("OpenAIServer", lambda: {"base_url": "http://localhost:8000/v1", "model": "m", "timeout": 5.0,
                                          "batch_size": 4},
                 {"base_url": TEXT, "model": TEXT, "timeout": POSITIVE, "batch_size": SIZE}),
    BadInputCase("OpenAIServer.generate", _gen_kwargs, {"n": SIZE, "temperature": REAL, "top_p": PROB}, obj=_server),
    BadInputCase("OpenAIServer.logprobs", lambda: {"prompts": ["ab"], "continuations": ["c"]}, obj=_server),
    BadInputCase("OpenAIServer.top_logprobs", lambda: {"prompts": ["ab"], "k": 2}, {"k": SIZE}, obj=_server),
    BadInputCase("OpenAIServer.next_token_logits", lambda: {"prompts": ["ab"], "vocab": ["a", "b"]}, obj=_server),
]

# pretrained models (issue 17): the valid calls use the shared cache (built once, see tests/llm/conftest.py)
CASES += [
    # the first call on a machine converts the GGUF weights into the cache (over a minute on 2 loaded cores)
    BadInputCase("pretrained_path", lambda: {"name": "smollm2-135m-instruct", "progress": False}, bad={"name": TEXT},
                 valid_limit_s=600.0),
    BadInputCase("load_encoder", lambda: {"spec": "pretrained:all-minilm-l6-v2", "progress": False},
                 bad={"spec": TEXT}),
    BadInputCase("known_models", skip="takes no arguments"),
    BadInputCase("finetune", _finetune_kwargs,
                 {"steps": SIZE, "lr": POSITIVE, "batch_size": SIZE, "r": SIZE, "alpha": POSITIVE, "lora_dropout": PROB,
                  "max_length": SIZE, "warmup": REAL, "min_lr_ratio": PROB, "weight_decay": REAL, "grad_clip": REAL,
                  "seed": REAL}),
    BadInputCase("attach_lora", lambda: {"model": _fresh_hf(), "r": 2, "alpha": 4.0, "lora_dropout": 0.1,
                                         "seed": 0}, {"r": SIZE, "alpha": POSITIVE, "lora_dropout": PROB, "seed": REAL}),
    BadInputCase("lora_parameters", lambda: {"model": __import__("icml25.llm").llm.attach_lora(_fresh_hf(), r=2),
                                             "adapter": "default"}, {"adapter": TEXT}),
    BadInputCase("answer_batch", _answer_batch_kwargs, {"pad_id": REAL, "eos": REAL, "max_length": SIZE}),
    BadInputCase("answer_loss", lambda: {"model": _hf().model,
                                         "batch": __import__("icml25.llm").llm.answer_batch([([1, 2], [3])])}),
    BadInputCase("FineTuned", skip="the result record of finetune; it takes no user input"),
    BadInputCase("AnswerBatch", skip="a batch record that answer_batch builds; it takes no user input"),
]

# one loader of local transformers checkpoints (issue 43)
CASES += [
    BadInputCase("load_transformers", lambda: {"spec": _saved_gpt2(), "task": "causal-lm", "model_type": "gpt2"},
                 bad={"spec": TEXT, "task": TEXT, "model_type": TEXT}),
    BadInputCase("model_folder", lambda: {"spec": f"hf:{_saved_gpt2()}"}, bad={"spec": TEXT}),
]
