"""Character-, byte- and word-level tokenizers for :class:`~icml25.llm.tiny.TinyGPT`.

The character and byte tokenizers have a padding token and an end-of-text token ``<|eot|>`` that is encoded as one id wherever the
string ``"<|eot|>"`` appears in a text. They save to and load from JSON (:func:`load_tokenizer`).
:class:`WordTokenizer` has a closed vocabulary of whitespace-separated words (for synthetic domains).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from icml25.core.files import FileFormatError, read_json

__all__ = ["PAD", "EOT", "UNK", "CharTokenizer", "ByteTokenizer", "WordTokenizer", "load_tokenizer",
           "tokenizer_from_dict"]

PAD = "<|pad|>"
EOT = "<|eot|>"
UNK = "<|unk|>"


class _SpecialSplitter:
    """Split a text into plain runs and special tokens (longest special first)."""

    def __init__(self, specials: Iterable[str]):
        specials = sorted(set(specials), key=len, reverse=True)
        self.specials = specials
        self.pattern = re.compile("(" + "|".join(re.escape(s) for s in specials) + ")") if specials else None

    def split(self, text: str) -> list[tuple[str, bool]]:
        if self.pattern is None:
            return [(text, False)]
        out: list[tuple[str, bool]] = []
        for i, part in enumerate(self.pattern.split(text)):
            if part:
                out.append((part, i % 2 == 1))
        return out


def _check_text(text: Any, name: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a string, got {type(text).__name__}")
    return text


class _ClosedVocabulary:
    """Ids of a closed vocabulary ``itos`` whose first three entries are ``<|pad|>``, ``<|eot|>``, ``<|unk|>``."""

    itos: list[str]

    @property
    def vocab_size(self) -> int:
        """Number of ids."""
        return len(self.itos)

    @property
    def pad_id(self) -> int:
        """Id of the padding token."""
        return 0

    @property
    def eot_id(self) -> int:
        """Id of the end-of-text token ``<|eot|>``."""
        return 1

    @property
    def unk_id(self) -> int:
        """Id of tokens outside the vocabulary."""
        return 2


class CharTokenizer(_ClosedVocabulary):
    """One token per character, plus special tokens that are encoded atomically.

    Ids: ``0`` = ``<|pad|>``, ``1`` = ``<|eot|>``, ``2`` = ``<|unk|>`` (characters not seen at construction), then
    multi-character ``extra`` tokens, then the sorted characters.

    Parameters
    ----------
    chars : iterable of str
        The single characters of the vocabulary.
    specials : iterable of str, optional
        Additional multi-character tokens encoded as one id each (e.g. ``"<|sep|>"``).
    """

    def __init__(self, chars: Iterable[str], specials: Iterable[str] = ()):
        chars = sorted(set(chars))
        for c in chars:
            if not isinstance(c, str) or len(c) != 1:
                raise ValueError(f"chars must be single characters, got {c!r}")
        extra_specials = [s for s in dict.fromkeys(specials) if s not in (PAD, EOT, UNK)]
        for s in extra_specials:
            if not isinstance(s, str) or len(s) < 2:
                raise ValueError(f"specials must be strings of length >= 2, got {s!r}")
        self.specials = [PAD, EOT, UNK, *extra_specials]
        self.chars = chars
        self.itos: list[str] = self.specials + chars
        self.stoi: dict[str, int] = {s: i for i, s in enumerate(self.itos)}
        self._splitter = _SpecialSplitter(self.specials)

    @classmethod
    def from_texts(cls, texts: Iterable[str], extra: Iterable[str] = ()) -> CharTokenizer:
        """Build the vocabulary from the characters of ``texts``.

        Parameters
        ----------
        texts : iterable of str
            Training texts; every character in them gets an id (special-token strings inside them are not split).
        extra : iterable of str
            More vocabulary: single characters are added as characters (e.g. digits that the texts may lack),
            longer strings become special tokens encoded as one id.
        """
        if isinstance(texts, str):
            texts = [texts]
        extra = [extra] if isinstance(extra, str) else list(extra)
        specials = [e for e in extra if isinstance(e, str) and len(e) > 1]
        splitter = _SpecialSplitter([PAD, EOT, UNK, *specials])
        chars: set[str] = set()
        for i, t in enumerate(texts):
            _check_text(t, f"texts[{i}]")
            for part, special in splitter.split(t):
                if not special:
                    chars.update(part)
        for e in extra:
            if not isinstance(e, str) or not e:
                raise ValueError(f"extra must hold non-empty strings, got {e!r}")
            if len(e) == 1:
                chars.add(e)
        return cls(chars, specials)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (special-token strings become one id; unknown characters the unk id)."""
        _check_text(text)
        ids: list[int] = []
        stoi, unk = self.stoi, self.unk_id
        for part, special in self._splitter.split(text):
            if special:
                ids.append(stoi[part])
            else:
                ids.extend(stoi.get(c, unk) for c in part)
        return ids

    def decode(self, ids: Iterable[int], skip_special: bool = False) -> str:
        """Text of ``ids``; padding is always dropped, other special tokens are kept unless ``skip_special``."""
        itos, n_spec, n = self.itos, len(self.specials), len(self.itos)
        out = []
        for i in ids:
            i = int(i)
            if not 0 <= i < n:
                raise ValueError(f"token id {i} is outside the vocabulary [0, {n})")
            if i == 0 or (skip_special and i < n_spec):
                continue
            out.append(itos[i])
        return "".join(out)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description (inverse of :func:`tokenizer_from_dict`)."""
        return {"type": "char", "chars": self.chars, "specials": self.specials[3:]}

    def save(self, path: str | Path) -> None:
        """Write the tokenizer as JSON to ``path``."""
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False))

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharTokenizer) and other.itos == self.itos


class ByteTokenizer:
    """UTF-8 bytes as ids ``0..255``, then ``<|pad|>`` = 256 and ``<|eot|>`` = 257 (vocabulary 258).

    Any text can be encoded; decoding replaces invalid UTF-8 sequences (e.g. a cut multi-byte character) with
    U+FFFD.
    """

    _splitter = _SpecialSplitter([EOT, PAD])

    @property
    def vocab_size(self) -> int:
        """Number of ids (258)."""
        return 258

    @property
    def pad_id(self) -> int:
        """Id of the padding token (256)."""
        return 256

    @property
    def eot_id(self) -> int:
        """Id of the end-of-text token ``<|eot|>`` (257)."""
        return 257

    def encode(self, text: str) -> list[int]:
        """UTF-8 bytes of ``text``; ``"<|eot|>"`` becomes one id."""
        _check_text(text)
        ids: list[int] = []
        for part, special in self._splitter.split(text):
            if special:
                ids.append(self.eot_id if part == EOT else self.pad_id)
            else:
                ids.extend(part.encode("utf-8"))
        return ids

    def decode(self, ids: Iterable[int], skip_special: bool = False) -> str:
        """Text of ``ids``; padding is dropped, ``<|eot|>`` is written out unless ``skip_special``."""
        out: list[str] = []
        buf = bytearray()
        for i in ids:
            i = int(i)
            if 0 <= i < 256:
                buf.append(i)
                continue
            if i not in (256, 257):
                raise ValueError(f"token id {i} is outside the vocabulary [0, 258)")
            if buf:
                out.append(buf.decode("utf-8", errors="replace"))
                buf = bytearray()
            if i == 257 and not skip_special:
                out.append(EOT)
        if buf:
            out.append(buf.decode("utf-8", errors="replace"))
        return "".join(out)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description."""
        return {"type": "byte"}

    def save(self, path: str | Path) -> None:
        """Write the tokenizer as JSON to ``path``."""
        Path(path).write_text(json.dumps(self.to_dict()))

    def __repr__(self) -> str:
        return "ByteTokenizer()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ByteTokenizer)


_WORD_SPLIT = re.compile(r"\n|[^ \t\r\n]+")


class WordTokenizer(_ClosedVocabulary):
    """Whitespace word tokenizer over a closed vocabulary (``\\n`` is a word of its own).

    Ids ``0``/``1``/``2`` are ``<|pad|>``/``<|eot|>``/``<|unk|>``, then ``words`` in order (duplicates dropped).
    Decoding joins words with single spaces, so ``encode(decode(ids)) == ids`` for ids without unk.

    Parameters
    ----------
    words : iterable of str
        The vocabulary: non-empty strings without whitespace, or ``"\\n"``.
    """

    def __init__(self, words: Iterable[str]) -> None:
        if isinstance(words, str):
            raise TypeError("words must be an iterable of strings, not one string")
        words = list(words)
        for w in words:
            if not isinstance(w, str) or not w or (w != "\n" and _WORD_SPLIT.fullmatch(w) is None):
                raise ValueError(f"vocabulary words must be non-empty strings without spaces, got {w!r}")
        self.itos: list[str] = [PAD, EOT, UNK] + [w for w in dict.fromkeys(words) if w not in (PAD, EOT, UNK)]
        self.stoi: dict[str, int] = {w: i for i, w in enumerate(self.itos)}

    @staticmethod
    def words(text: str) -> list[str]:
        """Split ``text`` into words (``\\n`` is a word)."""
        return _WORD_SPLIT.findall(_check_text(text))

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (unknown words -> the unk id)."""
        stoi = self.stoi
        return [stoi.get(w, 2) for w in _WORD_SPLIT.findall(_check_text(text))]

    def decode(self, ids: Iterable[int], skip_special: bool = False) -> str:
        """Words of ``ids`` joined by single spaces (padding dropped; eot/unk too if ``skip_special``)."""
        out = []
        n = len(self.itos)
        for i in ids:
            i = int(i)
            if not 0 <= i < n:
                raise ValueError(f"token id {i} is outside the vocabulary [0, {n})")
            if i == 0 or (skip_special and i < 3):
                continue
            out.append(self.itos[i])
        return " ".join(out)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description (inverse of :func:`tokenizer_from_dict`)."""
        return {"type": "word", "words": self.itos[3:]}

    def save(self, path: str | Path) -> None:
        """Write the vocabulary as JSON to ``path``."""
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False))

    def __repr__(self) -> str:
        return f"WordTokenizer(vocab_size={self.vocab_size})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WordTokenizer) and other.itos == self.itos


def tokenizer_from_dict(d: dict[str, Any]) -> CharTokenizer | ByteTokenizer | WordTokenizer:
    """Rebuild a tokenizer from the ``to_dict`` output of :class:`CharTokenizer`, :class:`ByteTokenizer` or
    :class:`WordTokenizer`."""
    kind = d.get("type") if isinstance(d, dict) else None
    if kind == "char":
        return CharTokenizer(d["chars"], d.get("specials", ()))
    if kind == "byte":
        return ByteTokenizer()
    if kind == "word":
        return WordTokenizer(d["words"])
    raise ValueError(f"unknown tokenizer description: expected type 'char', 'byte' or 'word', got {kind!r}")


def load_tokenizer(path: str | Path) -> CharTokenizer | ByteTokenizer | WordTokenizer:
    """Load a tokenizer saved with ``save(path)`` (a missing or malformed file raises ``FileNotFoundError`` or
    ``ValueError`` with one line naming it and what was expected)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or Path), got {type(path).__name__}")
    if not str(path).strip():
        raise ValueError("path must be a non-empty file path, got ''")
    path = Path(path)
    what = "a tokenizer JSON written by save() ({'type': 'char' | 'byte' | 'word', ...})"
    if not path.exists():
        raise FileNotFoundError(f"tokenizer file not found: {path}; expected {what}")
    d = read_json(path, what)  # a directory, not UTF-8, not JSON: one line naming the file (and the line)
    try:
        return tokenizer_from_dict(d)
    except (KeyError, ValueError, TypeError) as exc:
        detail = f"no {exc} entry" if isinstance(exc, KeyError) else " ".join(str(exc).split())[:120]
        raise FileFormatError(f"{path}: {detail}; expected {what}") from None
