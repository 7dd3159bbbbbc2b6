"""Argument checks of the llm API that the fuzz registry (bad_input_cases.py) does not reach by kind."""

from __future__ import annotations

import os

import pytest

from icml25.llm import truncate_at_stop
from icml25.llm.base import check_sampling_args


def test_truncate_at_stop_types() -> None:
    assert truncate_at_stop("ab.c", ".") == ("ab", ".")
    with pytest.raises(TypeError, match="text must be a string"):
        truncate_at_stop(3, ["."])
    with pytest.raises(TypeError, match="stop must be a string or a list of strings"):
        truncate_at_stop("abc", [1])


@pytest.mark.parametrize("kwargs,msg", [
    ({"n": 2.0}, "n must be an integer"), ({"max_tokens": 3.0}, "max_tokens must be an integer"),
    ({"max_tokens": -1}, "max_tokens must be >= 0"), ({"temperature": float("inf")}, "temperature must be a finite number"),
    ({"temperature": -0.5}, "temperature must be >= 0"), ({"top_p": 0.0}, r"top_p must be a probability in \(0, 1\]"),
])
def test_sampling_args(kwargs, msg) -> None:
    args = {"n": 1, "temperature": 1.0, "top_p": 1.0, "max_tokens": 4, "stop": None, **kwargs}
    with pytest.raises((TypeError, ValueError), match=msg):
        check_sampling_args(**args)


def test_save_to_empty_path_writes_nothing(tmp_path, monkeypatch) -> None:
    pytest.importorskip("torch")
    from icml25.llm import CharTokenizer, TinyGPT, TinyGPTConfig

    monkeypatch.chdir(tmp_path)
    lm = TinyGPT(TinyGPTConfig(n_layer=1, n_head=2, n_embd=8, block_size=16), CharTokenizer.from_texts(["ab"]))
    with pytest.raises(ValueError, match="directory must be a non-empty folder path"):
        lm.save("")
    assert os.listdir(tmp_path) == []  # before the check, save("") wrote the model into the working directory
    with pytest.raises(TypeError, match="seed"):
        TinyGPT(lm.config, lm.tokenizer, seed="1")
