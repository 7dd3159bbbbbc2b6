"""One string names any backend: ``tiny:<dir>``, ``hf:<path>``, ``pretrained:<name>`` or
``openai:<base_url>#<model>``."""

from __future__ import annotations

from typing import Any

from .base import LanguageModel

__all__ = ["load_model", "SPEC_FORMS"]

SPEC_FORMS = ("tiny:<dir saved by TinyGPT.save>", "hf:<local transformers model folder>",
              "pretrained:<name>  (gemma-3-270m, smollm2-135m-instruct; see `icml25 models`)",
              "openai:<base_url>#<model>  (e.g. openai:http://localhost:8000/v1#Qwen/Qwen2.5-0.5B-Instruct)")


def load_model(spec: str, **kwargs: Any) -> LanguageModel:
    """Build a language model from a spec string.

    Parameters
    ----------
    spec : str
        ``"tiny:<dir>"`` loads :class:`~icml25.llm.tiny.TinyGPT` from a folder written by ``TinyGPT.save``;
        ``"hf:<path>"`` a :class:`~icml25.llm.hf.HFModel` from a local transformers folder;
        ``"pretrained:<name>"`` an :class:`~icml25.llm.hf.HFModel` of a pretrained model installed from PyPI
        (:mod:`icml25.llm.pretrained`; de-quantised and cached on first use);
        ``"openai:<base_url>#<model>"`` an :class:`~icml25.llm.openai_server.OpenAIServer` client.
    **kwargs
        Passed to the backend's constructor (e.g. ``device="cuda"`` for ``hf:``, ``api_key=...`` for ``openai:``).

    Returns
    -------
    LanguageModel
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a string, got {type(spec).__name__}")
    kind, sep, rest = spec.partition(":")
    kind = kind.strip().lower()
    if not sep or not rest.strip():
        raise ValueError(f"model spec {spec!r} is not one of: " + "; ".join(SPEC_FORMS))
    rest = rest.strip()
    if kind == "tiny":
        from .tiny import TinyGPT

        if kwargs:
            raise TypeError(f"tiny: specs take no keyword arguments, got {sorted(kwargs)}")
        return TinyGPT.load(rest)
    if kind == "hf":
        from .hf import HFModel

        return HFModel(rest, **kwargs)
    if kind == "pretrained":
        from .pretrained import load_pretrained

        return load_pretrained(rest, **kwargs)
    if kind == "openai":
        from .openai_server import OpenAIServer

        base_url, hash_, model = rest.rpartition("#")
        if not hash_ or not base_url or not model:
            raise ValueError(f"model spec {spec!r}: expected openai:<base_url>#<model>, "
                             "e.g. openai:http://localhost:8000/v1#my-model")
        return OpenAIServer(base_url, model, **kwargs)
    raise ValueError(f"unknown model kind {kind!r} in spec {spec!r}; use one of: " + "; ".join(SPEC_FORMS))
