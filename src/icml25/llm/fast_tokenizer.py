"""The ``tokenizers`` (Rust) tokenizer of a transformers folder, without importing transformers.

:class:`~icml25.llm.hf.HFModel` encodes and decodes with it when the folder is known to give the same ids and text
as transformers' ``AutoTokenizer``; ``HFModel.tokenizer`` (the transformers tokenizer, for chat templates and user
code) is then built only when first asked for. That is not automatic: transformers may rebuild a tokenizer's pipeline
from its class (e.g. ``Qwen2Tokenizer`` replaces the pre-tokenizer stored in ``tokenizer.json``), so a folder
qualifies when :func:`verify_fast_tokenizer` compared the two (the icml25 pretrained-model cache does so when it is
built and records the verdict in its marker) or when the caller says so (``HFModel(..., fast_tokenizer=True)``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["FastTokenizer", "load_fast_tokenizer", "verify_fast_tokenizer", "PROBES"]

PROBES = ["Hello world", " leading space", "France -> Paris\nJapan ->", "", "  two  spaces\t\ttab\n\n",
          "unicode: café naïve 日本語 🙂", "<|im_start|>user\nHi<|im_end|>\n", "<bos>x<eos> <pad>", "12345 + 678 = ?",
          "a</answer>b", "don't STOP!!"]

# tokenizer_config.json options with which transformers changes the tokenizer.json pipeline when it loads it
_CHANGING = ("add_bos_token", "add_eos_token", "add_prefix_space", "clean_up_tokenization_spaces", "legacy",
             "do_lower_case", "split_special_tokens")


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _token_text(v: Any) -> str | None:
    if isinstance(v, dict):
        v = v.get("content")
    return v if isinstance(v, str) else None


class FastTokenizer:
    """Encode / decode with a ``tokenizers.Tokenizer`` and the special tokens of ``tokenizer_config.json``.

    Attributes
    ----------
    bos_token_id, eos_token_id, pad_token_id : int or None
    special_text : dict of int to str
        Every special token's id and text (added tokens marked special, plus BOS/EOS/PAD/UNK).
    """

    def __init__(self, tok: Any, config: dict[str, Any]):
        self._tok = tok
        ids = {}
        for kind in ("bos", "eos", "pad", "unk"):
            text = _token_text(config.get(f"{kind}_token"))
            ids[kind] = tok.token_to_id(text) if text is not None else None
        self.bos_token_id, self.eos_token_id, self.pad_token_id = ids["bos"], ids["eos"], ids["pad"]
        special = {int(i): t.content for i, t in tok.get_added_tokens_decoder().items() if t.special}
        for i in ids.values():
            if i is not None:
                special.setdefault(int(i), tok.id_to_token(int(i)))
        self.special_text = special

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return self._tok.encode(text, add_special_tokens=add_special_tokens).ids

    def encode_batch(self, texts: list[str], add_special_tokens: bool = True) -> list[list[int]]:
        return [e.ids for e in self._tok.encode_batch(texts, add_special_tokens=add_special_tokens)]

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return self._tok.decode(ids, skip_special_tokens=skip_special_tokens)

    def token_to_id(self, token: str) -> int | None:
        return self._tok.token_to_id(token)


def load_fast_tokenizer(folder: str | Path) -> FastTokenizer | None:
    """The fast tokenizer of a transformers folder, or None when transformers' tokenizer may behave differently
    (no ``tokenizer.json``, a slow / SentencePiece tokenizer, or load-time options that change the pipeline)."""
    folder = Path(folder)
    path = folder / "tokenizer.json"
    if not path.is_file():
        return None
    cfg = _read(folder / "tokenizer_config.json")
    cls = str(cfg.get("tokenizer_class") or "")
    if cfg.get("backend") != "tokenizers" and not cls.endswith("Fast"):
        return None
    if any(cfg.get(k) for k in _CHANGING):
        return None
    special_map = _read(folder / "special_tokens_map.json")
    merged = {**{k: v for k, v in special_map.items() if k.endswith("_token")}, **cfg}
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return None
    return FastTokenizer(Tokenizer.from_file(str(path)), merged)


def verify_fast_tokenizer(folder: str | Path) -> bool:
    """True when transformers' ``AutoTokenizer`` of ``folder`` runs exactly the pipeline of its ``tokenizer.json``
    (same serialised normaliser, pre-tokeniser, model, post-processor, decoder and added tokens, same special
    tokens) and gives the same ids and text on probe strings. Imports transformers (seconds)."""
    from transformers import AutoTokenizer

    fast = load_fast_tokenizer(folder)
    if fast is None:
        return False
    tok = AutoTokenizer.from_pretrained(str(folder))
    backend = getattr(tok, "backend_tokenizer", None)
    if backend is None or json.loads(backend.to_str()) != json.loads(fast._tok.to_str()):
        return False
    if (tok.bos_token_id, tok.eos_token_id, tok.pad_token_id) != \
            (fast.bos_token_id, fast.eos_token_id, fast.pad_token_id):
        return False
    for text in PROBES:
        for special in (True, False):
            ids = list(tok(text, add_special_tokens=special)["input_ids"])
            if fast.encode(text, special) != ids:
                return False
            for skip in (True, False):
                if fast.decode(ids, skip) != tok.decode(ids, skip_special_tokens=skip):
                    return False
    return True
