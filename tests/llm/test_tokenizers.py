"""Character and byte tokenizers: round trips, special tokens, persistence, errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icml25.llm.tokenizers import EOT, ByteTokenizer, CharTokenizer, WordTokenizer, load_tokenizer


def test_char_roundtrip_and_specials():
    tok = CharTokenizer.from_texts(["hello world", "abc"], extra=["0", "<|sep|>"])
    assert tok.pad_id == 0 and tok.eot_id == 1
    ids = tok.encode("hello<|eot|>abc<|sep|>0")
    assert ids.count(tok.eot_id) == 1
    assert len(ids) == 5 + 1 + 3 + 1 + 1  # specials are one id each
    assert tok.decode(ids) == "hello<|eot|>abc<|sep|>0"
    assert tok.decode(ids, skip_special=True) == "helloabc0"
    assert tok.decode([tok.pad_id, *tok.encode("ab")]) == "ab"
    assert tok.vocab_size == len(set("hello worldabc0")) + 4  # pad, eot, unk, <|sep|>


def test_char_unknown_character_maps_to_unk():
    tok = CharTokenizer.from_texts(["ab"])
    assert tok.encode("az") == [tok.encode("a")[0], tok.unk_id]


@settings(max_examples=30, deadline=None)
@given(st.text(max_size=40))
def test_byte_roundtrip(text):
    tok = ByteTokenizer()
    ids = tok.encode(text)
    assert all(0 <= i < tok.vocab_size for i in ids)
    assert tok.decode(ids) == text


def test_byte_eot_is_one_id():
    tok = ByteTokenizer()
    assert tok.encode(f"é{EOT}") == [0xC3, 0xA9, 257]
    assert tok.decode([0xC3]) == "\ufffd"  # a cut multi-byte character is replaced, never raises


def test_word_tokenizer():
    tok = WordTokenizer(["x", "=", "y", "\n", "x"])  # duplicates dropped
    assert tok.vocab_size == 7 and tok.itos[:3] == ["<|pad|>", "<|eot|>", "<|unk|>"]
    ids = tok.encode("x = y \n zz <|eot|>")
    assert ids == [3, 4, 5, 6, tok.unk_id, tok.eot_id]
    assert tok.decode([3, 4, 5, 0, 6]) == "x = y \n"  # padding dropped, words joined by single spaces
    assert tok.encode(tok.decode(ids)) == ids
    assert tok.decode(ids, skip_special=True) == "x = y \n"
    with pytest.raises(ValueError, match="without spaces"):
        WordTokenizer(["a b"])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([99])


@pytest.mark.parametrize("tok", [CharTokenizer.from_texts(["xyz\n"], extra=["<|a|>"]), ByteTokenizer(),
                                 WordTokenizer(["xy", "<|eot|>", "\n"])])
def test_save_load(tmp_path, tok):
    tok.save(tmp_path / "tok.json")
    back = load_tokenizer(tmp_path / "tok.json")
    assert back == tok
    assert back.encode("xy<|eot|>") == tok.encode("xy<|eot|>")


def test_errors():
    with pytest.raises(TypeError, match="text must be a string"):
        CharTokenizer.from_texts(["a"]).encode(3)
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        CharTokenizer.from_texts(["a", None])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        ByteTokenizer().decode([300])
    with pytest.raises(FileNotFoundError, match="tokenizer file not found"):
        load_tokenizer("/nonexistent/tok.json")


def test_warmup_cosine_schedule() -> None:
    import math

    from icml25.llm.schedule import warmup_cosine_lr

    assert warmup_cosine_lr(0, 100, 1.0, 10) == 0.1
    assert warmup_cosine_lr(9, 100, 1.0, 10) == 1.0
    assert warmup_cosine_lr(10, 100, 1.0, 10) == 1.0
    assert math.isclose(warmup_cosine_lr(100, 100, 1.0, 10), 0.1)
    vals = [warmup_cosine_lr(s, 100, 1.0, 10) for s in range(10, 101)]
    assert all(a >= b for a, b in zip(vals, vals[1:]))
